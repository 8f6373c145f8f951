// wheelfix entry point: builds the command line, runs the chosen command and maps
// errors to exit statuses (docs/decisions.md, "CLI contract").
#include "commands.hpp"
#include "options.hpp"
#include "progress_bar.hpp"
#include "suggest.hpp"
#include "timings_report.hpp"

#include "wheelfix/util/argfile.hpp"
#include "wheelfix/util/cleanup.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/timings.hpp"

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <vector>

namespace {

constexpr const char* kDescription =
    "wheelfix " WHEELFIX_VERSION " - inspect, check and repair Python wheels with native (C++/CUDA) extensions.\n"
    "Exit status: 0 clean, 1 findings, 2 usage or input error.";

void add_global_options(CLI::App& app, wheelfix::cli::GlobalOptions& global) {
    app.add_flag("--json", global.json, "Write one JSON document to stdout instead of text")->configurable(false);
    app.add_flag("-q,--quiet", global.quiet, "Print only findings and errors");
    app.add_flag("-v,--verbose", global.verbose, "Print more detail");
    wheelfix::cli::add_color_option(app, global.color);
    app.add_flag("--timings", global.timings,
                 "After the command, print on stderr where the time went (read, inflate, parse, edit, "
                 "deflate/splice, hash, write, proofs) and the peak RSS");
    app.set_version_flag("--version", "wheelfix " WHEELFIX_VERSION " (" WHEELFIX_BUILD ")");
}

// A repeatable option takes one value per occurrence (`--add-needed a --add-needed
// b`), so `--add-needed bar.so main` leaves `main` to the positional input. CLI11
// lets a vector option take every following word unless told otherwise. The options
// declared as lists (->take_all(): check --torch PATH..., retag --torch-from
// PATH...) keep taking several words, up to a required positional still missing.
void one_value_per_occurrence(CLI::App& app) {
    for (CLI::Option* option : app.get_options())
        if (!option->get_positional() && option->get_items_expected_max() > 1 && option->get_type_size_max() <= 1 &&
            option->get_multi_option_policy() != CLI::MultiOptionPolicy::TakeAll)
            option->allow_extra_args(false);
    for (CLI::App* command : app.get_subcommands({})) one_value_per_occurrence(*command);
}

// Runs the command the command line chose; errors become one line on stderr and exit status 2.
int run_parsed_command(std::vector<std::pair<CLI::App*, wheelfix::cli::CommandRunner>>& commands,
                       const wheelfix::cli::GlobalOptions& global) {
    wheelfix::cli::ScopedProgressBar progress_bar(global);
    try {
        wheelfix::cli::apply_threads_environment();
        for (auto& [subcommand, run] : commands)
            if (subcommand->parsed()) return run();
    } catch (const wheelfix::InputError& e) {
        fmt::print(stderr, "wheelfix: {}\n", e.what());
        return 2;
    } catch (const std::filesystem::filesystem_error& e) {
        fmt::print(stderr, "wheelfix: {}\n", e.what());
        return 2;
    } catch (const std::bad_alloc&) {
        fmt::print(stderr, "wheelfix: out of memory\n");
        return 2;
    } catch (const std::exception& e) {
        fmt::print(stderr, "wheelfix: internal error: {}\n", e.what());
        return 2;
    }
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    // Past `ulimit -f` write() then fails with EFBIG, which OutputFile reports as an
    // input error naming the output, instead of the signal killing us silently.
    std::signal(SIGXFSZ, SIG_IGN);
    // SIGINT, SIGTERM, SIGHUP: every temporary goes, exit 128 + the signal (util/cleanup.hpp).
    wheelfix::install_signal_cleanup();
    if (argc > 0 && wheelfix::cli::invoked_as_patchelf(argv[0]))
        return wheelfix::cli::run_patchelf_front_end(argc, argv);
    CLI::App app{kDescription, "wheelfix"};
    app.require_subcommand(1);
    app.fallthrough();
    wheelfix::cli::GlobalOptions global;
    add_global_options(app, global);

    std::vector<std::pair<CLI::App*, wheelfix::cli::CommandRunner>> commands;
    auto add = [&](auto register_command) {
        auto runner = register_command(app, global);
        commands.emplace_back(app.get_subcommands({}).back(), std::move(runner));
    };
    add(wheelfix::cli::register_inspect);
    add(wheelfix::cli::register_verify);
    add(wheelfix::cli::register_relink);
    add(wheelfix::cli::register_elf);
    add(wheelfix::cli::register_check);
    add(wheelfix::cli::register_index);
    add(wheelfix::cli::register_shim);
    add(wheelfix::cli::register_retag);
    add(wheelfix::cli::register_repair);
    add(wheelfix::cli::register_variant);
    add(wheelfix::cli::register_completion);

    one_value_per_occurrence(app);

    std::vector<std::string> arguments;
    try {
        // argv without the program name, every @FILE replaced by its arguments (util/argfile.hpp)
        arguments = wheelfix::expand_argument_files(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const wheelfix::InputError& e) {
        fmt::print(stderr, "wheelfix: {}\n", e.what());
        return 2;
    }
    std::vector<const char*> expanded_argv{argv[0]};
    for (const auto& argument : arguments) expanded_argv.push_back(argument.c_str());

    try {
        app.parse(static_cast<int>(expanded_argv.size()), expanded_argv.data());
    } catch (const CLI::Success& e) {  // --help, --help-all, --version
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        if (std::string word = wheelfix::cli::unknown_command(app, arguments); !word.empty()) {
            std::string guess = wheelfix::cli::closest_command(app, word);
            fmt::print(stderr, "wheelfix: '{}' is not a wheelfix command{}\nRun 'wheelfix --help' for the commands.\n",
                       word, guess.empty() ? "" : "; did you mean '" + guess + "'?");
            return 2;
        }
        fmt::print(stderr, "wheelfix: {}\nRun 'wheelfix --help' for usage.\n", e.what());
        return 2;
    }

    const auto started = std::chrono::steady_clock::now();
    if (global.timings) wheelfix::timings::enable();
    const int status = run_parsed_command(commands, global);
    if (global.timings) {
        std::fflush(stdout);  // the command's output first, where both reach one terminal
        wheelfix::cli::print_timings(stderr, started);
    }
    return status;
}
