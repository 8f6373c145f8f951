// `wheelfix index PATH -o FILE [--libs GLOB]...`: write the symbol index of a torch
// (directory or wheel) or of any directory of shared libraries; with --libs, the
// matching libraries and what they need from the same source (so resolution through
// them stays complete: libtorch_cuda.so brings libtorch_nvshmem.so). The format is in
// man/wheelfix.1 (INDEX FILE FORMAT) and src/abi/symbol_index_file.cpp. A wheel's
// libraries are inflated once each, keeping only their dynamic tables.
//
// `wheelfix index PATH... --atlas FILE` adds each PATH (torch wheel, directory, index
// file or another atlas) to the torch atlas FILE, creating it when it does not exist
// (abi/atlas.hpp; analysis/torch_index.hpp grows it): scripts/build-atlas assembles data/torch-atlas.gz this way, and a
// user adds a nightly to a user atlas that `check --torch FILE` takes.
#include "commands.hpp"
#include "options.hpp"
#include "torch_input.hpp"

#include "wheelfix/abi/atlas.hpp"
#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/analysis/torch_index.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/table.hpp"
#include "wheelfix/util/text.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace wheelfix::cli {

namespace {

struct IndexArguments {
    std::vector<std::string> inputs;
    std::string output;
    std::string atlas;
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
        fmt::print("{}", analysis::index_json(index, args.output, size));
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

// Adds every input to the atlas (analysis/torch_index.hpp) and writes it.
int run_add_to_atlas(const IndexArguments& args, const GlobalOptions& global) {
    const auto [atlas, added] = analysis::add_to_atlas(args.atlas, args.inputs, analysis::index_options(args.libs),
                                                       torch_loader(global.verbose));
    atlas.save(args.atlas);
    const std::uint64_t size = std::filesystem::file_size(args.atlas);
    if (global.json) {
        fmt::print("{}", analysis::atlas_json(atlas, args.atlas, added, size));
        return 0;
    }
    fmt::print("{}: torch atlas, {} entries ({} added), {} releases, {} library nodes, {} distinct symbols, {}\n",
               args.atlas, atlas.entries().size(), added, atlas.releases().size(),
               atlas.libraries().size(), atlas.symbol_count(), human_size(size));
    if (!global.verbose) return 0;
    Table table({"torch", "arch", "tag", "wheel", "sha256"});
    table.indent(2);
    for (const abi::AtlasEntry& entry : atlas.entries())
        table.add_row({entry.torch_version, entry.arch, entry.python_tag, entry.wheel, entry.sha256.substr(0, 16)});
    fmt::print("{}", table.render_text());
    return 0;
}

int run_index(const IndexArguments& args, const GlobalOptions& global) {
    if (!args.atlas.empty()) return run_add_to_atlas(args, global);
    if (args.inputs.size() != 1) throw InputError("index", "takes one PATH (several only with --atlas)");
    if (args.output.empty()) throw InputError("index", "needs -o FILE (or --atlas FILE)");
    refuse_existing_output(args.output, args.overwrite);
    const abi::SymbolIndex index =
        analysis::index_of(args.inputs.front(), analysis::index_options(args.libs), torch_loader(global.verbose));
    abi::save_index(index, args.output, args.overwrite);
    render(index, args, global);
    return 0;
}

}  // namespace

CommandRunner register_index(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand("index", "Write a compact, versioned symbol index of a torch (directory or "
                                                "wheel) or any directory of shared libraries, for `check --torch`");
    auto args = std::make_shared<IndexArguments>();
    command->add_option("path", args->inputs,
                        "Torch package directory, torch wheel, or directory of libraries (several, and index files "
                        "or atlases, with --atlas)")
        ->required();
    command->add_option("-o,--output", args->output, "The index file to write (gzip-compressed text)")
        ->check(non_empty_path());
    command->add_option("--atlas", args->atlas,
                        "Add the index of each PATH to this torch atlas (created when missing), for "
                        "`check --torch FILE` and `--torch-release`")
        ->check(non_empty_path());
    command->add_option("--libs", args->libs,
                        "Index only libraries whose file name matches GLOB, and the libraries of the same source "
                        "they need (repeatable)");
    command->add_flag("--overwrite", args->overwrite, "Replace the index file if it exists (refused otherwise)");
    return [args, &global] { return run_index(*args, global); };
}

}  // namespace wheelfix::cli
