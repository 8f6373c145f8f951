// The inspect reports (elf_report.hpp, wheel_report.hpp, profile_findings.hpp) as
// text for people, and the phrases those texts are made of, for the other text
// renderings (report_markdown.hpp, the CLI's summaries). Their JSON documents are
// report_json.hpp's. One module per output format of one record: this is the text.
//
// Contract: each function is pure: the same report gives the same bytes; nothing is
// read or printed here, and every verdict a text states (a tag, what repair does about
// an outside library) comes from the report's fields. `colour` marks what fails and passes
// (util/palette.hpp); the CLI chooses whether it is enabled, off by default.
#pragma once

#include "wheelfix/analysis/abi_rules.hpp"
#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/analysis/profile_findings.hpp"
#include "wheelfix/util/palette.hpp"
#include "wheelfix/util/text.hpp"

#include <string>

namespace wheelfix::analysis {

// `lines` with each repeated line kept once, in first-seen order, and marked with how
// many it stands for: the complete and base constructors (C1, C2) or destructors of
// one class demangle alike, so a per-symbol list would say the same thing twice.
std::vector<std::string> once_each(const std::vector<std::string>& lines);

// Text for people, one block per report.
std::string render_text(const ElfReport& report, bool verbose, const Palette& colour = Palette(false));
std::string render_text(const WheelReport& report, bool verbose, const Palette& colour = Palette(false));
std::string render_text(const TargetFindings& target, const Palette& colour = Palette(false));
// The table rows "member | library | class | resolves to", for text and Markdown.
std::vector<std::vector<std::string>> library_rows(const NeededResolution& libraries);

// The phrases the text renderings are made of, for other renderings (Markdown).
std::string needs_text(const policy::NeededVersions& needs);            // "GLIBC_2.34 GLIBCXX_3.4.29"
// (what a file's imports and ISA note cost its platform tag is abi_rules.hpp's abi_concerns)
std::string search_path_text(const ElfReport& report);        // entries with [absolute] marks
std::string fatbin_text(const std::vector<cuda::FatbinEntry>& entries);  // "cubin sm_100a x12, PTX sm_90"
std::string blackwell_text(const std::vector<GpuSupport>& support, const Palette& colour = Palette(false));
std::string module_support_text(const CudaModule& module, const Palette& colour = Palette(false));
// One coverage row: "sm_90 yes (sm90/: cubin sm_90a); sm_100 NO" after its name
// (a variant's indented).
std::string coverage_text(const CoverageRow& row, const Palette& colour = Palette(false));
std::string record_text(const WheelReport& report);  // "ok (12 files hashed)"
// The wheel's honest tag as a verdict: "manylinux_2_17", "no manylinux tag fits", or
// "linux_x86_64 as it stands: needs libraries from outside the wheel (its symbols
// alone allow manylinux_2_5)".
std::string platform_verdict(const WheelReport& report);
// One phrase per outside library (WheelReport::outside_libraries): what it is, who
// needs it, and what `repair` does about it (grafts it, or refuses: missing).
std::vector<std::string> outside_library_texts(const WheelReport& report);
// "torch (libc10.so, libtorch_cpu.so), nvidia-cuda-runtime (libcudart.so.13), the GPU
// driver (libcuda.so.1)": what other distributions or the driver provide, which costs
// the tag nothing; "" when nothing is.
std::string provided_beside_text(const NeededResolution& libraries);

}  // namespace wheelfix::analysis
