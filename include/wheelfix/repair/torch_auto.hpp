// `--torch auto`, for retag and repair alike, for one wheel: the torch atlas matrix
// (analysis/torch_releases.hpp), the torch verdict (analysis/torch_verdict.hpp: the
// pin, never wider than the truth or the author's), and for repair the torch the
// wheel is then repaired (shimmed, relinked, retagged) against.
//
// Contract: a wheel's matrix and verdict come from its extensions read as far as
// their loader view needs (analysis::read_targets: bounded memory whatever the
// wheel's size), over the bundled atlas and the atlases given (user atlases and index
// files: columns).
// repair_batch(wheels, torch, options, load, load_index, out_dir, jobs) is `repair`'s
// run, through repair_wheels (-j included; schedule.hpp). With torch.torch "auto" each
// wheel is planned on its worker over torch.torch_from (atlases), the pin as torch.pin
// says (range: every release whose symbols resolve; none: METADATA keeps its pin),
// into RepairBatch::plans[i] (without its torch): when no release loads
// (TorchAutoPlan::unloadable) the wheel is NotRepaired with the verdict's finding;
// otherwise it is repaired with the label naming the range's lowest release and
// METADATA's pin the range, against the first of torch.real_torches whose version is
// the range's newest release (an installed directory is also the load test's torch),
// else that release as the atlas holds it (options.load_test_unavailable says why no
// load test runs); TorchAutoPlan::against names that torch for the report. Otherwise
// every wheel is repaired against load_index(torch.torch) (an empty index, no torch
// checked, when torch.torch is empty). RepairBatch::automatic says which. Throws
// InputError for an unreadable wheel, atlas or torch.
// real_torches(torch_from, environment): the torches `repair --torch auto` may shim
// and load-test against: the plain torches among --torch-from (directories, wheels,
// index files; atlases are columns, not torches), then $WHEELFIX_TORCH
// (`environment`, "" when unset) unless it is empty or "auto".
// pick_retag_torch(wheel, torches, mode, load) is `retag --torch auto`'s choice: with
// no `torches`, or atlases among them, the atlas matrix and verdict; otherwise those
// over the plain torches (analysis::check_torches), so a torch gives the pin it gives
// from an atlas. Either way `releases` holds them and torch is the pin's lowest
// release, nullopt when no release is admitted.
#pragma once

#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/analysis/torch_releases.hpp"
#include "wheelfix/repair/repair.hpp"
#include "wheelfix/repair/schedule.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace wheelfix::repair {

struct TorchAutoPlan {
    std::string input;
    analysis::ReleaseMatrix releases;
    abi::SymbolIndex index;       // the torch to repair against (empty when unloadable)
    RepairOptions options;
    std::string against;          // a path, or "the atlas's 2.9.1+cu128 (indexed from WHEEL)"
    bool installed = false;       // a real torch directory: the load test runs against it
    bool unloadable() const { return !releases.requirement.any; }
};

std::vector<std::string> real_torches(const std::vector<std::string>& torch_from, const std::string& environment);

struct RepairTorch {
    std::string torch;                      // "", "auto", or a torch directory, wheel or index file
    std::vector<std::string> torch_from;    // with "auto"
    std::vector<std::string> real_torches;  // with "auto" (real_torches above)
    PinRequest pin;                         // --pin: the verdict's pin unless none; range widens it
};
struct RepairBatch {
    std::vector<RepairOutcome> outcomes;               // one per wheel, in order
    std::vector<std::optional<TorchAutoPlan>> plans;   // one per wheel; set with "auto" for the wheels planned
    bool automatic = false;
};
RepairBatch repair_batch(const std::vector<std::string>& wheels, const RepairTorch& torch, const RepairOptions& options,
                         const analysis::TorchLoader& load,
                         const std::function<abi::SymbolIndex(const std::string&)>& load_index,
                         const std::filesystem::path& out_dir, unsigned jobs);

struct RetagPick {
    analysis::CheckReport report;
    std::optional<wheel::Version> torch;
    std::optional<analysis::ReleaseMatrix> releases;  // against the atlas: the matrix and verdict
    analysis::TorchRequirement requirement;
};

RetagPick pick_retag_torch(const std::string& wheel, const std::vector<std::string>& torches, analysis::PinMode mode,
                           const analysis::TorchLoader& load);

}  // namespace wheelfix::repair
