// `wheelfix shim WHEEL --torch PATH -o DIR [--map OLD=NEW]... [--json]`: add a
// generated shim library so the wheel's extensions load against the given torch.
// Exit status: 0 when every missing torch function is forwarded (or nothing was
// missing), 1 when the written wheel still has stubs, unshimmable symbols or missing
// torch libraries, 2 on usage or input errors.
#include "commands.hpp"
#include "options.hpp"

#include "wheelfix/abi/signature.hpp"
#include "wheelfix/analysis/report_text.hpp"
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

std::string parameter_list(const abi::Signature& signature) {
    std::vector<std::string> spellings;
    for (const auto& param : signature.params) spellings.push_back(param.spelling);
    return "(" + join(spellings, ", ") + ")";
}

// The successor as people read it: just its parameter list when only that changed.
std::string target_text(const repair::ShimmedSymbol& shimmed) {
    auto old_signature = abi::parse_signature(shimmed.symbol.name);
    auto new_signature = abi::parse_signature(shimmed.symbol.target.value_or(""));
    if (old_signature && new_signature && old_signature->qualified_name == new_signature->qualified_name)
        return parameter_list(*new_signature);
    return shimmed.target_demangled;
}

std::string symbol_line(const repair::ShimmedSymbol& shimmed) {
    const auto& symbol = shimmed.symbol;
    if (shimmed.decision == repair::ShimDecision::stub) return fmt::format("stub    {}: {}", symbol.demangled, shimmed.reason);
    std::string line = fmt::format("forward {} -> {}", symbol.demangled, target_text(shimmed));
    if (!shimmed.appended.empty()) line += " [appended " + join(shimmed.appended, ", ") + "]";
    if (shimmed.source != "near miss") line += " (" + shimmed.source + ")";
    return line;
}


std::string unrepaired_summary(const repair::ShimResult& result) {
    auto stubs = std::count_if(result.symbols.begin(), result.symbols.end(),
                               [](const auto& s) { return s.decision == repair::ShimDecision::stub; });
    return fmt::format("not fully repaired: {} stub(s) that abort when called, {} symbol(s) not shimmed, {} missing "
                       "torch librar(y/ies)",
                       stubs, result.not_shimmed.size(), result.missing_libraries.size());
}

void render_text(const repair::ShimResult& result, const GlobalOptions& global) {
    if (result.shim)
        fmt::print("shim for torch {} ({}): {}\n", result.torch_version, result.machine, result.shim_member);
    else
        fmt::print("nothing to shim: every torch function the extensions need resolves against torch {}\n",
                   result.torch_version);
    std::vector<std::string> lines;
    for (const auto& shimmed : result.symbols) {
        lines.push_back("  " + symbol_line(shimmed));
        if (!global.verbose) continue;  // with -v each symbol's own details follow it
        lines.back() += "\n      needed by " + join(shimmed.members, ", ");
        if (shimmed.decision == repair::ShimDecision::forward) lines.back() += "\n      why: " + shimmed.reason;
    }
    for (const auto& skipped : result.not_shimmed)
        lines.push_back(fmt::format("not shimmed: {}: {} (needed by {})", skipped.demangled, skipped.reason,
                                    join(skipped.members, ", ")));
    for (const auto& line : analysis::once_each(lines)) fmt::print("{}\n", line);
    for (const auto& library : result.missing_libraries)
        fmt::print("missing: torch {} has no {} (a shim cannot replace a library)\n", result.torch_version, library);
    for (const auto& change : result.changed) {
        fmt::print("{}\n", change.member);
        for (const auto& line : change.changes) fmt::print("  {}\n", line);
    }
    for (const auto& [before, after] : result.requirements)
        fmt::print("torch pin  {}{}\n", before.empty() ? "(none) -> " : before + " -> ", after);
    if (result.variant)
        for (const auto& line : variant_lines(*result.variant)) fmt::print("{}\n", line);
    if (!result.plan.empty()) fmt::print("{}would write {} (dry run: nothing written)\n", result.plan, result.output.string());
    else if (!global.quiet) fmt::print("wrote {}\n", result.output.string());
    if (!repair::fully_repaired(result)) fmt::print("{}\n", unrepaired_summary(result));
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
