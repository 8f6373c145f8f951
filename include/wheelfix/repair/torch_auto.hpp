// `--torch auto`, for retag and repair alike, for one wheel: the torch atlas matrix
// (analysis/torch_releases.hpp), the torch verdict (analysis/torch_verdict.hpp: the
// pin, never wider than the truth or the author's), and for repair the torch the
// wheel is then repaired (shimmed, relinked, retagged) against.
//
// Contract: auto_releases(wheel, atlases, mode, keep_newest, load) reads the wheel's
// extensions as far as their loader view needs (analysis::read_targets: bounded
// memory whatever the wheel's size) and gives the matrix and the verdict over the
// bundled atlas and `atlases` (user atlases and index files: columns); what `retag
// --torch auto` writes.
// plan_torch_auto(wheel, atlases, real_torches, mode, write_pin, base, load) is
// auto_releases' matrix and verdict (plan.releases). When no release loads,
// plan.unloadable() is true and nothing else is set. Otherwise plan.options is `base` with the label naming the
// range's lowest release, METADATA's pin set to the range (unless !write_pin), and
// plan.index the torch to repair against: the first of `real_torches` (directories,
// wheels, index files) whose version is the range's newest release — an installed
// directory also becomes the load test's torch — else that release as the atlas
// holds it, with options.load_test_unavailable saying why no load test runs.
// plan.against names that torch for the report. Throws InputError for an
// unreadable wheel, atlas or torch.
// real_torches(torch_from, environment): the torches `repair --torch auto` may shim
// and load-test against: the plain torches among --torch-from (directories, wheels,
// index files; atlases are columns, not torches), then $WHEELFIX_TORCH
// (`environment`, "" when unset) unless it is empty or "auto".
// auto_setup(wheels, atlases, real_torches, mode, write_pin, base, load, plans) is
// repair_wheels' WheelSetup (schedule.hpp) for `repair --torch auto`: on the worker,
// plan_torch_auto for wheel i, kept in plans[i] (without its torch); NotRepaired with
// the verdict's finding when no release loads, else the job against the plan's torch.
// `plans` must hold one entry per wheel and outlive the run.
// repair_batch(wheels, torch, options, load, load_index, out_dir, jobs) is `repair`'s
// run: with torch.torch "auto", auto_setup over torch.torch_from (atlases) and
// torch.real_torches, the search and the pin as torch.pin says (range: every release
// whose symbols resolve; none: METADATA keeps its pin), each wheel's plan kept in
// RepairBatch::plans; otherwise every wheel against one index, load_index(torch.torch)
// (an empty index, no torch checked, when torch.torch is empty). Either way
// repair_wheels, -j included. RepairBatch::automatic says which.
// pick_retag_torch(wheel, torches, mode, load) is `retag --torch auto`'s choice: with
// no `torches`, or atlases among them (retag_against_atlas), the matrix and verdict
// of auto_releases; otherwise the matrix and verdict over the plain torches
// (analysis::check_torches), so a torch gives the pin it gives from an atlas. Either
// way `releases` holds them and torch is the pin's lowest release, nullopt when no
// release is admitted.
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

analysis::ReleaseMatrix auto_releases(const std::string& wheel, const std::vector<std::string>& atlases,
                                      analysis::PinMode mode, bool keep_newest, const analysis::TorchLoader& load);

TorchAutoPlan plan_torch_auto(const std::string& wheel, const std::vector<std::string>& atlases,
                              const std::vector<std::string>& real_torches, analysis::PinMode mode, bool write_pin,
                              const RepairOptions& base, const analysis::TorchLoader& load);

std::vector<std::string> real_torches(const std::vector<std::string>& torch_from, const std::string& environment);
WheelSetup auto_setup(const std::vector<std::string>& wheels, const std::vector<std::string>& atlases,
                      const std::vector<std::string>& real_torches, analysis::PinMode mode, bool write_pin,
                      const RepairOptions& base, const analysis::TorchLoader& load,
                      std::vector<std::optional<TorchAutoPlan>>& plans);

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

bool retag_against_atlas(const std::vector<std::string>& torches);
RetagPick pick_retag_torch(const std::string& wheel, const std::vector<std::string>& torches, analysis::PinMode mode,
                           const analysis::TorchLoader& load);

}  // namespace wheelfix::repair
