// `wheelfix inspect WHEEL|ELF... [--target PROFILE] [--json]`: report what is inside,
// changing nothing; with --target, also what keeps each input from the profile
// (policy/evaluate.hpp), and exit 1 when anything does.
#include "commands.hpp"
#include "render.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace wheelfix::cli {

namespace {

bool is_wheel_path(const std::string& path) { return path.ends_with(".whl"); }

int run_inspect(const std::vector<std::string>& inputs, const std::string& target, const GlobalOptions& global) {
    std::optional<policy::Profile> profile;
    if (!target.empty()) profile = policy::load_profile(target);
    bool found_any = false;
    JsonWriter json;
    if (global.json) json.begin_object().field("schema", "wheelfix.inspect/1").key("inputs").begin_array();
    bool first = true;
    for (const auto& input : inputs) {
        std::string text;
        TargetFindings judged{profile ? &*profile : nullptr, {}};
        if (is_wheel_path(input)) {
            auto report = analysis::inspect_wheel(input);
            if (profile) judged.findings = policy::evaluate(*profile, report);
            if (global.json) write_json(json, report, &judged);
            else text = render_text(report, global.verbose) + render_text(judged);
        } else {
            auto report = analysis::inspect_file(input);
            if (profile) judged.findings = policy::evaluate(*profile, report);
            if (global.json) {
                json.begin_object().field("kind", "elf").key("file");
                write_json(json, report);
                write_json(json, judged);
                json.end_object();
            } else {
                text = render_text(report, global.verbose) + render_text(judged);
            }
        }
        if (!global.json) fmt::print("{}{}", first ? "" : "\n", text);
        found_any = found_any || !judged.findings.empty();
        first = false;
    }
    if (global.json) {
        json.end_array().end_object();
        fmt::print("{}", json.str());
    }
    return found_any ? 1 : 0;
}

}  // namespace

CommandRunner register_inspect(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand("inspect", "Report what is inside wheels or ELF files: linkage, RPATH/RUNPATH, "
                                                  "glibc/libstdc++ floor and honest manylinux tag, CUDA runtime, "
                                                  "fatbin architectures, torch imports");
    auto inputs = std::make_shared<std::vector<std::string>>();
    auto target = std::make_shared<std::string>();
    command->add_option("inputs", *inputs, "Wheel files (*.whl) or ELF files")->required();
    command->add_option("--target", *target,
                        "Also judge against a target profile: a built-in name (cuda13-blackwell, "
                        "cuda13-blackwell-all, cuda12-hopper) or a profile file; exit 1 on findings");
    return [inputs, target, &global] { return run_inspect(*inputs, *target, global); };
}

}  // namespace wheelfix::cli
