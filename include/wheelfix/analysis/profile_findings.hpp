// Judging a wheel (or one ELF file) against a target profile (policy/profile.hpp):
// the list of what keeps it from running on the profile's machines. The profile
// is policy data; judging a report against it is analysis, so this lives here
// (policy never includes analysis).
//
// Contract: evaluate(profile, report) reads only the report and returns findings
// in this order: CUDA runtime (per ELF file), SM coverage (per CUDA module,
// analysis/modules.hpp), ABI policy (per ELF file), platform tag (per tag of the
// file name), RUNPATH (per ELF file). Nothing found: an empty list. Rules:
// - cudart: an ELF file whose NEEDED libcudart.so.N has N other than the
//   profile's major. Files without libcudart in NEEDED (no CUDA, or a static
//   runtime) are not judged.
// - sm: a CUDA module that runs on none of its variants for a profile SM (coverage
//   per cuda/coverage.hpp); one finding per module naming every missing SM and the
//   code the module does have. Files without fatbins are not CUDA modules.
// - blacklist, pyfpe, ucs2, isa: one finding per fact of an ELF file that costs it
//   platform tags (analysis/abi_rules.hpp: a blacklisted symbol, PyFPE_jbuf, a UCS2
//   import, an x86-64 level above the baseline), naming the lowest tag the fact
//   allows or that none does; in a wheel, a fact some tag allows is a finding only
//   while a tag of the file name is older than that (repair's output, retagged, has
//   none left). repair_fixes when some tag allows the fact (repair sets the honest
//   tag, which has already dropped for it), otherwise only a rebuild removes it.
// - platform: a manylinux/musllinux/linux tag of the file name that is older than
//   the profile's min-platform, of the other libc family, not a manylinux tag at all
//   (linux_*), or that promises less than the binaries need (WheelReport's claim).
//   Tags that are not Linux platform tags ("any") are not judged.
// - runpath: an ELF file that links CUDA or torch libraries whose RUNPATH (else
//   RPATH) lacks one of the profile's rpath directories, expanded for the member's
//   depth exactly as `relink`/`repair` expand "{root}" (repair::expand_root).
// repair_fixes says whether `wheelfix repair` can remove the finding (RUNPATH,
// platform tags when an honest tag exists, a libcudart the profile maps with
// replace-needed); missing device code and a wrong runtime need a rebuild.
#pragma once

#include "wheelfix/analysis/modules.hpp"
#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/policy/profile.hpp"

#include <string>
#include <vector>

namespace wheelfix::analysis {

struct Finding {
    enum class Kind { cuda_runtime, sm, platform, runpath, blacklist, pyfpe, ucs2, isa };
    Kind kind = Kind::sm;
    std::string member;   // ELF member, module name, or the platform tag concerned
    std::string message;  // one line, names the member and the profile
    bool repair_fixes = false;
};

const char* kind_name(Finding::Kind kind);  // "cudart", "sm", "platform", "runpath", "blacklist", ...

std::vector<Finding> evaluate(const policy::Profile& profile, const WheelReport& report);
// A bare ELF file (not in a wheel): runtime, SM coverage of the file, ABI policy, RUNPATH with
// {root} = $ORIGIN; no platform tag to judge.
std::vector<Finding> evaluate(const policy::Profile& profile, const ElfReport& report);

// The platform tag `repair` should give the wheel: its honest tag raised to the
// profile's min-platform, with the wheel's architecture ("manylinux_2_34_x86_64");
// empty when the wheel has no ELF files or no tag fits.
std::string target_platform_tag(const policy::Profile& profile, const WheelReport& report);

// The profile's rpath directories that `elf`'s search path does not reach, expanded
// for a member `depth` directories deep ("$ORIGIN/../../torch/lib"); none for a
// member that links neither torch nor CUDA (its search path is not the profile's
// business, and repair leaves it alone).
std::vector<std::string> missing_search_path(const policy::Profile& profile, const ElfReport& elf, int depth);

// What --target found for one input; profile null when no profile was asked for.
struct TargetFindings {
    const policy::Profile* profile = nullptr;
    std::vector<Finding> findings;
    std::vector<CoverageRow> coverage;  // the profile's SMs per module and variant
};

}  // namespace wheelfix::analysis
