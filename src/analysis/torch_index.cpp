// One torch's index, an atlas grown by more (torch_index.hpp has the contract).
#include "wheelfix/analysis/torch_index.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/json.hpp"

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

std::string index_json(const abi::SymbolIndex& index, const std::string& output, std::uint64_t bytes) {
    JsonWriter json;
    json.begin_object().field("schema", "wheelfix.index/1").field("output", output);
    json.field("source", index.source).field("torch_version", index.torch_version);
    json.field("cuda_version", index.cuda_version).key("libraries").begin_array();
    for (const abi::LibraryExports& library : index.libraries)
        json.begin_object().field("file_name", library.file_name).field("soname", library.soname)
            .field("symbols", static_cast<std::uint64_t>(library.symbols.size())).end_object();
    json.end_array().field("bytes", bytes).end_object();
    return json.str();
}

std::string atlas_json(const abi::Atlas& atlas, const std::string& output, std::size_t added, std::uint64_t bytes) {
    JsonWriter json;
    json.begin_object().field("schema", "wheelfix.atlas/1").field("output", output);
    json.field("added", static_cast<std::uint64_t>(added));
    json.key("entries").begin_array();
    for (const abi::AtlasEntry& entry : atlas.entries())
        json.begin_object().field("torch_version", entry.torch_version).field("cuda_version", entry.cuda_version)
            .field("arch", entry.arch).field("python_tag", entry.python_tag).field("wheel", entry.wheel)
            .field("sha256", entry.sha256).end_object();
    json.end_array().field("library_nodes", static_cast<std::uint64_t>(atlas.libraries().size()));
    json.field("symbols", static_cast<std::uint64_t>(atlas.symbol_count())).field("bytes", bytes).end_object();
    return json.str();
}

}  // namespace wheelfix::analysis
