// `wheelfix check WHEEL|ELF... --torch PATH... [--json] [--junit FILE]`: will the
// wheel's extensions load against each torch (a torch directory, a torch wheel or an
// index), or, with `--torch-release all|'>=2.6'|2.9.1,2.10.0` or an atlas among the
// --torch paths, against the atlas's releases? The run is analysis/torch_releases.hpp's
// check_inputs (what is refused, how far each torch is read, the exit status: 0 when
// everything resolves everywhere, 1 when anything is missing, 2 on error); the text is
// analysis/check_text.hpp's and torch_matrix_text.hpp's, the JSON report_json.hpp's
// (check/1 for one input, check/2 for several), the JUnit XML check_junit.hpp's.
// This file parses, writes the --junit file and prints.
#include "commands.hpp"
#include "options.hpp"
#include "torch_input.hpp"
#include "style.hpp"

#include "wheelfix/analysis/check_junit.hpp"
#include "wheelfix/analysis/check_text.hpp"
#include "wheelfix/analysis/report_json.hpp"
#include "wheelfix/analysis/torch_check.hpp"
#include "wheelfix/analysis/torch_matrix_text.hpp"
#include "wheelfix/analysis/torch_releases.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"

#include <fmt/format.h>

#include <functional>

namespace wheelfix::cli {

namespace {

struct CheckArguments {
    std::vector<std::string> inputs;
    std::vector<std::string> torches;
    std::string junit;
    std::string torch_release;
    std::string format = "text";
    bool overwrite = false;
};

// The JUnit document (analysis/check_junit.hpp) into FILE, as every output: atomically, readable by all.
void write_junit(const std::vector<analysis::CheckReport>& reports, const std::string& path, bool overwrite) {
    const std::string xml = analysis::check_junit(reports);
    using std::filesystem::perms;
    write_file_atomically(path, {reinterpret_cast<const std::uint8_t*>(xml.data()), xml.size()},
                          perms::owner_read | perms::owner_write | perms::group_read | perms::others_read, overwrite);
}

// Each input's matrix; one document (check/1 for one input, check/2 for several).
void print_release_matrices(const CheckArguments& args, const analysis::CheckRun& run, const GlobalOptions& global) {
    std::vector<std::function<void(JsonWriter&)>> extras;
    for (const analysis::ReleaseMatrix& matrix : run.matrices)
        extras.push_back([&matrix](JsonWriter& json) {
            analysis::write_matrix_json(json, matrix.matrix);
            analysis::write_requirement_json(json, matrix.requirement, matrix.stable);
        });
    if (global.json || args.format == "json") {
        fmt::print("{}", run.matrices.size() == 1 ? analysis::check_json(run.reports.front(), extras.front())
                                                  : analysis::checks_json(run.reports, extras));
        return;
    }
    if (global.quiet) return;
    for (std::size_t i = 0; i < run.matrices.size(); ++i) {
        const analysis::ReleaseMatrix& matrix = run.matrices[i];
        if (args.format == "markdown") {
            fmt::print("{}", render_matrix_markdown(matrix.matrix, args.inputs[i]));
            continue;
        }
        if (run.matrices.size() > 1) fmt::print("{}{}:\n", i == 0 ? "" : "\n", args.inputs[i]);
        fmt::print("{}{}{}", render_matrix_text(matrix.matrix, palette(global)),
                   explain_releases_text(matrix, detail(global), palette(global)),
                   torch_requirement_text(matrix.requirement, matrix.stable));
    }
}

int run_check(const CheckArguments& args, const GlobalOptions& global) {
    if (args.torches.empty() && args.torch_release.empty())
        throw InputError("check", "needs --torch PATH or --torch-release RELEASES");
    if (!args.junit.empty()) refuse_existing_output(args.junit, args.overwrite);
    const analysis::CheckRun run =
        analysis::check_inputs(args.inputs, args.torches, args.torch_release, torch_loader(global.verbose));
    if (!args.junit.empty()) write_junit(run.reports, args.junit, args.overwrite);
    if (!run.matrices.empty()) print_release_matrices(args, run, global);
    else if (global.json || args.format == "json")
        fmt::print("{}", run.reports.size() == 1 ? analysis::check_json(run.reports.front())
                                                 : analysis::checks_json(run.reports));
    else
        fmt::print("{}", render_checks_text(run, detail(global), palette(global)));
    return run.loads_everywhere() ? 0 : 1;
}

}  // namespace

CommandRunner register_check(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand("check", "Resolve every undefined dynamic symbol of the wheel's extensions "
                                                "against each torch (a torch directory, torch wheel or index) the "
                                                "way ld.so would; explain every miss and its near misses");
    auto args = std::make_shared<CheckArguments>();
    command->add_option("input", args->inputs,
                        "Wheels (*.whl) or ELF shared objects; several get one summary and one exit status")
        ->required();
    add_torch_option(*command, args->torches,
                     "Torch package directory, torch wheel, wheelfix index or torch atlas (repeatable)")
        ->take_all();
    command->add_option("--torch-release", args->torch_release,
                        "Check against torch releases of the atlas (bundled, and atlases given with --torch): "
                        "all, a PEP 440 range ('>=2.6') or a list (2.9.1,2.10.0); prints the matrix");
    command->add_option("--format", args->format, "Output format: text, json (as --json), markdown (the matrix)")
        ->check(CLI::IsMember({"text", "json", "markdown"}))
        ->capture_default_str();
    command->add_option("--junit", args->junit,
                        "Also write the result as JUnit XML to FILE: one test case per extension and torch, "
                        "failed when it misses symbols or libraries")
        ->check(non_empty_path());
    command->add_flag("--overwrite", args->overwrite, "Replace the --junit file if it exists (refused otherwise)");
    return [args, &global] { return run_check(*args, global); };
}

}  // namespace wheelfix::cli
