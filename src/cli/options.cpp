// Shared option spellings (options.hpp has the contract).
#include "options.hpp"

namespace wheelfix::cli {

CLI::Option* add_wheel_dir_option(CLI::App& command, std::string& output, const std::string& description) {
    return command.add_option("-o,--output,-w,--wheel-dir", output, description)->required();
}

CLI::Option* add_exclude_option(CLI::App& command, std::vector<std::string>& globs) {
    return command.add_option("--exclude", globs,
                              "Never touch members matching GLOB (repeatable; no '/' = base name; wins over --only)");
}

CLI::Option* add_color_option(CLI::App& app, std::string& color) {
    return app.add_option("--color", color, "Colour the text output: auto (on a terminal, unless NO_COLOR is set), "
                                            "always, never; never with --json")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->capture_default_str();
}

}  // namespace wheelfix::cli
