// Text renderings of the inspect reports (report_text.hpp has the contract).
#include "wheelfix/analysis/report_text.hpp"

#include <fmt/format.h>

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/table.hpp"

#include <algorithm>
#include <map>

namespace wheelfix::analysis {

namespace {

constexpr std::size_t kLabelWidth = 11;

std::string line(std::string_view label, std::string_view value, int indent = 2) {
    const std::size_t width = visible_width(label);
    std::string padding(width < kLabelWidth ? kLabelWidth - width : 0, ' ');
    return fmt::format("{:{}}{}{} {}\n", "", indent, label, padding, value);
}

}  // namespace

std::string needs_text(const policy::NeededVersions& needs) {
    std::vector<std::string> parts;
    for (const policy::VersionFamily& family : policy::kVersionFamilies)
        if (!(needs.*family.need).empty()) parts.push_back(std::string(family.prefix) + "_" + needs.*family.need);
    if (needs.links_musl) parts.push_back(needs.musl.empty() ? "musl libc" : "musl libc " + needs.musl + " (" + needs.musl_reason + ")");
    return parts.empty() ? "no versioned libc/libstdc++ symbols" : join(parts, " ");
}

std::string search_path_text(const ElfReport& report) {
    std::vector<std::string> parts;
    for (const auto& entry : report.search_path) {
        std::string text = entry.path;
        if (entry.absolute) text += " [absolute]";
        if (entry.outside_wheel) text += " [outside the wheel]";
        parts.push_back(std::move(text));
    }
    return join(parts, ":");
}

// One part per kind of entry, in order of first appearance, with its count: a
// real extension holds one entry per kernel and architecture (sgl-kernel's
// listed one by one made a 7,292-character line). Past kMaxFatbinKinds kinds the
// rest is counted; --json lists every entry.
std::string fatbin_text(const std::vector<cuda::FatbinEntry>& entries) {
    constexpr std::size_t kMaxFatbinKinds = 8;
    std::vector<std::pair<std::string, std::size_t>> kinds;
    for (const auto& entry : entries) {
        auto text = fmt::format("{} {}{}", entry.kind_name(), entry.arch_name(), entry.compressed ? " (compressed)" : "");
        auto seen = std::find_if(kinds.begin(), kinds.end(), [&](const auto& kind) { return kind.first == text; });
        if (seen == kinds.end()) kinds.emplace_back(std::move(text), 1);
        else ++seen->second;
    }
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < kinds.size() && i < kMaxFatbinKinds; ++i)
        parts.push_back(kinds[i].second == 1 ? kinds[i].first : fmt::format("{} x{}", kinds[i].first, kinds[i].second));
    if (kinds.size() > kMaxFatbinKinds)
        parts.push_back(fmt::format("and {} more kinds (--json lists every entry)", kinds.size() - kMaxFatbinKinds));
    return join(parts, ", ");
}

std::string blackwell_text(const std::vector<GpuSupport>& support, const Palette& colour) {
    std::vector<std::string> parts;
    for (const auto& row : support)
        parts.push_back(row.runs ? fmt::format("sm_{} {} ({})", row.sm, colour.good("yes"), row.how)
                                 : fmt::format("sm_{} {}", row.sm, colour.bad("NO")));
    return join(parts, "; ");
}

namespace {

// "sm100/" for sgl_kernel/sm100/x.so: which variant serves an SM.
std::string variant_directory(const std::string& member) {
    auto slash = member.rfind('/');
    if (slash == std::string::npos) return {};
    auto up = member.rfind('/', slash - 1);
    return member.substr(up == std::string::npos ? 0 : up + 1, slash - (up == std::string::npos ? 0 : up + 1)) + "/";
}

// "sm_100 yes (sm100/: cubin sm_100a); sm_120 NO": the variant's directory named
// when the member serving an SM is not `name` itself (a module of several variants).
std::string support_text(const std::vector<ModuleSupport>& sms, std::string_view name, const Palette& colour) {
    std::vector<std::string> parts;
    for (const auto& row : sms) {
        if (!row.runs) parts.push_back(fmt::format("sm_{} {}", row.sm, colour.bad("NO")));
        else if (row.member != name)
            parts.push_back(fmt::format("sm_{} {} ({}: {})", row.sm, colour.good("yes"), variant_directory(row.member), row.how));
        else parts.push_back(fmt::format("sm_{} {} ({})", row.sm, colour.good("yes"), row.how));
    }
    return join(parts, "; ");
}

}  // namespace

std::string module_support_text(const CudaModule& module, const Palette& colour) {
    return support_text(module.blackwell, module.name, colour);
}

std::string coverage_text(const CoverageRow& row, const Palette& colour) {
    return (row.is_module ? "" : "  ") + row.name + ": " + support_text(row.sms, row.name, colour);
}

namespace {

std::string modules_text(const WheelReport& report, const Palette& colour) {
    std::string out;
    for (const auto& module : report.modules) {
        std::string variants = module.variants.size() > 1 ? fmt::format("  ({} variants)", module.variants.size()) : "";
        out += line("module", module.name + variants);
        out += line("", module_support_text(module, colour));
    }
    return out;
}

std::string torch_imports_text(const std::vector<TorchImport>& imports) {
    std::string out;
    std::string current_library;
    for (const auto& import : imports) {
        if (import.library != current_library) {
            current_library = import.library;
            out += fmt::format("    {} (by namespace)\n", current_library);
        }
        out += fmt::format("      {}\n", import.demangled);
    }
    return out;
}

}  // namespace

std::string record_text(const WheelReport& report) {
    if (report.record_findings.empty()) return fmt::format("ok ({} files hashed)", report.member_count);
    return fmt::format("{} problem(s), run 'wheelfix verify' for the list", report.record_findings.size());
}

std::vector<std::string> once_each(const std::vector<std::string>& lines) {
    std::vector<std::string> unique;
    std::vector<std::size_t> counts;
    for (const auto& line : lines) {
        const auto seen = std::find(unique.begin(), unique.end(), line);
        if (seen != unique.end()) {
            ++counts[static_cast<std::size_t>(seen - unique.begin())];
            continue;
        }
        unique.push_back(line);
        counts.push_back(1);
    }
    for (std::size_t i = 0; i < unique.size(); ++i)
        if (counts[i] > 1) unique[i] += fmt::format(" ({} symbols of that name: constructor or destructor variants)", counts[i]);
    return unique;
}

namespace {

std::string where_text(const ResolvedNeed& need) {
    std::vector<std::string> parts;
    if (!need.location.empty()) parts.push_back(need.location + (need.via.empty() ? "" : " (" + need.via + ")"));
    if (!need.distribution.empty()) parts.push_back("from " + need.distribution);
    if (!need.problem.empty()) parts.push_back(need.problem);
    if (parts.empty()) return "-";
    std::string where = parts.front();
    for (std::size_t i = 1; i < parts.size(); ++i) where += (i + 1 == parts.size() && !need.problem.empty() ? ": " : ", ") + parts[i];
    return where;
}

// Every NEEDED per member (and grafted library): library, class, where it resolves.
std::string libraries_text(const NeededResolution& libraries) {
    Table table({"member", "library", "class", "resolves to"});
    table.indent(2);
    for (auto& row : library_rows(libraries)) table.add_row(std::move(row));
    if (table.empty()) return {};
    return "\n" + line("libraries", "each NEEDED as ld.so resolves it (LD_LIBRARY_PATH as --ldpaths)", 0) + table.render_text();
}

}  // namespace

std::vector<std::vector<std::string>> library_rows(const NeededResolution& libraries) {
    std::vector<std::vector<std::string>> rows;
    auto add = [&](const ElfNeeds& object, const std::string& label) {
        for (const auto& need : object.needs)
            rows.push_back({label, need.name, library_class_name(need.library_class), where_text(need)});
    };
    for (const auto& object : libraries.members) add(object, object.name);
    for (std::size_t i = 0; i < libraries.grafts.size(); ++i) add(libraries.graft_needs[i], libraries.grafts[i].needed_name + " (graft)");
    return rows;
}

std::string platform_verdict(const WheelReport& report) {
    if (!report.honest_tag.empty()) return report.honest_tag;
    if (report.outside_libraries.empty() || report.elves.empty()) return "no manylinux tag fits";
    std::string verdict = "linux_" + report.elves.front().machine + " as it stands: needs libraries from outside the wheel";
    if (!report.symbol_tag.empty()) verdict += " (its symbols alone allow " + report.symbol_tag + ")";
    return verdict;
}

std::vector<std::string> outside_library_texts(const WheelReport& report) {
    std::vector<std::string> texts;
    for (const auto& library : report.outside_libraries) {
        std::string text = library.name + " (needed by " + join(library.needed_by, ", ") + "): ";
        if (library.library_class == LibraryClass::graft)
            text += "found outside the wheel at " + library.location + ", not allowed by the policy; repair grafts it";
        else
            text += "not in the wheel, not allowed by the policy and missing (" + library.problem + "); repair refuses the wheel";
        texts.push_back(std::move(text));
    }
    return texts;
}

std::string provided_beside_text(const NeededResolution& libraries) {
    std::vector<std::string> parts;
    for (const auto& [provider, names] : libraries.provided_beside()) parts.push_back(provider + " (" + join(names, ", ") + ")");
    return join(parts, ", ");
}

std::string render_text(const ElfReport& report, bool verbose, const Palette& colour) {
    std::string out = fmt::format("{}  ({} {}-endian {} {}, {})\n", colour.strong(report.name), report.elf_class, report.endian,
                                  report.machine, report.type, human_size(report.size));
    if (report.soname) out += line("soname", *report.soname);
    out += line("needed", report.needed.empty() ? "-" : join(report.needed, " "));
    if (report.rpath || report.runpath)
        out += line(report.runpath ? "runpath" : "rpath", search_path_text(report));
    if (report.rpath && report.runpath) out += line("rpath", *report.rpath + " (ignored: RUNPATH is set)");
    std::string floor = needs_text(report.needs);
    floor += report.honest_tag.empty() ? "  -> no manylinux tag fits" : "  -> " + report.honest_tag;
    out += line("needs", floor);
    for (const auto& concern : abi_concerns(report)) out += line("costs", concern.message);
    if (report.cudart_major) out += line("cuda", fmt::format("runtime {} (libcudart.so.{})", *report.cudart_major, *report.cudart_major));
    else if (!report.fatbin.empty()) out += line("cuda", "no libcudart in NEEDED (static runtime or loaded another way)");
    if (!report.cuda_libraries.empty() && verbose) out += line("cuda libs", join(report.cuda_libraries, " "));
    if (!report.fatbin.empty()) {
        out += line("fatbin", fatbin_text(report.fatbin));
        out += line("blackwell", blackwell_text(report.blackwell, colour));
    }
    out += line("symbols", fmt::format("{} defined, {} undefined, {} from torch", report.defined_symbols,
                                       report.undefined_symbols, report.torch_imports.size()));
    out += torch_imports_text(report.torch_imports);
    if (!report.shim_for_torch.empty()) {
        out += line("shim", fmt::format("wheelfix shim for torch {}, provides:", report.shim_for_torch));
        for (const auto& name : report.shim_provides) out += fmt::format("      {}\n", name);
    }
    return out;
}

std::string render_text(const WheelReport& report, bool verbose, const Palette& colour) {
    std::string out = colour.strong(report.path) + "\n";
    out += line("name", report.distribution);
    std::string version = report.version;
    if (!report.local_version.empty()) version += fmt::format("  (local: {})", report.local_version);
    if (report.filename_version != report.version) version += fmt::format("  (file name says {})", report.filename_version);
    out += line("version", version);
    out += line("tags", join(report.tags, " "));
    out += line("torch", report.torch_requirements.empty() ? "no Requires-Dist on torch" : join(wheel::requirement_summaries(report.torch_requirements), "; "));
    if (!report.torch_range.empty()) out += line("torch range", report.torch_range);
    out += line("RECORD", report.record_findings.empty() ? record_text(report) : colour.bad(record_text(report)));
    for (const auto& finding : report.record_findings)  // named here: a writer refuses the wheel for them
        if (finding.kind == wheel::FindingKind::collision || finding.kind == wheel::FindingKind::length)
            out += line("names", colour.bad(printable(finding.member + " " + finding.problem)));
        else if (finding.kind == wheel::FindingKind::wheel_version)
            out += line("WHEEL", colour.bad(printable(finding.problem)));
    if (!report.elves.empty()) {
        out += line("platform", "needs " + needs_text(report.needs) + " -> " + platform_verdict(report));
        for (const auto& text : outside_library_texts(report)) out += line("", colour.bad(text));
        if (report.libraries)
            if (auto beside = provided_beside_text(*report.libraries); !beside.empty())
                out += line("", "not counted against the tag, provided beside the wheel: " + beside);
        for (const auto& elf : report.elves)
            for (const auto& concern : abi_concerns(elf)) out += line("", fmt::format("{} {}", elf.name, concern.message));
        for (const auto& claim : report.platform_claims)
            if (claim.lies) out += line("", fmt::format("tag {} {}: needs {}", claim.tag, colour.bad("LIES"), claim.violation));
    }
    for (const auto& name : report.not_elf) out += line("not ELF", name + " is named like a library but is not ELF");
    if (!report.variant_label.empty() || report.variant) {
        std::string head = report.variant_label.empty() ? "(no label in the file name)" : "'" + report.variant_label + "'";
        if (report.variant) head += std::string("  (variant.json schema ") + wheel::variant_schema_name(report.variant->schema) + ")";
        out += line("variant", head);
        if (report.variant)
            for (const auto& text : wheel::property_lines(report.variant->variants.begin()->second)) out += line("", text);
        for (const auto& finding : report.variant_findings) out += line("", colour.bad("LIES") + ": " + finding);
    }
    out += line("ELF files", std::to_string(report.elves.size()));
    out += modules_text(report, colour);
    for (const auto& elf : report.elves) out += "\n" + render_text(elf, verbose, colour);
    if (report.libraries) out += libraries_text(*report.libraries);
    return out;
}

std::string render_text(const TargetFindings& target, const Palette& colour) {
    if (!target.profile) return {};
    const auto& profile = *target.profile;
    std::string heading = fmt::format("\ntarget {} ({})", profile.name, profile.source);
    std::string out;
    if (target.findings.empty()) {
        out = heading + ": " + colour.good("no findings") + "\n";
    } else {
        auto fixable = std::count_if(target.findings.begin(), target.findings.end(),
                                     [](const Finding& finding) { return finding.repair_fixes; });
        out = fmt::format("{}: {}, {} fixed by repair\n", heading,
                          colour.bad(fmt::format("{} finding(s)", target.findings.size())), fixable);
        for (const auto& finding : target.findings) out += line(kind_name(finding.kind), finding.message);
    }
    for (std::size_t i = 0; i < target.coverage.size(); ++i)
        out += line(i == 0 ? "covers" : "", coverage_text(target.coverage[i], colour));
    return out;
}

}  // namespace wheelfix::analysis
