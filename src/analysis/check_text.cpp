// Rendering `wheelfix check` results (check_text.hpp has the contract).
#include "wheelfix/analysis/check_text.hpp"

#include "wheelfix/abi/drifts.hpp"
#include "wheelfix/util/table.hpp"
#include "wheelfix/util/text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace wheelfix::analysis {

namespace {

bool member_fails(const abi::ElfCheck& check) { return !check.unresolved.empty() || !check.missing_libraries.empty(); }

// The members' counts, one row each: all with -v, the failing ones otherwise.
std::string member_table(const TorchResult& torch, Detail detail, const Palette& colour) {
    bool any_missing_library = std::any_of(torch.members.begin(), torch.members.end(),
                                           [](const abi::ElfCheck& check) { return !check.missing_libraries.empty(); });
    std::vector<std::string> headers{"member", "resolved", "system", "elsewhere", "weak", "unresolved"};
    if (any_missing_library) headers.push_back("missing libraries");
    Table table(std::move(headers));
    table.indent(2);
    for (std::size_t column = 1; column <= 5; ++column) table.align(column, Align::right);
    for (const abi::ElfCheck& check : torch.members) {
        if (detail != Detail::verbose && (detail == Detail::quiet || !member_fails(check))) continue;
        std::string unresolved = std::to_string(check.unresolved.size());
        std::vector<std::string> row{check.member, std::to_string(check.resolved), std::to_string(check.system),
                                     std::to_string(check.elsewhere), std::to_string(check.weak_missing),
                                     check.unresolved.empty() ? unresolved : colour.bad(unresolved)};
        if (any_missing_library) row.push_back(colour.bad(join(check.missing_libraries, " ")));
        table.add_row(std::move(row));
    }
    return table.empty() ? std::string() : table.render_text();
}

std::string near_miss_text(const GroupedSymbol& group, const abi::NearMiss& miss) {
    std::string out = fmt::format("    near miss: {}  [{}]\n      {}\n", miss.demangled, miss.library,
                                  miss.compatibility.reason);
    if (const abi::Drift* drift = abi::known_drift(group.symbol.name, miss.name))
        out += fmt::format("      known drift (torch {}): {}\n", drift->since, drift->source);
    return out;
}

std::string unresolved_text(const GroupedSymbol& group, Detail detail, const Palette& colour,
                            const std::string& first_in = {}) {
    std::string out = fmt::format("  {}{}: {}\n", colour.bad("unresolved"), group.symbol.is_torch ? "" : " (not torch)",
                                  group.symbol.demangled);
    if (group.symbol.demangled != group.symbol.name || detail == Detail::verbose)
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

std::string missing_libraries_text(const TorchResult& torch, const Palette& colour) {
    std::string out;
    for (const GroupedLibrary& library : torch.missing_libraries)
        out += fmt::format("  {}: {} (needed by {})\n", colour.bad("missing library"), library.name,
                           join(library.needed_by, ", "));
    return out;
}

std::string torch_text(const TorchResult& torch, Detail detail, const Palette& colour) {
    std::string out = fmt::format("{} ({}){}\n", colour.strong("torch " + torch.label), torch.source,
                                  torch.loads() ? ": " + colour.good("everything resolves") : "");
    out += member_table(torch, detail, colour);
    out += missing_libraries_text(torch, colour);
    for (const GroupedLibrary& library : torch.not_covered)
        out += fmt::format("  {}: {} ({}; needed by {})\n", colour.warn("not covered"), library.name,
                           torch.uncovered_reason(library.name), join(library.needed_by, ", "));
    for (const GroupedSymbol& group : torch.unresolved) out += unresolved_text(group, detail, colour);
    return out;
}

std::string matrix_text(const CheckReport& report, const Palette& colour) {
    std::vector<std::string> cells;
    for (const TorchResult& torch : report.torches)
        if (torch.loads())
            cells.push_back(torch.label + " " + colour.good("yes"));
        else if (torch.missing() == 0 && !torch.not_covered.empty())
            cells.push_back(fmt::format("{} {} ({})", torch.label, colour.warn("not covered"),
                                        torch.uncovered_reason(torch.not_covered.front().name)));
        else
            cells.push_back(fmt::format("{} {} ({} missing)", torch.label, colour.bad("NO"), torch.missing()));
    return "symbols resolve against: " + join(cells, ", ") + "\n";
}

std::string render_check_text(const CheckReport& report, Detail detail, const Palette& colour) {
    std::string out;
    for (const TorchResult& torch : report.torches) out += torch_text(torch, detail, colour);
    return out + matrix_text(report, colour);
}

std::string render_checks_summary(const std::vector<CheckReport>& reports, std::size_t nothing_to_check,
                                  const Palette& colour) {
    std::vector<std::string> failing;
    for (const CheckReport& report : reports)
        if (!report.loads_everywhere()) failing.push_back(report.input);
    std::string out = fmt::format("{} inputs: {} load against every torch", reports.size(),
                                  reports.size() - failing.size());
    if (nothing_to_check > 0) out += fmt::format(" ({} with nothing to check)", nothing_to_check);
    if (failing.empty()) return out + "\n";
    return out + fmt::format(", {} {}: {}\n", failing.size(), colour.bad("do not"), join(failing, ", "));
}

}  // namespace

std::string explain_releases_text(const ReleaseMatrix& run, Detail detail, const Palette& colour) {
    const auto& torches = run.report.torches;
    std::string out;
    for (const auto& [i, j] : run.report.same_miss_runs()) {
        if (torches[i].missing() == 0) continue;  // not covered and runtime cells are named in the matrix's lines
        const std::string releases = torches[i].label + (j == i ? "" : " … " + torches[j].label);
        out += fmt::format("{} ({} missing, each once):\n", colour.strong("torch " + releases), torches[i].missing());
        out += missing_libraries_text(torches[i], colour);
        for (const GroupedSymbol& group : torches[i].unresolved)
            out += unresolved_text(group, detail, colour,
                                   group.symbol.near_misses.empty() ? run.report.first_resolving(j, group.symbol.name) : "");
    }
    return out;
}

std::string render_checks_text(const CheckRun& run, Detail detail, const Palette& colour) {
    const std::vector<CheckReport>& reports = run.reports;
    if (reports.size() == 1) return render_check_text(reports.front(), detail, colour);
    std::string out;
    std::size_t nothing_to_check = 0;
    for (std::size_t i = 0; i < reports.size(); ++i) {
        if (run.nothing_to_check[i]) {
            out += reports[i].input + ": no ELF shared objects: nothing to check\n\n";
            ++nothing_to_check;
            continue;
        }
        out += reports[i].input + ":\n" + render_check_text(reports[i], detail, colour) + "\n";
    }
    return out + render_checks_summary(reports, nothing_to_check, colour);
}

}  // namespace wheelfix::analysis
