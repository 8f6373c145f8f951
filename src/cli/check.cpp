// `wheelfix check WHEEL|ELF --torch PATH... [--json]`: will the wheel's extensions
// load against each torch? PATH is a torch directory, a torch wheel or an index.
//
// The work is analysis/torch_check.hpp; this file parses and renders. The input
// is read once: each ELF member of a wheel (members named like shared
// libraries) is parsed and reduced to what resolution needs (its NEEDED and
// undefined symbols) and to its own exports, which join the search scope of the
// other members (libraries a wheel bundles); then its bytes are dropped. Each
// torch is loaded only as far as the members' NEEDED closure reaches, so a torch
// wheel has only those libraries inflated, once each. Exit 0 when everything
// resolves against every torch, 1 when anything is missing, 2 on error. --junit FILE
// also writes the report as JUnit XML (junit.hpp) for CI test reports.
#include "check_report.hpp"
#include "commands.hpp"
#include "junit.hpp"
#include "options.hpp"
#include "render.hpp"
#include "torch_input.hpp"

#include "wheelfix/analysis/torch_check.hpp"
#include "wheelfix/util/files.hpp"

#include <fmt/format.h>

namespace wheelfix::cli {

namespace {

struct CheckArguments {
    std::string input;
    std::vector<std::string> torches;
    std::string junit;
    bool overwrite = false;
};

void write_junit(const CheckReport& report, const std::string& path, bool overwrite) {
    std::string xml = write_check_junit(report);
    using std::filesystem::perms;
    write_file_atomically(path, {reinterpret_cast<const std::uint8_t*>(xml.data()), xml.size()},
                          perms::owner_read | perms::owner_write | perms::group_read | perms::others_read, overwrite);
}

int run_check(const CheckArguments& args, const GlobalOptions& global) {
    const std::string& input = args.input;
    if (!args.junit.empty()) refuse_existing_output(args.junit, args.overwrite);
    const analysis::Targets targets = analysis::read_targets(input);
    abi::IndexOptions options;
    options.roots = analysis::needed_roots(targets);
    CheckReport report;
    report.input = input;
    for (const std::string& torch : args.torches)
        report.torches.push_back(analysis::check_against(targets, load_torch(torch, options, global.verbose)));
    if (!args.junit.empty()) write_junit(report, args.junit, args.overwrite);
    fmt::print("{}", global.json ? write_check_json(report) : render_check_text(report, global));
    return report.loads_everywhere() ? 0 : 1;
}

}  // namespace

CommandRunner register_check(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand("check", "Resolve every undefined dynamic symbol of the wheel's extensions "
                                                "against each torch (a torch directory, torch wheel or index) the "
                                                "way ld.so would; explain every miss and its near misses");
    auto args = std::make_shared<CheckArguments>();
    command->add_option("input", args->input, "A wheel (*.whl) or an ELF shared object")->required();
    add_torch_option(*command, args->torches, "Torch package directory, torch wheel or wheelfix index (repeatable)")
        ->required()
        ->take_all();
    command->add_option("--junit", args->junit,
                        "Also write the result as JUnit XML to FILE: one test case per extension and torch, "
                        "failed when it misses symbols or libraries");
    command->add_flag("--overwrite", args->overwrite, "Replace the --junit file if it exists (refused otherwise)");
    return [args, &global] { return run_check(*args, global); };
}

}  // namespace wheelfix::cli
