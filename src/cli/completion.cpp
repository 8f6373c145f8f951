// `wheelfix completion bash|zsh`: print a shell completion script for the command
// line as it is built (every registered command, its aliases and options), so the
// scripts cannot drift from the CLI. The build runs it to make the installed files
// (share/bash-completion/completions/wheelfix, share/zsh/site-functions/_wheelfix).
//
// Values: options validated against a fixed set (--color, --format, --pin, ...)
// complete to that set, --target to the built-in profile names or a file, every
// other option value and every positional argument to a file name. The bash
// script needs only bash itself (no bash-completion package functions).
#include "commands.hpp"

#include "wheelfix/policy/profile.hpp"
#include "wheelfix/util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace wheelfix::cli {

namespace {

struct OptionSpec {
    std::vector<std::string> names;  // "-o", "--output", ...
    std::string description;
    bool takes_value = false;
    std::vector<std::string> choices;  // empty: any value (a file name)
    bool profile = false;              // --target: a built-in profile name or a file
};

struct CommandSpec {
    std::vector<std::string> names;  // name, then aliases
    std::string description;
    std::vector<OptionSpec> options;
};

struct CliSpec {
    std::vector<OptionSpec> global;
    std::vector<CommandSpec> commands;
};

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

OptionSpec describe(const CLI::Option& option) {
    OptionSpec spec;
    for (const auto& name : option.get_snames()) spec.names.push_back("-" + name);
    for (const auto& name : option.get_lnames()) spec.names.push_back("--" + name);
    spec.description = short_description(option.get_description());
    spec.takes_value = option.get_expected_max() > 0;  // flags expect 0 values
    spec.choices = choices_of(option);
    spec.profile = std::find(spec.names.begin(), spec.names.end(), "--target") != spec.names.end();
    return spec;
}

std::vector<OptionSpec> named_options(const CLI::App& app) {
    std::vector<OptionSpec> specs;
    for (const CLI::Option* option : app.get_options({}))
        if (option->nonpositional()) specs.push_back(describe(*option));
    return specs;
}

CliSpec describe(const CLI::App& app) {
    CliSpec spec;
    spec.global = named_options(app);
    for (const CLI::App* command : app.get_subcommands(std::function<bool(const CLI::App*)>{})) {
        CommandSpec entry;
        entry.names.push_back(command->get_name());
        for (const auto& alias : command->get_aliases()) entry.names.push_back(alias);
        entry.description = short_description(command->get_description());
        entry.options = named_options(*command);
        spec.commands.push_back(std::move(entry));
    }
    return spec;
}

std::string join_words(const std::vector<std::string>& words, std::string_view separator = " ") {
    std::string out;
    for (const auto& word : words) out += (out.empty() ? "" : std::string(separator)) + word;
    return out;
}

std::vector<std::string> all_names(const std::vector<OptionSpec>& options, bool values_only) {
    std::vector<std::string> names;
    for (const auto& option : options)
        if (!values_only || option.takes_value)
            for (const auto& name : option.names)
                if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    return names;
}

// The global options a command accepts after its name too, except those it spells itself (-h).
std::vector<OptionSpec> with_globals(const std::vector<OptionSpec>& own, const std::vector<OptionSpec>& global) {
    std::vector<OptionSpec> all = own;
    auto spelled = all_names(own, false);
    for (const auto& option : global) {
        bool clash = std::any_of(option.names.begin(), option.names.end(), [&](const std::string& name) {
            return std::find(spelled.begin(), spelled.end(), name) != spelled.end() || name == "--version";
        });
        if (!clash) all.push_back(option);
    }
    return all;
}

// ---- bash ---------------------------------------------------------------------------

std::string bash_value_cases(const std::string& command_pattern, const std::vector<OptionSpec>& options) {
    std::string out;
    std::string profiles = join_words(policy::builtin_profile_names());
    for (const auto& option : options) {
        if (!option.takes_value || (option.choices.empty() && !option.profile)) continue;
        std::vector<std::string> patterns;
        for (const auto& name : option.names) patterns.push_back(fmt::format("{}\" {}\"", command_pattern, name));
        std::string words = option.profile ? profiles : join_words(option.choices);
        out += fmt::format("        {}) mapfile -t COMPREPLY < <(compgen -W \"{}\" -- \"$cur\"{}); return ;;\n",
                           join_words(patterns, "|"), words, option.profile ? "; compgen -f -- \"$cur\"" : "");
    }
    return out;
}

std::string bash_script(const CliSpec& spec) {
    std::vector<std::string> command_names;
    for (const auto& command : spec.commands) command_names.insert(command_names.end(), command.names.begin(), command.names.end());
    std::string global_names = join_words(all_names(spec.global, false));
    std::string global_values = join_words(all_names(spec.global, true));

    std::string per_command;
    std::string value_cases = bash_value_cases("*", spec.global);
    for (const auto& command : spec.commands) {
        auto options = with_globals(command.options, spec.global);
        per_command += fmt::format("        {}) options=\"{}\"; values=\" {} \" ;;\n", join_words(command.names, "|"),
                                   join_words(all_names(options, false)), join_words(all_names(options, true)));
        for (const auto& name : command.names) value_cases += bash_value_cases("\"" + name + "\"", command.options);
    }
    return fmt::format(R"(# bash completion for wheelfix, generated by `wheelfix completion bash`.
# Install as share/bash-completion/completions/wheelfix, or source it.
_wheelfix() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}
    local command="" options values i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${{COMP_WORDS[i]}} in
            {commands}) command=${{COMP_WORDS[i]}}; break ;;
        esac
    done
    case $command in
{per_command}        *) options="{global_names}"; values=" {global_values} " ;;
    esac
    case "$command $prev" in
{value_cases}    esac
    if [[ $values == *" $prev "* ]]; then
        mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return
    fi
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur"); return
    fi
    if [[ -z $command ]]; then
        mapfile -t COMPREPLY < <(compgen -W "{command_words}" -- "$cur"); return
    fi
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}}
complete -o filenames -o bashdefault -F _wheelfix wheelfix
)",
                       fmt::arg("commands", join_words(command_names, "|")), fmt::arg("per_command", per_command),
                       fmt::arg("global_names", global_names), fmt::arg("global_values", global_values),
                       fmt::arg("value_cases", value_cases), fmt::arg("command_words", join_words(command_names)));
}

// ---- zsh ----------------------------------------------------------------------------

// Text inside a single-quoted _arguments spec's [description].
std::string zsh_description(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '\'') out += "'\\''";
        else if (c == '[' || c == ']' || c == ':' || c == '\\') out += std::string("\\") + c;
        else out += c;
    }
    return out;
}

std::string zsh_action(const OptionSpec& option) {
    if (!option.choices.empty()) return "(" + join_words(option.choices) + ")";
    if (option.profile)
        return "{_alternative \"profiles:built-in profile:(" + join_words(policy::builtin_profile_names()) +
               ")\" \"files:profile file:_files\"}";
    return "_files";
}

std::string zsh_option_specs(const std::vector<OptionSpec>& options, std::string_view indent) {
    std::string out;
    for (const auto& option : options)
        for (const auto& name : option.names) {
            std::string description = zsh_description(option.description);
            if (!option.takes_value) {
                out += fmt::format("{}'{}[{}]'\n", indent, name, description);
                continue;
            }
            bool is_long = name.starts_with("--");
            out += fmt::format("{}'*{}{}[{}]:value:{}'\n", indent, name, is_long ? "=" : "+", description,
                               zsh_action(option));
        }
    return out;
}

// Specs as continued lines of an _arguments call: "'spec' \\\n" each.
std::string continued(const std::string& specs) {
    std::string out = specs;
    for (std::size_t at = 0; (at = out.find('\n', at)) != std::string::npos; at += 3) out.replace(at, 1, " \\\n");
    return out;
}

std::string zsh_script(const CliSpec& spec) {
    std::string command_items;
    std::string command_cases;
    for (const auto& command : spec.commands) {
        for (const auto& name : command.names)
            command_items += fmt::format("        '{}:{}'\n", name, zsh_description(command.description));
        command_cases += fmt::format("        {})\n          _arguments -S : \\\n", join_words(command.names, "|"));
        command_cases += continued(zsh_option_specs(with_globals(command.options, spec.global), "            "));
        command_cases += "            '*:file:_files' && ret=0\n          ;;\n";
    }
    return fmt::format(R"(#compdef wheelfix
# zsh completion for wheelfix, generated by `wheelfix completion zsh`.
# Install as share/zsh/site-functions/_wheelfix (a directory in $fpath).

_wheelfix() {{
  local curcontext=$curcontext state line ret=1
  _arguments -C -S : \
{global}    '1:command:->command' \
    '*::argument:->argument' && ret=0
  case $state in
    command)
      local -a commands=(
{command_items}      )
      _describe -t commands 'wheelfix command' commands && ret=0
      ;;
    argument)
      curcontext=${{curcontext%:*:*}}:wheelfix-$words[1]:
      case $words[1] in
{command_cases}      esac
      ;;
  esac
  return ret
}}

_wheelfix "$@"
)",
                       fmt::arg("global", continued(zsh_option_specs(spec.global, "    "))),
                       fmt::arg("command_items", command_items), fmt::arg("command_cases", command_cases));
}

}  // namespace

CommandRunner register_completion(CLI::App& app, const GlobalOptions&) {
    auto* command = app.add_subcommand("completion", "Print a bash or zsh completion script for wheelfix (installed "
                                                     "by `cmake --install` and the .deb)");
    auto shell = std::make_shared<std::string>();
    command->add_option("shell", *shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
    return [shell, &app] {
        CliSpec spec = describe(app);
        fmt::print("{}", *shell == "bash" ? bash_script(spec) : zsh_script(spec));
        return 0;
    };
}

}  // namespace wheelfix::cli
