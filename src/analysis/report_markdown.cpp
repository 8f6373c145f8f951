// Markdown renderings of the inspect reports (report_markdown.hpp has the contract).
#include "wheelfix/analysis/report_markdown.hpp"

#include "wheelfix/util/table.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace wheelfix::analysis {

namespace {

constexpr std::string_view kFail = "\u274C ";  // ❌
constexpr std::string_view kPass = "\u2705 ";  // ✅

std::string code(std::string_view text) {
    if (text.empty()) return {};
    // A code span must not contain its own delimiter run: widen it when the text has backticks.
    std::string fence = text.find('`') == std::string_view::npos ? "`" : "`` ";
    std::string close = fence == "`" ? "`" : " ``";
    return fence + std::string(text) + close;
}

std::string or_dash(const std::string& text) { return text.empty() ? "-" : text; }

std::string platform_text(const std::string& needs, const std::string& honest_tag) {
    return "needs " + needs + " → " + (honest_tag.empty() ? "no manylinux tag fits" : code(honest_tag));
}

std::string marked_support(const std::string& text) {
    return (text.find(" NO") != std::string::npos ? std::string(kFail) : std::string(kPass)) + text;
}

std::string elf_cuda_text(const ElfReport& elf) {
    if (elf.cudart_major) return fmt::format("libcudart.so.{}", *elf.cudart_major);
    return elf.fatbin.empty() ? "-" : "no libcudart in NEEDED";
}

std::string elf_search_path(const ElfReport& elf) {
    if (!elf.rpath && !elf.runpath) return "-";
    return fmt::format("{} {}", elf.runpath ? "RUNPATH" : "RPATH", code(search_path_text(elf)));
}

Table elf_table(const std::vector<ElfReport>& elves) {
    Table table({"file", "size", "needs", "honest tag", "search path", "CUDA", "fatbin", "Blackwell"});
    table.align(1, Align::right);
    for (const auto& elf : elves)
        table.add_row({code(elf.name), human_size(elf.size), needs_text(elf.needs), or_dash(code(elf.honest_tag)),
                       elf_search_path(elf), elf_cuda_text(elf), or_dash(fatbin_text(elf.fatbin)),
                       elf.blackwell.empty() ? "-" : marked_support(blackwell_text(elf.blackwell))});
    return table;
}

Table module_table(const WheelReport& report) {
    Table table({"module", "variants", "Blackwell"});
    table.align(1, Align::right);
    for (const auto& module : report.modules)
        table.add_row({code(module.name), std::to_string(module.variants.size()),
                       marked_support(module_support_text(module))});
    return table;
}

std::string target_section(const TargetFindings& target) {
    if (!target.profile) return {};
    const auto& profile = *target.profile;
    std::string heading = fmt::format("\n#### target {} ({})\n\n", code(profile.name), profile.source);
    std::string coverage;
    if (!target.coverage.empty()) {
        Table table({"module / variant", "the profile's SMs"});
        for (const auto& row : target.coverage) {
            auto text = coverage_text(row);
            table.add_row({row.is_module ? code(row.name) : "variant " + code(row.name),
                           marked_support(text.substr(text.find(": ") + 2))});
        }
        coverage = "\n" + table.render_markdown();
    }
    if (target.findings.empty()) return heading + std::string(kPass) + "no findings\n" + coverage;
    auto fixable = std::count_if(target.findings.begin(), target.findings.end(),
                                 [](const Finding& finding) { return finding.repair_fixes; });
    Table table({"kind", "member", "finding", "fixed by repair"});
    for (const auto& finding : target.findings)
        table.add_row({kind_name(finding.kind), or_dash(code(finding.member)), finding.message,
                       finding.repair_fixes ? "yes" : "no"});
    return heading + fmt::format("{}{} finding(s), {} fixed by `wheelfix repair`\n\n", kFail, target.findings.size(),
                                 fixable) +
           table.render_markdown() + coverage;
}

}  // namespace

std::string render_markdown(const WheelReport& report, const TargetFindings& target) {
    Table facts({"", ""});
    facts.add_row({"name", code(report.distribution)});
    std::string version = code(report.version);
    if (report.filename_version != report.version)
        version = fmt::format("{}{} (file name says {})", kFail, version, code(report.filename_version));
    facts.add_row({"version", version});
    std::vector<std::string> tags;
    for (const auto& tag : report.tags) tags.push_back(code(tag));
    facts.add_row({"tags", join(tags, " ")});
    facts.add_row({"torch", report.torch_requirements.empty() ? "no Requires-Dist on torch"
                                                              : code(join(wheel::requirement_summaries(report.torch_requirements), "; "))});
    facts.add_row({"RECORD", (report.record_findings.empty() ? std::string(kPass) : std::string(kFail)) + record_text(report)});
    if (!report.elves.empty()) {
        const auto verdict = report.honest_tag.empty() ? platform_verdict(report) : code(report.honest_tag);
        facts.add_row({"platform", "needs " + needs_text(report.needs) + " → " + verdict});
        for (const auto& text : outside_library_texts(report)) facts.add_row({"", std::string(kFail) + text});
        if (report.libraries)
            if (auto beside = provided_beside_text(*report.libraries); !beside.empty())
                facts.add_row({"", "not counted against the tag, provided beside the wheel: " + beside});
    }
    for (const auto& elf : report.elves)
        for (const auto& concern : abi_concerns(elf))
            facts.add_row({"", fmt::format("{}{} {}", kFail, code(elf.name), concern.message)});
    for (const auto& claim : report.platform_claims)
        if (claim.lies) facts.add_row({"", fmt::format("{}tag {} LIES: needs {}", kFail, code(claim.tag), claim.violation)});
    for (const auto& name : report.not_elf)
        facts.add_row({"not ELF", code(name) + " is named like a library but is not ELF"});
    facts.add_row({"ELF files", std::to_string(report.elves.size())});

    std::string out = fmt::format("### {}\n\n", code(report.path)) + facts.render_markdown();
    if (!report.elves.empty()) out += "\n#### ELF files\n\n" + elf_table(report.elves).render_markdown();
    if (!report.modules.empty()) out += "\n#### CUDA modules\n\n" + module_table(report).render_markdown();
    out += target_section(target);
    if (report.libraries) {
        Table libraries({"member", "library", "class", "resolves to"});
        for (auto& row : library_rows(*report.libraries))
            libraries.add_row({code(row[0]), code(row[1]), row[2], row[3]});
        if (!libraries.empty()) out += "\n#### Libraries\n\n" + libraries.render_markdown();
    }
    return out;
}

std::string render_markdown(const ElfReport& report, const TargetFindings& target) {
    Table facts({"", ""});
    facts.add_row({"kind", fmt::format("{} {}-endian {} {}", report.elf_class, report.endian, report.machine, report.type)});
    facts.add_row({"size", human_size(report.size)});
    if (report.soname) facts.add_row({"soname", code(*report.soname)});
    std::vector<std::string> needed;
    for (const auto& name : report.needed) needed.push_back(code(name));
    facts.add_row({"needed", needed.empty() ? "-" : join(needed, " ")});
    facts.add_row({"search path", elf_search_path(report)});
    facts.add_row({"platform", platform_text(needs_text(report.needs), report.honest_tag)});
    for (const auto& concern : abi_concerns(report)) facts.add_row({"", std::string(kFail) + concern.message});
    facts.add_row({"cuda", elf_cuda_text(report)});
    if (!report.fatbin.empty()) {
        facts.add_row({"fatbin", fatbin_text(report.fatbin)});
        facts.add_row({"blackwell", marked_support(blackwell_text(report.blackwell))});
    }
    facts.add_row({"symbols", fmt::format("{} defined, {} undefined, {} from torch", report.defined_symbols,
                                          report.undefined_symbols, report.torch_imports.size())});
    return fmt::format("### {}\n\n", code(report.name)) + facts.render_markdown() + target_section(target);
}

}  // namespace wheelfix::analysis
