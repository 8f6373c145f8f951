// `wheelfix inspect WHEEL|ELF... [--json]`: report what is inside, changing nothing.
#include "commands.hpp"
#include "render.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace wheelfix::cli {

namespace {

bool is_wheel_path(const std::string& path) { return path.ends_with(".whl"); }

int run_inspect(const std::vector<std::string>& inputs, const GlobalOptions& global) {
    JsonWriter json;
    if (global.json) json.begin_object().field("schema", "wheelfix.inspect/1").key("inputs").begin_array();
    bool first = true;
    for (const auto& input : inputs) {
        if (is_wheel_path(input)) {
            auto report = analysis::inspect_wheel(input);
            if (global.json) write_json(json, report);
            else fmt::print("{}{}", first ? "" : "\n", render_text(report, global.verbose));
        } else {
            auto report = analysis::inspect_file(input);
            if (global.json) {
                json.begin_object().field("kind", "elf").key("file");
                write_json(json, report);
                json.end_object();
            } else {
                fmt::print("{}{}", first ? "" : "\n", render_text(report, global.verbose));
            }
        }
        first = false;
    }
    if (global.json) {
        json.end_array().end_object();
        fmt::print("{}", json.str());
    }
    return 0;
}

}  // namespace

CommandRunner register_inspect(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand("inspect", "Report what is inside wheels or ELF files: linkage, RPATH/RUNPATH, "
                                                  "glibc/libstdc++ floor and honest manylinux tag, CUDA runtime, "
                                                  "fatbin architectures, torch imports");
    auto inputs = std::make_shared<std::vector<std::string>>();
    command->add_option("inputs", *inputs, "Wheel files (*.whl) or ELF files")->required();
    return [inputs, &global] { return run_inspect(*inputs, global); };
}

}  // namespace wheelfix::cli
