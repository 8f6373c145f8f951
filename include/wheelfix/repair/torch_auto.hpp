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
// plan_torch_auto(wheel, atlases, real_torches, mode, write_pin, base, load)
// reads the wheel's extensions, builds the matrix over the bundled atlas and
// `atlases` (user atlases and index files: columns), and derives the requirement as
// `retag --torch auto` does. When no release loads, plan.unloadable() is true and
// nothing else is set. Otherwise plan.options is `base` with the label naming the
// range's lowest release, METADATA's pin set to the range (unless !write_pin), and
// plan.index the torch to repair against: the first of `real_torches` (directories,
// wheels, index files) whose version is the range's newest release — an installed
// directory also becomes the load test's torch — else that release as the atlas
// holds it, with options.load_test_unavailable saying why no load test runs.
// plan.against names that torch for the report. Throws InputError for an
// unreadable wheel, atlas or torch.
#pragma once

#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/analysis/torch_releases.hpp"
#include "wheelfix/repair/repair.hpp"

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

}  // namespace wheelfix::repair
