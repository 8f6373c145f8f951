// closest_command / unknown_command (suggest.hpp has the contract).
#include "suggest.hpp"

#include <algorithm>

namespace wheelfix::cli {

namespace {

// Optimal string alignment distance (Damerau-Levenshtein without repeated edits of one substring).
std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

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
