// The torch verdict: from a wheel's release matrix and what the wheel itself says,
// which torch it needs — the one function behind inspect's torch range, `check
// --torch-release`, `retag --torch auto` and `repair --torch auto`.
//
// Contract:
// - torch_claims(wheel) reads what the wheel says of its torch: the torch named by
//   its local version ("+torch2.9", "+torch29", "+pt29", "+cu128torch2.9" style) or,
//   else, by an unconditional Requires-Dist on torch that names one minor
//   ("torch==2.9.1", "torch==2.9.*", "torch~=2.9.0") — `built_for`; the author's
//   range (every unconditional Requires-Dist on torch, intersected; `author_meets` is
//   false when they cannot meet); the names of every Requires-Dist (normalised),
//   which provide libraries beside torch (nvidia-cuda-runtime-cu12 → libcudart.so.12).
//   torch_claims_of(path) does that for a wheel path, and gives empty claims for an
//   ELF file.
// - cuda_runtime_needs(needed) are the CUDA libraries a member NEEDs whose SONAME
//   major is the CUDA major (libcudart, libnvrtc, libcublas, libcublasLt,
//   libnvJitLink), with the distribution that ships them beside torch.
// - torch_verdict(matrix, stable, claims, mode) admits the columns that are ok
//   (torch_matrix.hpp: symbols, CUDA runtime and CPython) and
//   * for a C++-ABI extension (any mangled torch symbol or THP* function): only the
//     minor it was built for — `built_for`, else the minor of the lowest release
//     whose symbols all resolve — because class layouts, inline code and schemas
//     change between minors without a symbol changing;
//   * for a stable-ABI-only extension: every release that is ok (floor from the
//     functions it uses, ceiling where the CUDA runtime major changes);
//   * with mode range (`--pin range`, asked by name): every release that is ok, and
//     `symbol_level_only` says so;
//   then only those the author's range admits and, whatever the kind and mode, none
//   older than the newest release torch's own stable ABI version list
//   (abi/stable_versions.hpp) states for a stable function the wheel imports
//   (`stable_floor`, `stable_floor_function`; later than the atlas's first export of
//   it, the list wins). The pin is the newest contiguous run of admitted columns:
//   ">=lowest", "<" the first release after the run (or the next minor for a C++
//   extension, nothing for a stable-ABI one, when the run reaches the newest
//   column), intersected with the author's range. No admitted column is a finding
//   (`any` false, `finding` says why: nothing resolves, the built-for minor does
//   not, none from the stated floor does, or the author's range and the linkable
//   one do not meet), never a pin.
// - runtime_requirements(needed, shipped, torch_cuda_version, claims): what `repair
//   --add-runtime-requires` adds to METADATA: for each CUDA library in `needed`
//   (cuda_runtime_needs) whose major is not the CUDA major of the torch build the wheel
//   is pinned to ("13.0"; empty: a CPU build or unknown, which brings none), the
//   distribution that ships it bounded to that major ("nvidia-cuda-runtime-cu12>=12,<13",
//   "nvidia-cuda-runtime>=13,<14"), once per distribution. None for a library among
//   `shipped` (the wheel's own) or a distribution any Requires-Dist already names, with
//   whatever bound or marker: an author's line is never duplicated nor loosened.
// - why_not_admitted(verdict, release): one verdict for every output: a release whose
//   symbols resolve is "ok" only where the pin admits it; otherwise the reason, most
//   telling first: no pin (the finding), a C++-ABI extension's other minor ("built for
//   2.8"), a release before the stated stable floor, the author's range, outside the
//   pin's run.
#pragma once

#include "wheelfix/analysis/torch_matrix.hpp"
#include "wheelfix/wheel/metadata.hpp"
#include "wheelfix/wheel/version.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::wheel {
class Wheel;
}

namespace wheelfix::analysis {

struct TorchClaims {
    std::optional<wheel::Version> built_for;  // the torch release (or minor) the wheel names
    std::string built_for_source;             // "local version +torch2.9", "METADATA torch==2.9.1"
    wheel::SpecifierSet author;               // unconditional Requires-Dist: torch, intersected
    bool author_meets = true;                 // false: the author's own clauses cannot meet
    std::vector<wheel::Requirement> requires_dist;  // every Requires-Dist

    // Whether a Requires-Dist names the distribution (names as PEP 503 normalises them).
    bool names(std::string_view distribution) const;
};
TorchClaims torch_claims(const wheel::Wheel& wheel);
TorchClaims torch_claims_of(const std::string& path);
// The torch a local version label names ("torch2.9", "torch29", "pt29", "torch2.9.1"); nullopt when none.
std::optional<wheel::Version> torch_from_local(const std::vector<std::string>& local_segments);

struct CudaRuntimeNeed {
    std::string library;       // "libcudart.so.12"
    int major = 0;             // 12
    std::string distribution;  // "nvidia-cuda-runtime-cu12"
};
std::vector<CudaRuntimeNeed> cuda_runtime_needs(const std::vector<std::string>& needed);

struct RuntimeRequirement {
    wheel::Requirement requirement;  // "nvidia-cuda-runtime-cu12>=12,<13": name, the distribution
    std::string library;             // "libcudart.so.12": the first NEEDED it brings
};
std::vector<RuntimeRequirement> runtime_requirements(const std::vector<std::string>& needed,
                                                     const std::vector<std::string>& shipped,
                                                     const std::string& torch_cuda_version, const TorchClaims& claims);

enum class PinMode { truth, range };

TorchRequirement torch_verdict(const TorchMatrix& matrix, const StableAbiUse& stable, const TorchClaims& claims,
                               PinMode mode = PinMode::truth);

struct NotAdmitted {
    std::string brief;  // "built for 2.8", "author excludes", "outside the pin", "no pin": a matrix cell
    std::string why;    // "symbols resolve, but built for torch 2.8 (C++ ABI, METADATA torch==2.8.0): not ok"
};
// Why the verdict does not admit a release (a column's torch version, "2.9.1+cu128") whose
// symbols resolve and install matches; nullopt when its pin admits it.
std::optional<NotAdmitted> why_not_admitted(const TorchRequirement& verdict, const std::string& torch_version);

}  // namespace wheelfix::analysis
