// The writers' records as text (report_text.hpp has the contract).
#include "wheelfix/repair/report_text.hpp"

#include "wheelfix/analysis/report_text.hpp"

#include <fmt/format.h>

namespace wheelfix::repair {

namespace {

std::string counted(std::size_t count, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", count, count == 1 ? one : many);
}

std::vector<std::string> finding_lines(const std::vector<analysis::Finding>& findings) {
    std::vector<std::string> lines;
    for (const auto& finding : findings) lines.push_back(finding.message);
    return lines;
}

}  // namespace

std::vector<std::string> variant_lines(const VariantOutcome& variant) {
    std::vector<std::string> lines{"variant '" + variant.label + "' (variant.json schema " +
                                   wheel::variant_schema_name(variant.schema) + ")"};
    for (auto& line : wheel::property_lines(variant.properties)) lines.push_back("  " + line);
    return lines;
}

std::vector<std::string> wrong_lines(const RepairReport& report) {
    std::vector<std::string> lines;
    if (report.unresolved_torch_symbols > 0)
        lines.push_back(fmt::format("torch {} does not export {} the extensions need", report.torch_version,
                                    counted(report.unresolved_torch_symbols, "torch function", "torch functions")));
    if (!report.absolute_rpath_entries.empty())
        lines.push_back(counted(report.absolute_rpath_entries.size(), "search path entry", "search path entries") +
                        " outside the wheel (build trees, absolute paths): dropped");
    if (report.retag.wheel_tags_rewritten) lines.push_back("WHEEL's Tag lines disagree with the file name: rewritten");
    if (!report.grafted.empty())
        lines.push_back(counted(report.grafted.size(), "library", "libraries") + " from the build machine, not in the wheel: grafted");
    for (const auto& name : report.resolution.names_of(analysis::LibraryClass::python))
        lines.push_back("links " + name + " (forbidden for manylinux wheels): NEEDED removed");
    for (const auto& distribution : report.distributions) lines.push_back("needs beside it: " + distribution);
    for (auto& line : finding_lines(report.findings_before)) lines.push_back(std::move(line));
    return lines;
}

std::vector<std::string> done_lines(const RepairReport& report, bool verbose) {
    std::vector<std::string> lines;
    for (const auto& graft : report.grafted) {
        lines.push_back("grafted " + graft.needed_name + " -> " + graft.member + " (from " + graft.source.string() + ")");
        if (verbose)
            for (const auto& line : graft.changes) lines.push_back("  " + line);
    }
    for (const auto& change : report.relinked) {
        lines.push_back("relinked " + change.member);
        if (verbose)
            for (const auto& line : change.changes) lines.push_back("  " + line);
    }
    if (report.shim.shim) {
        auto stubs = report.stubbed.size();
        lines.push_back(fmt::format("added {} ({}, {})", report.shim.shim_member,
                                    counted(report.shim.symbols.size() - stubs, "forwarder", "forwarders"),
                                    counted(stubs, "stub", "stubs")));
    }
    const auto& retag = report.retag;
    if (retag.version.before == retag.version.after)
        lines.push_back("version " + retag.version.before + " kept" +
                        (report.torch_skipped ? ": no torch was checked (no --torch)"
                         : report.uses_torch  ? ""
                                              : ": no extension links or imports torch"));
    else
        lines.push_back("version " + retag.version.before + " -> " + retag.version.after);
    for (const auto& [before, after] : retag.requirements)
        lines.push_back("Requires-Dist: " + (before.empty() ? after + " (added)" : before + " -> " + after));
    for (const auto& runtime : report.runtime_requires)
        lines.push_back("Requires-Dist: " + runtime.line + " (added: NEEDs " + runtime.library + "; torch " +
                        report.torch_version + " is " +
                        (report.runtime_torch_cuda.empty() ? std::string("a CPU build")
                                                           : "a CUDA " + report.runtime_torch_cuda + " build") +
                        ")");
    if (report.platform_after != report.platform_before)
        lines.push_back("platform " + report.platform_before + " -> " + report.platform_after);
    if (report.variant)
        for (auto& line : variant_lines(*report.variant)) lines.push_back(std::move(line));
    return lines;
}

std::vector<std::string> load_lines(const RepairReport& report) {
    std::vector<std::string> lines;
    for (const auto& load : report.loads) {
        if (load.status == LoadOutcome::Status::loaded)
            lines.push_back("loads " + load.member + " (RTLD_NOW" + (load.stand_in.empty() ? "" : "; " + load.stand_in) + ")");
        else if (load.status == LoadOutcome::Status::not_tested)
            lines.push_back("not proven " + load.member + ": " + load.reason);
    }
    if (report.written && report.loads.empty() && !report.load_test_skipped.empty())
        lines.push_back("load test skipped: " + report.load_test_skipped);
    return lines;
}

std::vector<std::string> left_lines(const RepairReport& report) {
    auto lines = finding_lines(report.remaining);
    for (const auto& load : report.loads)
        if (load.status == LoadOutcome::Status::failed) lines.push_back("does not load: " + load.member + ": " + load.reason);
    std::vector<std::string> symbols;
    for (const auto& symbol : report.stubbed) symbols.push_back("stub (aborts when called): " + symbol);
    for (const auto& skipped : report.shim.not_shimmed) symbols.push_back("not shimmed: " + skipped.demangled + ": " + skipped.reason);
    for (auto& line : analysis::once_each(symbols)) lines.push_back(std::move(line));
    return lines;
}

std::string repair_verdict(const RepairReport& report, const RepairOptions& options) {
    auto name = report.output.string();
    if (report.written && report.not_proven())
        return (report.clean() ? "wrote (not proven: " : "wrote (findings left; not proven: ") +
               counted(report.not_loaded(), "member", "members") + " not loaded; --no-load-test to skip the proof) " +
               name;
    if (report.written) return (report.clean() ? "wrote " : "wrote (findings left) ") + name;
    if (options.dry_run) return "would write " + name + " (dry run)";
    if (report.withdrawn && options.strict)
        return "removed again (--strict, findings left once written): " + name;
    if (report.withdrawn) return "not written (does not load): " + name;
    return "not written (--strict, findings left): " + name;
}

}  // namespace wheelfix::repair
