// The CLI's commands. Each command file registers its subcommand on the app and
// runs it: parse options, call the core, render text or print the --json document
// the core writes (report_json.hpp of analysis and repair). Commands return
// the process exit status (0 clean, 1 findings, 2 usage or input error); input
// problems are thrown as InputError and mapped to status 2 by main().
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace wheelfix::cli {

struct GlobalOptions {
    bool json = false;
    bool quiet = false;
    bool verbose = false;
    std::string color = "auto";  // --color auto|always|never (style.hpp decides)
    bool timings = false;        // --timings: where the time went, on stderr (timings_report.hpp)
};

// Registers a subcommand and returns the function that runs it once parsed.
using CommandRunner = std::function<int()>;

CommandRunner register_inspect(CLI::App& app, const GlobalOptions& global);
CommandRunner register_verify(CLI::App& app, const GlobalOptions& global);
CommandRunner register_relink(CLI::App& app, const GlobalOptions& global);
CommandRunner register_check(CLI::App& app, const GlobalOptions& global);
CommandRunner register_index(CLI::App& app, const GlobalOptions& global);
CommandRunner register_shim(CLI::App& app, const GlobalOptions& global);
CommandRunner register_retag(CLI::App& app, const GlobalOptions& global);
CommandRunner register_repair(CLI::App& app, const GlobalOptions& global);
CommandRunner register_variant(CLI::App& app, const GlobalOptions& global);
CommandRunner register_elf(CLI::App& app, const GlobalOptions& global);
// The patchelf-compatible front end (patchelf.cpp): wheelfix run as `patchelf`.
bool invoked_as_patchelf(const char* argv0);
int run_patchelf_front_end(int argc, char** argv);
// `wheelfix completion bash|zsh`: walks `app` when it runs, so it lists every command registered.
CommandRunner register_completion(CLI::App& app, const GlobalOptions& global);

}  // namespace wheelfix::cli
