// `wheelfix verify WHEEL...`: RECORD hashes and sizes, names, versions and tags, and a
// variant wheel's claims (analysis/variant.hpp verify_findings); this file renders them.
#include "commands.hpp"
#include "style.hpp"

#include "wheelfix/analysis/report_json.hpp"
#include "wheelfix/analysis/variant.hpp"
#include "wheelfix/wheel/wheel.hpp"

#include <fmt/format.h>

namespace wheelfix::cli {

namespace {

int run_verify(const std::vector<std::string>& inputs, const GlobalOptions& global) {
    JsonWriter json;
    if (global.json) begin_listing(json, "wheelfix.verify/1", "wheels");
    bool all_clean = true;
    const Palette colour = palette(global);
    for (const auto& input : inputs) {
        auto wheel = wheel::Wheel::open(input, wheel::WheelVersion::report);
        auto findings = analysis::verify_findings(wheel, input);
        all_clean = all_clean && findings.empty();
        if (global.json) {
            json.begin_object().field("path", input).field("ok", findings.empty()).key("findings").begin_array();
            for (const auto& finding : findings) analysis::write_json(json, finding);
            json.end_array().end_object();
            continue;
        }
        for (const auto& finding : findings)
            fmt::print("{}: {}: {}\n", input, finding.member, colour.bad(finding.problem));
        if (findings.empty() && !global.quiet)
            fmt::print("{}: {} ({} files, RECORD, names, version and tags agree)\n", input, colour.good("OK"),
                       wheel.record().size());
    }
    if (global.json) print_listing(json);
    return all_clean ? 0 : 1;
}

}  // namespace

CommandRunner register_verify(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand("verify", "Check RECORD hashes and sizes, member names, version and tag "
                                                 "agreement, a variant wheel's claims against its binaries; exit 1 on any finding");
    auto inputs = std::make_shared<std::vector<std::string>>();
    command->add_option("wheels", *inputs, "Wheel files")->required();
    return [inputs, &global] { return run_verify(*inputs, global); };
}

}  // namespace wheelfix::cli
