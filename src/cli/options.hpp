// Options several commands share, so each is spelled, described and defaulted
// the same everywhere (man/wheelfix.1 OPTIONS and ENVIRONMENT).
//
// Contract:
// - add_wheel_dir_option(): "-o,--output" with auditwheel's "-w,--wheel-dir" as
//   the same option (either spelling, once), defaulting to ./wheelhouse as
//   auditwheel's does (require_output_directory() lets it be created); an empty
//   value is a usage error (non_empty_path()), never "the current directory".
// - require_output_directory(): the -o/-w of a command writing wheels must be a
//   directory or not exist yet (it is created); a file there (or a file where a
//   parent directory should be) is an InputError saying what to name instead.
// - add_target_option(): "--target PROFILE", defaulting to $WHEELFIX_TARGET when
//   the option is not given (an empty variable counts as unset).
// - add_torch_option(): "--torch PATH" (a torch directory, torch wheel or index),
//   defaulting to $WHEELFIX_TORCH the same way; only for commands whose --torch is
//   a PATH (check, shim, repair), not retag's --torch VERSION. The caller adds
//   ->required() / ->take_all() as its command needs: the variable satisfies
//   "required".
// - add_exclude_option(): "--exclude GLOB" (repeatable) into a glob list such as
//   repair::RelinkOptions::exclude: members matching it are never touched.
// - add_color_option(): the global "--color auto|always|never" (style.hpp).
// - apply_threads_environment(): $WHEELFIX_THREADS (1 to 4096), when set and not
//   empty, becomes the thread budget (util/thread_budget.hpp) before the command
//   runs: how many threads a command keeps busy (`repair -j` still sets its own);
//   anything else is an InputError naming the variable. Results never depend on
//   it (tests run read-only commands at 1 and 2 and compare the output), only speed.
// - split_replacement(): a --replace-needed value OLD=NEW as {OLD, NEW} (elf,
//   relink); no '=', or an empty side, is an InputError naming the option.
// - kTorchAuto: the --torch value that picks the torch release itself (repair, retag).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelfix::cli {

inline constexpr const char* kTargetEnvironment = "WHEELFIX_TARGET";
inline constexpr const char* kTorchEnvironment = "WHEELFIX_TORCH";
inline constexpr const char* kThreadsEnvironment = "WHEELFIX_THREADS";
inline constexpr std::string_view kTorchAuto = "auto";
inline constexpr const char* kDefaultWheelDir = "wheelhouse";

CLI::Validator non_empty_path();
CLI::Option* add_wheel_dir_option(CLI::App& command, std::string& output, const std::string& description);
void require_output_directory(const std::string& output);
CLI::Option* add_exclude_option(CLI::App& command, std::vector<std::string>& globs);
CLI::Option* add_color_option(CLI::App& app, std::string& color);
void apply_threads_environment();
std::pair<std::string, std::string> split_replacement(const std::string& text);

template <typename Destination>  // std::string or std::optional<std::string>
CLI::Option* add_target_option(CLI::App& command, Destination& target, const std::string& description) {
    return command.add_option("--target", target, description)->envname(kTargetEnvironment);
}

template <typename Destination>  // std::string, or std::vector<std::string> for a repeatable --torch
CLI::Option* add_torch_option(CLI::App& command, Destination& torch, const std::string& description) {
    return command.add_option("--torch", torch, description)->envname(kTorchEnvironment);
}

}  // namespace wheelfix::cli
