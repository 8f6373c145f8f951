// Shared option spellings (options.hpp has the contract).
#include "options.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/thread_budget.hpp"

#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace wheelfix::cli {

void require_output_directory(const std::string& output) {
    std::error_code ec;
    for (std::filesystem::path path = output; !path.empty(); path = path.parent_path()) {
        auto status = std::filesystem::status(path, ec);
        if (!std::filesystem::exists(status)) {
            if (path == path.parent_path()) break;
            continue;
        }
        if (std::filesystem::is_directory(status)) return;
        throw InputError(output, path.string() == output
                                     ? "is a file, but -o/-w names the directory the output wheel is written into "
                                       "(it is created if missing): name a directory, e.g. -o dist/"
                                     : "cannot be created: " + path.string() + " is a file, not a directory; "
                                       "name a directory for -o/-w, e.g. -o dist/");
    }
}

CLI::Validator non_empty_path() {
    return CLI::Validator(
        [](std::string& value) { return value.empty() ? std::string("an empty path names nothing") : std::string(); },
        "");
}

CLI::Option* add_wheel_dir_option(CLI::App& command, std::string& output, const std::string& description) {
    output = kDefaultWheelDir;
    return command
        .add_option("-o,--output,-w,--wheel-dir", output,
                    description + "; created if missing, as auditwheel's")
        ->check(non_empty_path());
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

void apply_threads_environment() {
    const char* text = std::getenv(kThreadsEnvironment);
    if (text == nullptr || *text == '\0') return;
    const std::string_view digits(text);
    unsigned threads = 0;
    const bool number = digits.size() <= 4 && digits.find_first_not_of("0123456789") == std::string_view::npos;
    if (number)
        for (char digit : digits) threads = threads * 10 + static_cast<unsigned>(digit - '0');
    if (!number || threads < 1 || threads > 4096)
        throw InputError(kThreadsEnvironment, "expected a number of threads from 1 to 4096 (got '" + std::string(text) + "')");
    set_thread_budget(threads);
}

std::pair<std::string, std::string> split_replacement(const std::string& text) {
    const auto equals = text.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == text.size())
        throw InputError("--replace-needed", "expected OLD=NEW, got '" + text + "'");
    return {text.substr(0, equals), text.substr(equals + 1)};
}

}  // namespace wheelfix::cli
