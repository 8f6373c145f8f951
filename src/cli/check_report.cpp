// Rendering `wheelfix check` results (check_report.hpp has the contract).
#include "check_report.hpp"

#include "render.hpp"

#include "wheelfix/abi/drifts.hpp"
#include "wheelfix/util/json.hpp"
#include "wheelfix/util/table.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace wheelfix::cli {

namespace {

const abi::Drift* known_drift(const std::string& symbol, const std::string& successor) {
    for (const abi::Drift* drift : abi::drifts_for(symbol))
        if (drift->successor == successor) return drift;
    return nullptr;
}

bool member_fails(const abi::ElfCheck& check) { return !check.unresolved.empty() || !check.missing_libraries.empty(); }

// The members' counts, one row each: all with -v, the failing ones otherwise.
std::string member_table(const TorchResult& torch, const GlobalOptions& global, const Palette& colour) {
    bool any_missing_library = std::any_of(torch.members.begin(), torch.members.end(),
                                           [](const abi::ElfCheck& check) { return !check.missing_libraries.empty(); });
    std::vector<std::string> headers{"member", "resolved", "system", "weak", "unresolved"};
    if (any_missing_library) headers.push_back("missing libraries");
    Table table(std::move(headers));
    table.indent(2);
    for (std::size_t column = 1; column <= 4; ++column) table.align(column, Align::right);
    for (const abi::ElfCheck& check : torch.members) {
        if (!global.verbose && (global.quiet || !member_fails(check))) continue;
        std::string unresolved = std::to_string(check.unresolved.size());
        std::vector<std::string> row{check.member, std::to_string(check.resolved), std::to_string(check.system),
                                     std::to_string(check.weak_missing),
                                     check.unresolved.empty() ? unresolved : colour.bad(unresolved)};
        if (any_missing_library) row.push_back(colour.bad(join(check.missing_libraries, " ")));
        table.add_row(std::move(row));
    }
    return table.empty() ? std::string() : table.render_text();
}

std::string near_miss_text(const GroupedSymbol& group, const abi::NearMiss& miss) {
    std::string out = fmt::format("    near miss: {}  [{}]\n      {}\n", miss.demangled, miss.library,
                                  miss.compatibility.reason);
    if (const abi::Drift* drift = known_drift(group.symbol.name, miss.name))
        out += fmt::format("      known drift (torch {}): {}\n", drift->since, drift->source);
    return out;
}

std::string unresolved_text(const GroupedSymbol& group, const GlobalOptions& global, const Palette& colour,
                            const std::string& first_in = {}) {
    std::string out = fmt::format("  {}{}: {}\n", colour.bad("unresolved"), group.symbol.is_torch ? "" : " (not torch)",
                                  group.symbol.demangled);
    if (group.symbol.demangled != group.symbol.name || global.verbose)
        out += fmt::format("    symbol: {}{}\n", group.symbol.name,
                           group.symbol.version.empty() ? "" : "@" + group.symbol.version);
    out += "    needed by: " + join(group.needed_by, ", ") + "\n";
    if (!first_in.empty())
        out += "    not in this torch yet: first exported by torch " + first_in + "\n";
    else if (group.symbol.near_misses.empty() && group.symbol.is_torch)
        out += "    no export of this torch has the same name: removed or renamed\n";
    for (const abi::NearMiss& miss : group.symbol.near_misses) out += near_miss_text(group, miss);
    return out;
}

std::string torch_text(const TorchResult& torch, const GlobalOptions& global, const Palette& colour) {
    std::string out = fmt::format("{} ({}){}\n", colour.strong("torch " + torch.label), torch.source,
                                  torch.loads() ? ": " + colour.good("everything resolves") : "");
    out += member_table(torch, global, colour);
    for (const GroupedLibrary& library : torch.missing_libraries)
        out += fmt::format("  {}: {} (needed by {})\n", colour.bad("missing library"), library.name,
                           join(library.needed_by, ", "));
    for (const GroupedSymbol& group : torch.unresolved) out += unresolved_text(group, global, colour);
    return out;
}

void write_near_miss(JsonWriter& json, const GroupedSymbol& group, const abi::NearMiss& miss) {
    json.begin_object().field("name", miss.name).field("demangled", miss.demangled).field("library", miss.library);
    json.field("forwardable", miss.compatibility.forwardable);
    json.field("appended_zero_params", static_cast<std::uint64_t>(miss.compatibility.appended_zero_params));
    json.field("reason", miss.compatibility.reason).key("known_drift");
    if (const abi::Drift* drift = known_drift(group.symbol.name, miss.name))
        json.begin_object().field("since", drift->since).field("source", drift->source).end_object();
    else
        json.null();
    json.end_object();
}

void write_unresolved(JsonWriter& json, const GroupedSymbol& group) {
    json.begin_object().field("name", group.symbol.name).field("demangled", group.symbol.demangled);
    json.field("version", group.symbol.version).field("torch", group.symbol.is_torch);
    json.string_array("needed_by", group.needed_by).key("near_misses").begin_array();
    for (const abi::NearMiss& miss : group.symbol.near_misses) write_near_miss(json, group, miss);
    json.end_array().end_object();
}

void write_member(JsonWriter& json, const abi::ElfCheck& check) {
    json.begin_object().field("member", check.member);
    json.field("resolved", static_cast<std::uint64_t>(check.resolved));
    json.field("system", static_cast<std::uint64_t>(check.system));
    json.field("weak_missing", static_cast<std::uint64_t>(check.weak_missing));
    json.field("unresolved", static_cast<std::uint64_t>(check.unresolved.size()));
    json.string_array("missing_libraries", check.missing_libraries).end_object();
}

void write_torch(JsonWriter& json, const TorchResult& torch) {
    json.begin_object().field("source", torch.source).field("torch_version", torch.torch_version);
    json.field("cuda_version", torch.cuda_version).field("loads", torch.loads());
    json.field("missing", static_cast<std::uint64_t>(torch.missing()));
    json.string_array("install_notes", torch.install_notes);
    json.key("missing_libraries").begin_array();
    for (const GroupedLibrary& library : torch.missing_libraries)
        json.begin_object().field("name", library.name).string_array("needed_by", library.needed_by).end_object();
    json.end_array().key("unresolved").begin_array();
    for (const GroupedSymbol& group : torch.unresolved) write_unresolved(json, group);
    json.end_array().key("members").begin_array();
    for (const abi::ElfCheck& check : torch.members) write_member(json, check);
    json.end_array().end_object();
}

}  // namespace

std::string matrix_text(const CheckReport& report, const Palette& colour) {
    std::vector<std::string> cells;
    for (const TorchResult& torch : report.torches)
        cells.push_back(torch.loads() ? torch.label + " " + colour.good("yes")
                                      : fmt::format("{} {} ({} missing)", torch.label, colour.bad("NO"), torch.missing()));
    return "symbols resolve against: " + join(cells, ", ") + "\n";
}

std::string render_check_text(const CheckReport& report, const GlobalOptions& global) {
    const Palette colour = palette(global);
    std::string out;
    for (const TorchResult& torch : report.torches) out += torch_text(torch, global, colour);
    return out + matrix_text(report, colour);
}

namespace {

void write_report_fields(JsonWriter& json, const CheckReport& report) {
    json.field("input", report.input);
    json.field("loads_everywhere", report.loads_everywhere()).key("torches").begin_array();
    for (const TorchResult& torch : report.torches) write_torch(json, torch);
    json.end_array();
}

bool all_load(const std::vector<CheckReport>& reports) {
    return std::all_of(reports.begin(), reports.end(), [](const CheckReport& r) { return r.loads_everywhere(); });
}

}  // namespace

std::string write_check_json(const CheckReport& report, const std::function<void(JsonWriter&)>& extra) {
    JsonWriter json;
    json.begin_object().field("schema", "wheelfix.check/1");
    write_report_fields(json, report);
    if (extra) extra(json);
    json.end_object();
    return json.str();
}

std::string write_checks_json(const std::vector<CheckReport>& reports,
                              const std::vector<std::function<void(JsonWriter&)>>& extras) {
    JsonWriter json;
    json.begin_object().field("schema", "wheelfix.check/2").field("loads_everywhere", all_load(reports));
    json.key("inputs").begin_array();
    for (std::size_t i = 0; i < reports.size(); ++i) {
        json.begin_object();
        write_report_fields(json, reports[i]);
        if (i < extras.size() && extras[i]) extras[i](json);
        json.end_object();
    }
    json.end_array().end_object();
    return json.str();
}

std::string explain_releases_text(const analysis::ReleaseMatrix& run, const GlobalOptions& global) {
    const Palette colour = palette(global);
    const auto& torches = run.report.torches;
    std::string out;
    for (const auto& [i, j] : run.report.same_miss_runs()) {
        if (torches[i].loads()) continue;
        const std::string releases = torches[i].label + (j == i ? "" : " … " + torches[j].label);
        out += fmt::format("{} ({} missing, each once):\n", colour.strong("torch " + releases), torches[i].missing());
        for (const GroupedLibrary& library : torches[i].missing_libraries)
            out += fmt::format("  {}: {} (needed by {})\n", colour.bad("missing library"), library.name,
                               join(library.needed_by, ", "));
        for (const GroupedSymbol& group : torches[i].unresolved)
            out += unresolved_text(group, global, colour,
                                   group.symbol.near_misses.empty() ? run.report.first_resolving(j, group.symbol.name) : "");
    }
    return out;
}

std::string render_checks_summary(const std::vector<CheckReport>& reports, std::size_t nothing_to_check,
                                  const GlobalOptions& global) {
    const Palette colour = palette(global);
    std::vector<std::string> failing;
    for (const CheckReport& report : reports)
        if (!report.loads_everywhere()) failing.push_back(report.input);
    std::string out = fmt::format("{} inputs: {} load against every torch", reports.size(),
                                  reports.size() - failing.size());
    if (nothing_to_check > 0) out += fmt::format(" ({} with nothing to check)", nothing_to_check);
    if (failing.empty()) return out + "\n";
    return out + fmt::format(", {} {}: {}\n", failing.size(), colour.bad("do not"), join(failing, ", "));
}

}  // namespace wheelfix::cli
