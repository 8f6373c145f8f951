// `wheelfix inspect|show WHEEL|ELF... [--target PROFILE] [--format text|json|markdown]`:
// report what is inside, changing nothing; with --target (or $WHEELFIX_TARGET),
// also what keeps each input from the profile; exit 1 when anything does.
// analysis/inspect.hpp reads and judges each input; this file renders it.
// --json is --format json; markdown is for CI job summaries.
#include "commands.hpp"
#include "options.hpp"
#include "style.hpp"

#include "wheelfix/analysis/inspect.hpp"
#include "wheelfix/analysis/report_json.hpp"
#include "wheelfix/analysis/report_markdown.hpp"
#include "wheelfix/analysis/report_text.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/text.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <variant>

namespace wheelfix::cli {

namespace {

enum class Format { text, json, markdown };

Format output_format(const std::string& format, const GlobalOptions& global) {
    if (global.json && !format.empty() && format != "json")
        throw InputError("--format " + format, "conflicts with --json (which is --format json)");
    if (global.json || format == "json") return Format::json;
    return format == "markdown" ? Format::markdown : Format::text;
}

// One input rendered in `format` (JSON goes into `json`, the rest is returned).
template <typename Report>
std::string render_input(const Report& report, const analysis::TargetFindings& judged, Format format, JsonWriter& json,
                         const GlobalOptions& global) {
    if (format == Format::markdown) return render_markdown(report, judged);
    if (format == Format::text) return render_text(report, global.verbose, palette(global)) + render_text(judged, palette(global));
    if constexpr (std::is_same_v<Report, analysis::WheelReport>) {
        analysis::write_json(json, report, &judged);
    } else {
        json.begin_object().field("kind", "elf").key("file");
        analysis::write_json(json, report);
        analysis::write_json(json, judged);
        json.end_object();
    }
    return {};
}

int run_inspect(const std::vector<std::string>& inputs, const std::string& target, const std::string& format_name,
                const GlobalOptions& global) {
    const Format format = output_format(format_name, global);
    std::optional<policy::Profile> profile;
    if (!target.empty()) profile = policy::load_profile(target);
    bool found_any = false;
    JsonWriter json;
    if (format == Format::json) begin_listing(json, "wheelfix.inspect/1", "inputs");
    analysis::SearchContext context;
    if (const char* library_path = std::getenv("LD_LIBRARY_PATH")) context.ldpaths = split_nonempty(library_path, ':');
    bool first = true;
    for (const auto& input : inputs) {
        const analysis::InspectedInput inspected = analysis::inspect_input(input, profile ? &*profile : nullptr, context);
        const std::string text = std::visit(
            [&](const auto& report) { return render_input(report, inspected.judged, format, json, global); },
            inspected.report);
        if (format != Format::json) fmt::print("{}{}", first ? "" : "\n", text);
        found_any = found_any || inspected.has_findings();
        first = false;
    }
    if (format == Format::json) print_listing(json);
    return found_any ? 1 : 0;
}

}  // namespace

CommandRunner register_inspect(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand("inspect", "Report what is inside wheels or ELF files: linkage, RPATH/RUNPATH, "
                                                  "glibc/libstdc++ floor and honest manylinux tag, CUDA runtime, "
                                                  "fatbin architectures, torch imports");
    command->alias("show");  // auditwheel's spelling
    auto inputs = std::make_shared<std::vector<std::string>>();
    auto target = std::make_shared<std::string>();
    auto format = std::make_shared<std::string>();
    command->add_option("inputs", *inputs, "Wheel files (*.whl) or ELF files")->required();
    add_target_option(*command, *target,
                      "Also judge against a target profile: a built-in name (cuda13-blackwell, "
                      "cuda13-blackwell-all, cuda12-hopper) or a profile file; exit 1 on findings");
    command->add_option("--format", *format,
                        "Output format: text (default), json (the same as --json), markdown (for CI job summaries)")
        ->check(CLI::IsMember({"text", "json", "markdown"}));
    return [inputs, target, format, &global] { return run_inspect(*inputs, *target, *format, global); };
}

}  // namespace wheelfix::cli
