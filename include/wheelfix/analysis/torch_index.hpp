// What `wheelfix index` writes: one torch's symbol index, or a torch atlas grown by
// more torches.
//
// Contract:
// - index_options(libs) reads the libraries whose file names match `libs` (all when
//   empty) with the libraries of the same source they need, and hashes a wheel while
//   its libraries are read, so an atlas names exactly what it was built from.
// - index_of(input, options, load, for_atlas) loads `input` (a torch directory,
//   wheel or index file) through `load`. Its source is recorded as the file name for
//   a file, so an index made elsewhere is byte-identical; an index file added to an
//   atlas (for_atlas) keeps the wheel it names (its arch and python tag). An
//   InputError when no library matches.
// - add_to_atlas(atlas, inputs, options, load) gives the atlas of the file `atlas`'s
//   own entries (none when it does not exist), then each input's: every entry of an
//   input that is itself an atlas, else index_of(input, ..., true); `added` counts
//   the entries the inputs brought. Nothing is written.
// - index_json(index, output, bytes) is the wheelfix.index/1 document of an index
//   written to `output` (`bytes` long), atlas_json(atlas, output, added, bytes) the
//   wheelfix.atlas/1 document of a saved atlas (schemas in docs/schema).
#pragma once

#include "wheelfix/abi/atlas.hpp"
#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/analysis/torch_check.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace wheelfix::analysis {

abi::IndexOptions index_options(const std::vector<std::string>& libs);
abi::SymbolIndex index_of(const std::string& input, const abi::IndexOptions& options, const TorchLoader& load,
                          bool for_atlas = false);

struct GrownAtlas {
    abi::Atlas atlas;
    std::size_t added = 0;
};
GrownAtlas add_to_atlas(const std::string& atlas, const std::vector<std::string>& inputs,
                        const abi::IndexOptions& options, const TorchLoader& load);

std::string index_json(const abi::SymbolIndex& index, const std::string& output, std::uint64_t bytes);
std::string atlas_json(const abi::Atlas& atlas, const std::string& output, std::size_t added, std::uint64_t bytes);

}  // namespace wheelfix::analysis
