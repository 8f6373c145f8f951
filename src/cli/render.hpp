// Rendering helpers shared by the commands: text for people. The JSON documents
// of the reports are analysis/report_json.hpp's.
#pragma once

#include "style.hpp"

#include "wheelfix/analysis/abi_rules.hpp"
#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/analysis/profile_findings.hpp"
#include "wheelfix/repair/variant.hpp"
#include "wheelfix/util/text.hpp"

#include <string>

namespace wheelfix::cli {

std::string human_size(std::uint64_t bytes);  // "812 KiB", "541.2 MiB"
// `lines` with each repeated line kept once, in first-seen order, and marked with how
// many it stands for: the complete and base constructors (C1, C2) or destructors of
// one class demangle alike, so a per-symbol list would say the same thing twice.
std::vector<std::string> once_each(const std::vector<std::string>& lines);

using analysis::TargetFindings;

// Text for people; `colour` marks what fails and passes (style.hpp), off by default.
std::string render_text(const analysis::ElfReport& report, bool verbose, const Palette& colour = Palette(false));
std::string render_text(const analysis::WheelReport& report, bool verbose, const Palette& colour = Palette(false));
std::string render_text(const TargetFindings& target, const Palette& colour = Palette(false));
// Every NEEDED per member (and grafted library): library, class, where it resolves.
std::string libraries_text(const analysis::NeededResolution& libraries);
// The table rows "member | library | class | resolves to", for text and Markdown.
std::vector<std::vector<std::string>> library_rows(const analysis::NeededResolution& libraries);

// The phrases the text renderings are made of, for other renderings (Markdown).
std::string needs_text(const policy::NeededVersions& needs);            // "GLIBC_2.34 GLIBCXX_3.4.29"
using analysis::abi_concerns;  // what the file's imports and ISA note cost its platform tag
std::string search_path_text(const analysis::ElfReport& report);        // entries with [absolute] marks
std::string fatbin_text(const std::vector<cuda::FatbinEntry>& entries);  // "cubin sm_100a x12, PTX sm_90"
std::string blackwell_text(const std::vector<analysis::GpuSupport>& support, const Palette& colour = Palette(false));
std::string module_support_text(const analysis::CudaModule& module, const Palette& colour = Palette(false));
// One coverage row: "sm_90 yes (sm90/: cubin sm_90a); sm_100 NO" after its name
// (a variant's indented).
std::string coverage_text(const analysis::CoverageRow& row, const Palette& colour = Palette(false));
std::string record_text(const analysis::WheelReport& report);
// The variant a writer (repair, retag, shim) labelled its output as: "variant 'L'
// (variant.json schema S)" and a line per property, indented.
std::vector<std::string> variant_lines(const repair::VariantOutcome& variant);          // "ok (12 files hashed)"
// The wheel's honest tag as a verdict: "manylinux_2_17", "no manylinux tag fits", or
// "linux_x86_64 as it stands: needs libraries from outside the wheel (its symbols
// alone allow manylinux_2_5)".
std::string platform_verdict(const analysis::WheelReport& report);
// One phrase per outside library (WheelReport::outside_libraries): what it is, who
// needs it, and what `repair` does about it (grafts it, or refuses: missing).
std::vector<std::string> outside_library_texts(const analysis::WheelReport& report);
// "torch (libc10.so, libtorch_cpu.so), nvidia-cuda-runtime (libcudart.so.13), the GPU
// driver (libcuda.so.1)": what other distributions or the driver provide, which costs
// the tag nothing; "" when nothing is.
std::string provided_beside_text(const analysis::NeededResolution& libraries);

}  // namespace wheelfix::cli
