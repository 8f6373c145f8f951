// `wheelfix check WHEEL|ELF --torch PATH... [--json]`: will the wheel's extensions
// load against each torch? PATH is a torch directory, a torch wheel or an index.
//
// The input is read once: each ELF member of a wheel (members named like shared
// libraries) is parsed and reduced to what resolution needs (its NEEDED and
// undefined symbols) and to its own exports, which join the search scope of the
// other members (libraries a wheel bundles); then its bytes are dropped. Each
// torch is loaded only as far as the members' NEEDED closure reaches, so a torch
// wheel has only those libraries inflated, once each. Exit 0 when everything
// resolves against every torch, 1 when anything is missing, 2 on error.
#include "check_report.hpp"
#include "check_targets.hpp"
#include "commands.hpp"
#include "render.hpp"
#include "torch_input.hpp"

#include "wheelfix/abi/symbol_index.hpp"

#include <fmt/format.h>

namespace wheelfix::cli {

namespace {

int run_check(const std::string& input, const std::vector<std::string>& torches, const GlobalOptions& global) {
    const Targets targets = read_targets(input);
    abi::IndexOptions options;
    options.roots = needed_roots(targets);
    CheckReport report;
    report.input = input;
    for (const std::string& torch : torches)
        report.torches.push_back(check_against(targets, load_torch(torch, options, global.verbose)));
    fmt::print("{}", global.json ? write_check_json(report) : render_check_text(report, global));
    return report.loads_everywhere() ? 0 : 1;
}

}  // namespace

CommandRunner register_check(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand("check", "Resolve every undefined dynamic symbol of the wheel's extensions "
                                                "against each torch (a torch directory, torch wheel or index) the "
                                                "way ld.so would; explain every miss and its near misses");
    auto input = std::make_shared<std::string>();
    auto torches = std::make_shared<std::vector<std::string>>();
    command->add_option("input", *input, "A wheel (*.whl) or an ELF shared object")->required();
    command->add_option("--torch", *torches, "Torch package directory, torch wheel or wheelfix index (repeatable)")
        ->required()
        ->take_all();
    return [input, torches, &global] { return run_check(*input, *torches, global); };
}

}  // namespace wheelfix::cli
