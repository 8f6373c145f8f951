// One torch's index, an atlas grown by more (torch_index.hpp has the contract).
#include "wheelfix/analysis/torch_index.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"

#include <filesystem>

namespace wheelfix::analysis {

abi::IndexOptions index_options(const std::vector<std::string>& libs) {
    abi::IndexOptions options;
    options.library_globs = libs;
    options.with_dependencies = true;
    options.hash_wheel = true;
    return options;
}

abi::SymbolIndex index_of(const std::string& input, const abi::IndexOptions& options, const TorchLoader& load,
                          bool for_atlas) {
    abi::SymbolIndex index = load(input, options);
    const bool keeps_source = for_atlas && !index.source.empty() && !wheelfix::starts_like_zip(input);
    if (!std::filesystem::is_directory(input) && !keeps_source)
        index.source = std::filesystem::path(input).filename().string();
    if (index.libraries.empty()) throw InputError(input, "no library matches --libs");
    return index;
}

GrownAtlas add_to_atlas(const std::string& atlas, const std::vector<std::string>& inputs,
                        const abi::IndexOptions& options, const TorchLoader& load) {
    abi::AtlasInputs indexes;
    auto add_atlas = [&](const std::string& path) {
        const abi::Atlas existing = abi::Atlas::load(path);
        for (std::uint32_t entry = 0; entry < existing.entries().size(); ++entry) indexes.add(existing.entry_index(entry));
    };
    if (std::filesystem::exists(atlas)) add_atlas(atlas);
    const std::size_t before = indexes.size();
    for (const std::string& input : inputs) {
        if (!std::filesystem::is_directory(input) && abi::Atlas::is_atlas_file(input)) add_atlas(input);
        else indexes.add(index_of(input, options, load, true));
    }
    return {abi::Atlas::build(indexes), indexes.size() - before};
}

}  // namespace wheelfix::analysis
