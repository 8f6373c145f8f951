// Shell completion scripts (bash, zsh) from a description of a command line: its
// global options, its commands with their aliases and options, and what each
// option's value completes to. cli/completion.cpp describes wheelfix's own CLI11
// command line this way, so the scripts cannot drift from it.
//
// Contract:
// - A value completes to the option's choices when it has any, to a file name
//   otherwise; with or_file, to either (zsh names both groups with or_file's labels).
//   Every positional argument completes to a file name.
// - A command accepts the global options after its name too, except those it
//   spells itself and --version.
// - bash_completion() needs only bash itself (no bash-completion package
//   functions); zsh_completion() is a #compdef file for $fpath. Both are pure
//   functions of the spec: the same spec gives the same bytes.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace wheelfix {

struct CompletionOption {
    std::vector<std::string> names;    // "-o", "--output", ...
    std::string description;           // one short line
    bool takes_value = false;
    std::vector<std::string> choices;  // empty: any value (a file name)
    struct OrFile {
        std::string tag;     // "profiles"
        std::string choice;  // "built-in profile"
        std::string file;    // "profile file"
    };
    std::optional<OrFile> or_file;     // a choice or a file name
};

struct CompletionCommand {
    std::vector<std::string> names;  // name, then aliases
    std::string description;
    std::vector<CompletionOption> options;
};

struct CompletionSpec {
    std::string program;  // "wheelfix"
    std::vector<CompletionOption> global;
    std::vector<CompletionCommand> commands;
};

std::string bash_completion(const CompletionSpec& spec);
std::string zsh_completion(const CompletionSpec& spec);

}  // namespace wheelfix
