// `wheelfix shim WHEEL --torch PATH -o DIR [--map OLD=NEW]... [--json]`: add a
// generated shim library so the wheel's extensions load against the given torch.
// Exit status: 0 when every missing torch function is forwarded (or nothing was
// missing), 1 when the written wheel still has stubs, unshimmable symbols or missing
// torch libraries, 2 on usage or input errors.
#include "commands.hpp"
#include "options.hpp"

#include "wheelfix/repair/report_json.hpp"
#include "wheelfix/repair/report_text.hpp"
#include "wheelfix/repair/shim_wheel.hpp"
#include "wheelfix/util/error.hpp"

#include <fmt/format.h>

namespace wheelfix::cli {

namespace {

struct ShimArguments {
    std::string wheel;
    std::string torch;
    std::string output;
    std::vector<std::string> maps;
    bool overwrite = false;
    bool dry_run = false;
};

void render_text(const repair::ShimResult& result, const GlobalOptions& global) {
    fmt::print("{}", repair::shim_text(result, global.verbose, global.quiet));
}

int run_shim(const ShimArguments& args, const GlobalOptions& global) {
    require_output_directory(args.output);
    repair::SymbolMap maps;
    for (const auto& text : args.maps) maps.push_back(repair::parse_symbol_map(text));
    auto result = repair::shim_wheel(args.wheel, args.torch, args.output, maps, args.overwrite, args.dry_run);
    if (global.json) fmt::print("{}", repair::shim_json(result));
    else render_text(result, global);
    return repair::fully_repaired(result) ? 0 : 1;
}

}  // namespace

CommandRunner register_shim(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand(
        "shim", "Add a generated shim library so the wheel's extensions load against the given torch: forwarders to "
                "ABI-compatible successors of missing torch functions, loud stubs for the rest");
    auto args = std::make_shared<ShimArguments>();
    command->add_option("wheel", args->wheel, "Wheel (*.whl)")->required();
    add_torch_option(*command, args->torch, "Target torch: package directory, torch wheel, or index file")->required();
    add_wheel_dir_option(*command, args->output, "Output directory, default ./wheelhouse/ (the wheel keeps its file name)");
    command->add_option("--map", args->maps, "Forward OLD to NEW (mangled names), OLD=NEW (repeatable)");
    command->add_flag("--overwrite", args->overwrite, "Replace the output wheel if it exists (refused otherwise)");
    command->add_flag("--dry-run", args->dry_run, "Print the plan (the shim added, each ELF edit), write nothing");
    return [args, &global] { return run_shim(*args, global); };
}

}  // namespace wheelfix::cli
