// `wheelfix completion bash|zsh`: print a shell completion script for the command
// line as it is built (every registered command, its aliases and options, described
// for util/shell_completion.hpp, which writes the scripts), so they cannot drift
// from the CLI. The build runs it to make the installed files
// (share/bash-completion/completions/wheelfix, share/zsh/site-functions/_wheelfix).
//
// Values: options validated against a fixed set (--color, --format, --pin, ...)
// complete to that set, --target to the built-in profile names or a file, every
// other option value and every positional argument to a file name. The bash
// script needs only bash itself (no bash-completion package functions).
#include "commands.hpp"

#include "wheelfix/policy/profile.hpp"
#include "wheelfix/util/shell_completion.hpp"
#include "wheelfix/util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace wheelfix::cli {

namespace {

// The set of a CLI::IsMember validator, from the type name "TEXT:{a,b,c}".
std::vector<std::string> choices_of(const CLI::Option& option) {
    std::string type = option.get_type_name();
    auto open = type.find('{');
    auto close = type.find('}', open == std::string::npos ? 0 : open);
    if (open == std::string::npos || close == std::string::npos) return {};
    return split_nonempty(std::string_view(type).substr(open + 1, close - open - 1), ',');
}

// The first clause of a description: short enough for a completion menu.
std::string short_description(const std::string& text) {
    std::string out = text.substr(0, text.find_first_of(";\n"));
    if (out.size() > 72) out = out.substr(0, 69) + "...";
    return out;
}

CompletionOption describe(const CLI::Option& option) {
    CompletionOption spec;
    for (const auto& name : option.get_snames()) spec.names.push_back("-" + name);
    for (const auto& name : option.get_lnames()) spec.names.push_back("--" + name);
    spec.description = short_description(option.get_description());
    spec.takes_value = option.get_expected_max() > 0;  // flags expect 0 values
    spec.choices = choices_of(option);
    if (std::find(spec.names.begin(), spec.names.end(), "--target") != spec.names.end()) {
        spec.choices = policy::builtin_profile_names();
        spec.or_file = CompletionOption::OrFile{"profiles", "built-in profile", "profile file"};
    }
    return spec;
}

std::vector<CompletionOption> named_options(const CLI::App& app) {
    std::vector<CompletionOption> specs;
    for (const CLI::Option* option : app.get_options({}))
        if (option->nonpositional()) specs.push_back(describe(*option));
    return specs;
}

CompletionSpec describe(const CLI::App& app) {
    CompletionSpec spec;
    spec.program = "wheelfix";
    spec.global = named_options(app);
    for (const CLI::App* command : app.get_subcommands(std::function<bool(const CLI::App*)>{})) {
        CompletionCommand entry;
        entry.names.push_back(command->get_name());
        for (const auto& alias : command->get_aliases()) entry.names.push_back(alias);
        entry.description = short_description(command->get_description());
        entry.options = named_options(*command);
        spec.commands.push_back(std::move(entry));
    }
    return spec;
}

}  // namespace

CommandRunner register_completion(CLI::App& app, const GlobalOptions&) {
    auto* command = app.add_subcommand("completion", "Print a bash or zsh completion script for wheelfix (installed "
                                                     "by `cmake --install` and the .deb)");
    auto shell = std::make_shared<std::string>();
    command->add_option("shell", *shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
    return [shell, &app] {
        CompletionSpec spec = describe(app);
        fmt::print("{}", *shell == "bash" ? bash_completion(spec) : zsh_completion(spec));
        return 0;
    };
}

}  // namespace wheelfix::cli
