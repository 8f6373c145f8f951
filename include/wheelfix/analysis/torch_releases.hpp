// Checking a wheel against torch releases from atlases: the matrix behind
// `check --torch-release`, `retag --torch auto`, `repair --torch auto` and
// inspect's torch range. The commands only parse options and render.
//
// Contract:
// - wheel_facts(input): what the wheel's file name says the atlas must match: its
//   arch (platform tag; this machine's for an ELF file or a tag naming none), its
//   CPython ABI tag (cpXY from the abi tag; "" for abi3/none) and its +cuXYZ local
//   segment.
// - release_request(spec, paths) splits --torch / --torch-from paths into atlases
//   and the rest; the bundled atlas joins when the spec is given (`check
//   --torch-release`) or no atlas is (`--torch auto` alone).
// - check_releases() resolves the targets against every release the spec selects
//   (torch_matrix.hpp) from the user atlases given and the bundled one (unless
//   with_bundled is false), for the wheel's arch and CPython ABI tag (abi3/none take
//   each release's primary libtorch_python), then against each other torch path
//   (loaded by `load`) as a column of its own. Of a release's builds (2.6.0+cu124 and
//   +cu126; a build two atlases hold is the first's, a user atlas before the bundled
//   one) the column takes the one --torch-release names exactly ("2.6.0+cu126"), else
//   the one the wheel's +cuXYZ names, else one of the CUDA major it was built for (its
//   label's, else the highest libcudart/libnvrtc/libcublas major it NEEDs), else the
//   first; it names that build and every build the atlases hold, and cuda_note says
//   when the build is not the wheel's own ("wheel +cu126: verdict from the cu124
//   build; builds of one release can export different symbols", or "wheel names no
//   build: …" when the release has several).
//   Each cell also judges the install (torch_matrix.hpp: `runtime`): a CPython build
//   of the release for a cpXY wheel, and each CUDA runtime major the member NEEDs
//   (torch_verdict.hpp cuda_runtime_needs), which the build brings, or the member's
//   own search path reaches in the wheel (needed_resolution.hpp wheel_only: a copy
//   only another member reaches serves this one only if that member loads first,
//   which nothing promises), or a distribution the wheel declares ships
//   (nvidia-cuda-runtime-cu12). Releases are materialised one at a time, only as far
//   as the targets' NEEDED closure reaches, so memory stays near one release's
//   libraries. The verdict is torch_verdict()'s (with torch_claims_of(input) and
//   request.pin_mode); a column it does not admit although its symbols resolve and
//   its install matches (why_not_admitted) has its torch-linking members' cells `not
//   admitted` and its TorchResult::not_admitted set, so neither the matrix nor
//   `loads` says ok where the pin says no. With keep_newest, `newest` holds the index
//   of the newest release of the pin (what `repair --torch auto` shims against). An
//   atlas with no matching release, or no atlas at all, is an InputError naming
//   --torch-release.
// - check_torches(targets, input, paths, mode, load): the same matrix and verdict over
//   torch directories, torch wheels or index files alone (`retag --torch auto
//   --torch-from DIR...`): one column per path, ordered by torch version, each cell
//   judged as an atlas release's is (symbols, the CUDA runtime major of the build),
//   the verdict torch_verdict()'s, so a torch gives the pin it gives from an atlas. A
//   path whose torch version is unknown is an InputError naming it.
// - release_torch(paths, release, options, load): the first of `paths` (installed
//   torch directories, torch wheels, index files; each loaded by `load` with
//   `options`) whose torch version's public part is `release` ("2.9.0"): the real
//   torch `repair --torch auto` shims and load-tests against; nullopt when none is.
// - bundled_releases(report, input): check_releases() over the bundled atlas on the
//   wheel's targets (read_targets, as check reads them), so it is check's verdict;
//   nullopt when no extension references torch or no atlas is bundled. inspect makes
//   it once for its "torch range" line (torch_range_of(releases, input); empty for nullopt;
//   when a pinned release's verdict comes from another build than the wheel's own, it
//   names that build: "verdict from the cu124 build, not the wheel's +cu126") and for
//   judging a variant's torch claim (analysis/variant.hpp).
// - check_inputs(inputs, torches, release_spec, load): `check`'s whole run. Every
//   torch path is refused (abi::require_index_source) before any input is read (a
//   big wheel takes seconds); each input is read once (read_targets; an input
//   without ELF shared objects is refused only when it is the only one). With a
//   release spec, or an atlas among the torches, each input gets its ReleaseMatrix
//   (check_releases with release_request(release_spec, torches), "all" when no spec
//   is given); otherwise each torch is loaded once for all inputs, only as far as
//   their needed roots reach, and every input checked against it in the order
//   given. CheckRun::loads_everywhere() is check's exit status: every input's
//   symbols resolve on every torch (or release, and the release covers every
//   library it needs).
#pragma once

#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/analysis/torch_check.hpp"
#include "wheelfix/analysis/torch_matrix.hpp"
#include "wheelfix/analysis/torch_verdict.hpp"
#include "wheelfix/analysis/wheel_report.hpp"

#include <optional>
#include <string>
#include <vector>

namespace wheelfix::analysis {

struct WheelFacts {
    std::string arch;
    std::string python_tag;  // "" for abi3 / none
    std::string cuda;        // "cu130" from the local version, "" when none
};
WheelFacts wheel_facts(const std::string& input);

struct ReleaseRequest {
    std::string spec = "all";
    std::vector<std::string> atlases;  // user atlas files, beside the bundled atlas
    std::vector<std::string> torches;  // other torch paths: one column each, after the releases
    bool with_bundled = true;          // false: only the atlases given (`check --torch ATLAS` alone)
    PinMode pin_mode = PinMode::truth; // range: `--pin range`, symbol level only
};
ReleaseRequest release_request(const std::string& spec, const std::vector<std::string>& torch_paths);

struct ReleaseMatrix {
    CheckReport report;
    TorchMatrix matrix;
    StableAbiUse stable;
    TorchRequirement requirement;
    std::optional<abi::SymbolIndex> newest;  // with keep_newest and a requirement: its newest release
    std::vector<std::string> roots;          // what the targets NEED (abi::IndexOptions::roots)
};

ReleaseMatrix check_releases(const Targets& targets, const std::string& input, const ReleaseRequest& request,
                             const TorchLoader& load, bool keep_newest = false);

ReleaseMatrix check_torches(const Targets& targets, const std::string& input, const std::vector<std::string>& paths,
                            PinMode mode, const TorchLoader& load);

struct ReleaseTorch {
    std::string path;
    abi::SymbolIndex index;
};
std::optional<ReleaseTorch> release_torch(const std::vector<std::string>& paths, const std::string& release,
                                          const abi::IndexOptions& options, const TorchLoader& load);

std::optional<ReleaseMatrix> bundled_releases(const WheelReport& report, const std::string& input);
std::string torch_range_of(const std::optional<ReleaseMatrix>& releases, const std::string& input);

struct CheckRun {
    std::vector<CheckReport> reports;     // one per input, in order, named as given
    std::vector<ReleaseMatrix> matrices;  // one per input against releases; empty against torches
    std::vector<bool> nothing_to_check;   // per input: it has no ELF shared objects

    bool loads_everywhere() const;
};
CheckRun check_inputs(const std::vector<std::string>& inputs, const std::vector<std::string>& torches,
                      const std::string& release_spec, const TorchLoader& load);

}  // namespace wheelfix::analysis
