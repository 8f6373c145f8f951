// The writers' records as text (report_text.hpp has the contract).
#include "wheelfix/repair/report_text.hpp"

#include "wheelfix/abi/signature.hpp"
#include "wheelfix/analysis/report_text.hpp"
#include "wheelfix/repair/report_json.hpp"
#include "wheelfix/util/text.hpp"

#include <fmt/format.h>

#include <algorithm>

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

std::string parameter_list(const abi::Signature& signature) {
    std::vector<std::string> spellings;
    for (const auto& param : signature.params) spellings.push_back(param.spelling);
    return "(" + join(spellings, ", ") + ")";
}

// The successor as people read it: just its parameter list when only that changed.
std::string target_text(const ShimmedSymbol& shimmed) {
    auto old_signature = abi::parse_signature(shimmed.symbol.name);
    auto new_signature = abi::parse_signature(shimmed.symbol.target.value_or(""));
    if (old_signature && new_signature && old_signature->qualified_name == new_signature->qualified_name)
        return parameter_list(*new_signature);
    return shimmed.target_demangled;
}

std::string symbol_line(const ShimmedSymbol& shimmed) {
    const auto& symbol = shimmed.symbol;
    if (shimmed.decision == ShimDecision::stub) return fmt::format("stub    {}: {}", symbol.demangled, shimmed.reason);
    std::string line = fmt::format("forward {} -> {}", symbol.demangled, target_text(shimmed));
    if (!shimmed.appended.empty()) line += " [appended " + join(shimmed.appended, ", ") + "]";
    if (shimmed.source != "near miss") line += " (" + shimmed.source + ")";
    return line;
}

std::string unrepaired_summary(const ShimResult& result) {
    auto stubs = std::count_if(result.symbols.begin(), result.symbols.end(),
                               [](const auto& s) { return s.decision == ShimDecision::stub; });
    return fmt::format("not fully repaired: {} stub(s) that abort when called, {} symbol(s) not shimmed, {} missing "
                       "torch librar(y/ies)",
                       stubs, result.not_shimmed.size(), result.missing_libraries.size());
}

std::string requirement_text(const std::pair<std::string, std::string>& change) {
    return (change.first.empty() ? "(none) -> " : change.first + " -> ") + change.second + (change.first.empty() ? " (added)" : "");
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
    for (const auto& distribution : report.distributions) lines.push_back("needs beside it: " + distribution.text());
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
        lines.push_back("Requires-Dist: " + runtime.requirement.text + " (added: NEEDs " + runtime.library + "; torch " +
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

std::string retag_text(const RetagResult& result, const RetagOptions& options) {
    std::string out;
    out += fmt::format("{} -> {}\n", result.file_name.before, result.file_name.after);
    if (result.fixed_file_name_version)
        out += fmt::format("  fixed      file name said {}, METADATA {}: METADATA wins\n", *result.fixed_file_name_version,
                           result.version.before);
    out += fmt::format("  version    {} -> {}\n", result.version.before, result.version.after);
    if (result.dist_info.before != result.dist_info.after)
        out += fmt::format("  dist-info  {} -> {}\n", result.dist_info.before, result.dist_info.after);
    for (const auto& change : result.requirements) out += fmt::format("  torch pin  {}\n", requirement_text(change));
    if (result.pin_specifier && result.requirements.empty())
        out += fmt::format("  torch pin  kept (a URL requirement)\n");
    if (result.tags.before != result.tags.after)
        out += fmt::format("  tags       {} -> {}\n", join(result.tags.before, " "), join(result.tags.after, " "));
    if (const auto kept = unchecked_platform_tags(result, options); !kept.empty())
        out += fmt::format("  platform   {} kept, not checked against the binaries (retag judges no tag): `wheelfix inspect` "
                           "shows the tag they deserve, --platform sets it, `wheelfix repair` sets it from them\n",
                           join(kept, "."));
    if (result.variant)
        for (const auto& line : variant_lines(*result.variant)) out += fmt::format("  {}\n", line);
    if (!result.plan.empty()) out += fmt::format("{}would write {} (dry run: nothing written)\n", result.plan, result.output.string());
    else out += fmt::format("wrote {}\n", result.output.string());
    return out;
}

std::string shim_text(const ShimResult& result, bool verbose, bool quiet) {
    std::string out;
    if (result.shim)
        out += fmt::format("shim for torch {} ({}): {}\n", result.torch_version, result.machine, result.shim_member);
    else
        out += fmt::format("nothing to shim: every torch function the extensions need resolves against torch {}\n",
                           result.torch_version);
    std::vector<std::string> lines;
    for (const auto& shimmed : result.symbols) {
        lines.push_back("  " + symbol_line(shimmed));
        if (!verbose) continue;  // with -v each symbol's own details follow it
        lines.back() += "\n      needed by " + join(shimmed.members, ", ");
        if (shimmed.decision == ShimDecision::forward) lines.back() += "\n      why: " + shimmed.reason;
    }
    for (const auto& skipped : result.not_shimmed)
        lines.push_back(fmt::format("not shimmed: {}: {} (needed by {})", skipped.demangled, skipped.reason,
                                    join(skipped.members, ", ")));
    for (const auto& line : analysis::once_each(lines)) out += fmt::format("{}\n", line);
    for (const auto& library : result.missing_libraries)
        out += fmt::format("missing: torch {} has no {} (a shim cannot replace a library)\n", result.torch_version, library);
    for (const auto& change : result.changed) {
        out += fmt::format("{}\n", change.member);
        for (const auto& line : change.changes) out += fmt::format("  {}\n", line);
    }
    for (const auto& [before, after] : result.requirements)
        out += fmt::format("torch pin  {}{}\n", before.empty() ? "(none) -> " : before + " -> ", after);
    if (result.variant)
        for (const auto& line : variant_lines(*result.variant)) out += fmt::format("{}\n", line);
    if (!result.plan.empty()) out += fmt::format("{}would write {} (dry run: nothing written)\n", result.plan, result.output.string());
    else if (!quiet) out += fmt::format("wrote {}\n", result.output.string());
    if (!fully_repaired(result)) out += fmt::format("{}\n", unrepaired_summary(result));
    return out;
}

}  // namespace wheelfix::repair
