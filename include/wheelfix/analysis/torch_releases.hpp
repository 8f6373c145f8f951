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
//   with_bundled is false; a release both have is taken from the user's), for the
//   wheel's arch and CPython ABI tag (abi3/none take each release's primary
//   libtorch_python), then against each other torch path (loaded by `load`) as a
//   column of its own. Each release is materialised only as far as the targets'
//   NEEDED closure reaches, one release at a time, so memory stays near one
//   release's libraries. The requirement (requirement_from, stable C ABI wheels
//   open above) is derived from the matrix. With keep_newest, `newest` holds the
//   index of the newest release of that requirement (what `repair --torch auto`
//   shims against), materialised the same way. An atlas that has no release
//   matching is an InputError naming --torch-release; no atlas at all (none
//   bundled, none given) too.
// - release_torch(paths, release, options, load): the first of `paths` (installed
//   torch directories, torch wheels, index files; each loaded by `load` with
//   `options`) whose torch version's public part is `release` ("2.9.0"): the real
//   torch `repair --torch auto` shims and load-tests against; nullopt when none is.
// - torch_range_of(report, input): inspect's "torch range" line: the requirement the
//   bundled atlas gives for the wheel's extensions, found by symbol name alone
//   (quick_matrix); empty when no extension references torch or no atlas is bundled.
#pragma once

#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/analysis/torch_check.hpp"
#include "wheelfix/analysis/torch_matrix.hpp"
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
};
ReleaseRequest release_request(const std::string& spec, const std::vector<std::string>& torch_paths);

struct ReleaseMatrix {
    CheckReport report;
    TorchMatrix matrix;
    StableAbiUse stable;
    TorchRequirement requirement;
    std::optional<abi::SymbolIndex> newest;  // with keep_newest and a requirement: its newest release
};

ReleaseMatrix check_releases(const Targets& targets, const std::string& input, const ReleaseRequest& request,
                             const TorchLoader& load, bool keep_newest = false);

struct ReleaseTorch {
    std::string path;
    abi::SymbolIndex index;
};
std::optional<ReleaseTorch> release_torch(const std::vector<std::string>& paths, const std::string& release,
                                          const abi::IndexOptions& options, const TorchLoader& load);

std::string torch_range_of(const WheelReport& report, const std::string& input);

}  // namespace wheelfix::analysis
