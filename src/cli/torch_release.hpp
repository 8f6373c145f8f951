// Checking a wheel against torch releases from atlases: the matrix behind
// `check --torch-release` and `retag --torch auto`.
//
// Contract: check_releases() resolves the targets against every release the spec
// selects (analysis/torch_matrix.hpp) from the user atlases given and the bundled
// one (unless with_bundled is false; a release both have is taken from the user's), for the wheel's arch (from its platform tag; this machine's for an
// ELF file) and CPython ABI tag (cpXY from its abi tag; abi3/none take each
// release's primary libtorch_python), then against each other --torch PATH as a
// column of its own. Each release is materialised only as far as the targets'
// NEEDED closure reaches, one release at a time, so memory stays near one
// release's libraries. An atlas that has no release matching is an InputError
// naming --torch-release; no atlas at all (none bundled, none given) too.
#pragma once

#include "check_report.hpp"
#include "wheelfix/analysis/torch_check.hpp"

#include "wheelfix/analysis/torch_matrix.hpp"
#include "wheelfix/analysis/wheel_report.hpp"

#include <string>
#include <vector>

namespace wheelfix::cli {

struct ReleaseRequest {
    std::string spec = "all";
    std::vector<std::string> atlases;  // user atlas files, beside the bundled atlas
    std::vector<std::string> torches;  // other --torch paths: one column each, after the releases
    bool with_bundled = true;          // false: only the atlases given (`check --torch ATLAS` alone)
};

struct ReleaseMatrix {
    CheckReport report;
    analysis::TorchMatrix matrix;
    analysis::StableAbiUse stable;
};

// Splits --torch paths into atlases and the rest; the bundled atlas joins when the spec
// is given (`check --torch-release`) or no atlas is (`retag --torch auto` alone).
ReleaseRequest release_request(const std::string& spec, const std::vector<std::string>& torch_paths);
// inspect's "torch range" line: the requirement the bundled atlas gives for the wheel's
// extensions, found by symbol name alone (analysis::quick_matrix); empty when no
// extension references torch or no atlas is bundled.
std::string torch_range_of(const analysis::WheelReport& report, const std::string& input);

ReleaseMatrix check_releases(const analysis::Targets& targets, const std::string& input, const ReleaseRequest& request,
                             bool verbose);

}  // namespace wheelfix::cli
