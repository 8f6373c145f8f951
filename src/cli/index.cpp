// `wheelfix index PATH -o FILE [--libs GLOB]...`: write the symbol index of a torch
// (directory or wheel) or of any directory of shared libraries; with --libs, the
// matching libraries and what they need from the same source (so resolution through
// them stays complete: libtorch_cuda.so brings libtorch_nvshmem.so). The format is in
// man/wheelfix.1 (INDEX FILE FORMAT) and src/abi/symbol_index_file.cpp. A wheel's
// libraries are inflated once each, keeping only their dynamic tables.
#include "commands.hpp"
#include "render.hpp"
#include "torch_input.hpp"

#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/json.hpp"
#include "wheelfix/util/table.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace wheelfix::cli {

namespace {

struct IndexArguments {
    std::string input;
    std::string output;
    std::vector<std::string> libs;
    bool overwrite = false;
};

std::size_t symbol_count(const abi::SymbolIndex& index) {
    std::size_t count = 0;
    for (const abi::LibraryExports& library : index.libraries) count += library.symbols.size();
    return count;
}

void render(const abi::SymbolIndex& index, const IndexArguments& args, const GlobalOptions& global) {
    const std::uint64_t size = std::filesystem::file_size(args.output);
    if (global.json) {
        JsonWriter json;
        json.begin_object().field("schema", "wheelfix.index/1").field("output", args.output);
        json.field("source", index.source).field("torch_version", index.torch_version);
        json.field("cuda_version", index.cuda_version).key("libraries").begin_array();
        for (const abi::LibraryExports& library : index.libraries)
            json.begin_object().field("file_name", library.file_name).field("soname", library.soname)
                .field("symbols", static_cast<std::uint64_t>(library.symbols.size())).end_object();
        json.end_array().field("bytes", size).end_object();
        fmt::print("{}", json.str());
        return;
    }
    fmt::print("{}: {} libraries, {} symbols, torch {}{}, {}\n", args.output, index.libraries.size(),
               symbol_count(index), index.torch_version.empty() ? "version unknown" : index.torch_version,
               index.cuda_version.empty() ? "" : " (CUDA " + index.cuda_version + ")", human_size(size));
    if (!global.verbose) return;
    Table table({"library", "soname", "symbols"});
    table.indent(2).align(2, Align::right);
    for (const abi::LibraryExports& library : index.libraries)
        table.add_row({library.file_name, library.soname.empty() ? "-" : library.soname, std::to_string(library.symbols.size())});
    fmt::print("{}", table.render_text());
}

int run_index(const IndexArguments& args, const GlobalOptions& global) {
    abi::IndexOptions options;
    options.library_globs = args.libs;
    options.with_dependencies = true;
    refuse_existing_output(args.output, args.overwrite);
    abi::SymbolIndex index = load_torch(args.input, options, global.verbose);
    // Recorded as the file name for files, so an index made elsewhere is byte-identical.
    if (!std::filesystem::is_directory(args.input))
        index.source = std::filesystem::path(args.input).filename().string();
    if (index.libraries.empty()) throw InputError(args.input, "no library matches --libs");
    abi::save_index(index, args.output, args.overwrite);
    render(index, args, global);
    return 0;
}

}  // namespace

CommandRunner register_index(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand("index", "Write a compact, versioned symbol index of a torch (directory or "
                                                "wheel) or any directory of shared libraries, for `check --torch`");
    auto args = std::make_shared<IndexArguments>();
    command->add_option("path", args->input, "Torch package directory, torch wheel, or directory of libraries")
        ->required();
    command->add_option("-o,--output", args->output, "The index file to write (gzip-compressed text)")->required();
    command->add_option("--libs", args->libs,
                        "Index only libraries whose file name matches GLOB, and the libraries of the same source "
                        "they need (repeatable)");
    command->add_flag("--overwrite", args->overwrite, "Replace the index file if it exists (refused otherwise)");
    return [args, &global] { return run_index(*args, global); };
}

}  // namespace wheelfix::cli
