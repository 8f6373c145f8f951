// wheelfix entry point: builds the command line, runs the chosen command and maps
// errors to exit statuses (DESIGN.md "CLI contract").
#include "commands.hpp"
#include "options.hpp"
#include "progress_bar.hpp"
#include "suggest.hpp"

#include "wheelfix/util/argfile.hpp"
#include "wheelfix/util/error.hpp"

#include <fmt/format.h>

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
    app.set_version_flag("--version", "wheelfix " WHEELFIX_VERSION " (" WHEELFIX_BUILD ")");
}

// argv without the program name, every @FILE replaced by its arguments (util/argfile.hpp).
std::vector<std::string> expanded_arguments(int argc, char** argv) {
    return wheelfix::expand_argument_files(std::vector<std::string>(argv + 1, argv + argc));
}

}  // namespace

int main(int argc, char** argv) {
    // Past `ulimit -f` write() then fails with EFBIG, which OutputFile reports as an
    // input error naming the output, instead of the signal killing us silently.
    std::signal(SIGXFSZ, SIG_IGN);
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
    add(wheelfix::cli::register_check);
    add(wheelfix::cli::register_index);
    add(wheelfix::cli::register_shim);
    add(wheelfix::cli::register_retag);
    add(wheelfix::cli::register_repair);
    add(wheelfix::cli::register_completion);

    std::vector<std::string> arguments;
    try {
        arguments = expanded_arguments(argc, argv);
    } catch (const wheelfix::InputError& e) {
        fmt::print(stderr, "wheelfix: {}\n", e.what());
        return 2;
    }
    std::vector<const char*> expanded_argv{argv[0]};
    for (const auto& argument : arguments) expanded_argv.push_back(argument.c_str());

    try {
        app.parse(static_cast<int>(expanded_argv.size()), expanded_argv.data());
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
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

    wheelfix::cli::ScopedProgressBar progress_bar(global);
    try {
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
