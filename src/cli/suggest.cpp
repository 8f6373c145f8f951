// closest_command / unknown_command (suggest.hpp has the contract).
#include "suggest.hpp"

#include "wheelfix/util/text.hpp"

#include <algorithm>

namespace wheelfix::cli {

namespace {

constexpr std::size_t kMaxDistance = 2;

// Every name a command answers to: its own, then its aliases (inspect: show).
std::vector<std::string> command_names(CLI::App& app) {
    std::vector<std::string> names;
    for (const CLI::App* command : app.get_subcommands({})) {
        names.push_back(command->get_name());
        for (const std::string& alias : command->get_aliases()) names.push_back(alias);
    }
    return names;
}

}  // namespace

std::string closest_command(CLI::App& app, const std::string& word) {
    if (word.size() > 64) return {};  // a path or garbage, not a typo
    std::string best;
    std::size_t best_distance = kMaxDistance + 1;
    for (const std::string& name : command_names(app)) {
        if (name == word) return {};
        std::size_t distance = edit_distance(word, name);
        if (distance < best_distance) best = name, best_distance = distance;
    }
    return best;
}

std::string unknown_command(CLI::App& app, const std::vector<std::string>& arguments) {
    for (const std::string& argument : arguments) {
        if (argument.starts_with("-")) {
            if (argument == "--color") return {};  // takes a value: not worth guessing past it
            continue;
        }
        auto names = command_names(app);
        return std::find(names.begin(), names.end(), argument) == names.end() ? argument : std::string();
    }
    return {};
}

}  // namespace wheelfix::cli
