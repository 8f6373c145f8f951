// "did you mean inspect?" for a mistyped subcommand (`wheelfix inpsect`).
//
// Contract: closest_command() returns the name of the app's subcommand nearest to
// `word` by edit distance (insert, delete, substitute, or swap two neighbours: one
// step each), when it is at most 2 steps away and `word` is not a subcommand
// itself; otherwise "". unknown_command() returns `word` when the first argument
// that is not an option names no subcommand, else "".
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace wheelfix::cli {

std::string closest_command(CLI::App& app, const std::string& word);
std::string unknown_command(CLI::App& app, const std::vector<std::string>& arguments);

}  // namespace wheelfix::cli
