// The JSON documents of the analysis reports (report_json.hpp has the contract).
#include "wheelfix/analysis/report_json.hpp"

#include "wheelfix/abi/drifts.hpp"
#include "wheelfix/analysis/abi_rules.hpp"

#include <algorithm>
#include <optional>

namespace wheelfix::analysis {

namespace {

// `key`: an array holding one object per item, `fields` writing each object's fields.
template <typename Items, typename Fields>
void object_array(JsonWriter& json, std::string_view key, const Items& items, Fields fields) {
    json.key(key).begin_array();
    for (const auto& item : items) {
        json.begin_object();
        fields(item);
        json.end_object();
    }
    json.end_array();
}

// An empty text is written as null.
std::optional<std::string> optional_text(const std::string& text) {
    return text.empty() ? std::optional<std::string>() : text;
}

// `key`: per SM, runs, and the member and entry that serve it (null when none does).
void write_support(JsonWriter& json, std::string_view key, const std::vector<ModuleSupport>& sms) {
    object_array(json, key, sms, [&](const ModuleSupport& row) {
        json.field("sm", row.sm).field("runs", row.runs);
        json.field("member", row.runs ? std::optional<std::string>(row.member) : std::nullopt);
        json.field("via", row.runs ? std::optional<std::string>(row.how) : std::nullopt);
    });
}

void write_needs(JsonWriter& json, const policy::NeededVersions& needs) {
    json.key("needs").begin_object();
    for (const policy::VersionFamily& family : policy::kVersionFamilies)
        json.field(family.key, optional_text(needs.*family.need));
    json.field("musl", needs.links_musl);
    json.field("musl_version", optional_text(needs.musl));
    json.end_object();
}

// The "abi_concerns" array: per concern its kind, what, message and lowest_tag;
// with the member's name when `member` is set (the wheel's list).
void write_abi_concerns(JsonWriter& json, const std::vector<AbiConcern>& concerns, const std::string* member) {
    for (const auto& concern : concerns) {
        json.begin_object();
        json.field("kind", kind_name(concern.kind));
        if (member) json.field("member", *member);
        json.field("what", concern.what);
        json.field("message", concern.message);
        json.field("lowest_tag", optional_text(concern.lowest_tag));
        json.end_object();
    }
}

void write_fatbin(JsonWriter& json, const std::vector<cuda::FatbinEntry>& entries) {
    object_array(json, "fatbin", entries, [&](const cuda::FatbinEntry& entry) {
        json.field("kind", entry.kind_name()).field("arch", entry.arch_name()).field("sm", entry.sm);
        json.field("compressed", entry.compressed).field("size", entry.payload_size);
    });
}

void write_modules(JsonWriter& json, const WheelReport& report) {
    object_array(json, "modules", report.modules, [&](const CudaModule& module) {
        json.field("name", module.name);
        std::vector<std::string> members;
        for (auto index : module.variants) members.push_back(report.elves[index].name);
        json.string_array("members", members);
        write_support(json, "blackwell", module.blackwell);
    });
}

void write_needs(JsonWriter& json, const ElfNeeds& object) {
    object_array(json, "needs", object.needs, [&](const ResolvedNeed& need) {
        json.field("name", need.name).field("class", library_class_name(need.library_class))
            .field("location", need.location).field("via", need.via).field("distribution", need.distribution)
            .field("problem", need.problem).string_array("skipped", need.skipped);
    });
}

void write_libraries(JsonWriter& json, const NeededResolution& libraries) {
    json.key("libraries").begin_object();
    object_array(json, "members", libraries.members, [&](const ElfNeeds& object) {
        json.field("member", object.name);
        write_needs(json, object);
    });
    json.key("grafts").begin_array();
    for (std::size_t i = 0; i < libraries.grafts.size(); ++i) {
        const auto& graft = libraries.grafts[i];
        json.begin_object().field("name", graft.needed_name).field("path", graft.path.string())
            .string_array("needed_by", graft.needed_by);
        write_needs(json, libraries.graft_needs[i]);
        json.end_object();
    }
    json.end_array().end_object();
}

void write_outside_libraries(JsonWriter& json, const std::vector<NeededResolution::Outside>& outside) {
    object_array(json, "outside_libraries", outside, [&](const NeededResolution::Outside& library) {
        json.field("name", library.name).field("class", library_class_name(library.library_class))
            .field("location", library.location).field("problem", library.problem)
            .string_array("needed_by", library.needed_by)
            .field("repair", library.library_class == LibraryClass::graft ? "graft" : "refuse");
    });
}

// PEP 825: the label, variant.json's schema and properties, and what they claim that the binaries do not hold.
void write_variant(JsonWriter& json, const WheelReport& report) {
    json.key("variant");
    if (report.variant_label.empty() && !report.variant) {
        json.null();
        return;
    }
    json.begin_object();
    json.field("label", optional_text(report.variant_label));
    json.field("variant_schema", optional_text(report.variant ? wheel::variant_schema_name(report.variant->schema) : ""));
    json.key("properties");
    wheel::write_variant_properties(json, report.variant ? report.variant->variants.begin()->second
                                                         : wheel::VariantProperties{});
    json.string_array("findings", report.variant_findings);
    json.end_object();
}

}  // namespace

void write_json(JsonWriter& json, const wheel::VerifyFinding& finding) {
    json.begin_object();
    json.field("member", finding.member);
    json.field("problem", finding.problem);
    json.end_object();
}

void write_json(JsonWriter& json, const ElfReport& report) {
    json.begin_object();
    json.field("name", report.name);
    json.field("size", report.size);
    json.field("class", report.elf_class);
    json.field("endian", report.endian);
    json.field("machine", report.machine);
    json.field("type", report.type);
    json.field("soname", report.soname);
    json.string_array("needed", report.needed);
    json.field("rpath", report.rpath);
    json.field("runpath", report.runpath);
    object_array(json, "search_path", report.search_path, [&](const SearchPathEntry& entry) {
        json.field("path", entry.path).field("absolute", entry.absolute).field("outside_wheel", entry.outside_wheel);
    });
    write_needs(json, report.needs);
    json.field("honest_tag", optional_text(report.honest_tag));
    json.key("abi_concerns").begin_array();
    write_abi_concerns(json, abi_concerns(report), nullptr);
    json.end_array();
    json.key("cuda").begin_object();
    json.field("runtime_major", report.cudart_major);
    json.string_array("libraries", report.cuda_libraries);
    write_fatbin(json, report.fatbin);
    object_array(json, "blackwell", report.blackwell, [&](const GpuSupport& row) {
        json.field("sm", row.sm).field("runs", row.runs);
        json.field("via", row.runs ? std::optional<std::string>(row.how) : std::nullopt);
    });
    json.end_object();
    json.field("defined_symbols", static_cast<std::uint64_t>(report.defined_symbols));
    json.field("undefined_symbols", static_cast<std::uint64_t>(report.undefined_symbols));
    object_array(json, "torch_imports", report.torch_imports, [&](const TorchImport& import) {
        json.field("symbol", import.mangled).field("demangled", import.demangled).field("library", import.library);
        json.field("library_from", "namespace");
    });
    if (!report.shim_for_torch.empty()) {
        json.key("shim").begin_object().field("torch", report.shim_for_torch);
        json.string_array("provides", report.shim_provides).end_object();
    }
    json.end_object();
}

void write_json(JsonWriter& json, const TargetFindings& target) {
    if (!target.profile) return;
    json.key("target").begin_object();
    json.field("profile", target.profile->name);
    json.field("source", target.profile->source);
    object_array(json, "findings", target.findings, [&](const Finding& finding) {
        json.field("kind", kind_name(finding.kind));
        json.field("member", finding.member);
        json.field("message", finding.message);
        json.field("repair_fixes", finding.repair_fixes);
    });
    object_array(json, "coverage", target.coverage, [&](const CoverageRow& row) {
        json.field("name", row.name).field("module", row.is_module);
        write_support(json, "sms", row.sms);
    });
    json.end_object();
}

void write_json(JsonWriter& json, const WheelReport& report, const TargetFindings* target) {
    json.begin_object();
    json.field("kind", "wheel");
    json.field("path", report.path);
    json.field("name", report.distribution);
    json.field("version", report.version);
    json.field("filename_version", report.filename_version);
    json.field("local_version", optional_text(report.local_version));
    json.string_array("tags", report.tags);
    json.string_array("torch_requirements", wheel::requirement_summaries(report.torch_requirements));
    json.field("torch_range", report.torch_range);
    json.key("record").begin_object();
    json.field("ok", report.record_findings.empty());
    json.field("files", static_cast<std::uint64_t>(report.member_count));
    json.key("findings").begin_array();
    for (const auto& finding : report.record_findings) write_json(json, finding);
    json.end_array();
    json.end_object();
    write_needs(json, report.needs);
    json.field("honest_tag", optional_text(report.honest_tag));
    json.field("symbol_tag", optional_text(report.symbol_tag));
    json.key("abi_concerns").begin_array();
    for (const auto& elf : report.elves) write_abi_concerns(json, abi_concerns(elf), &elf.name);
    json.end_array();
    object_array(json, "platform_claims", report.platform_claims, [&](const PlatformClaim& claim) {
        json.field("tag", claim.tag);
        json.field("glibc_floor", optional_text(claim.glibc_floor));
        json.field("honest", !claim.lies);
        json.field("violation", optional_text(claim.violation));
    });
    json.string_array("not_elf", report.not_elf);
    write_variant(json, report);
    json.key("elf_files").begin_array();
    for (const auto& elf : report.elves) write_json(json, elf);
    json.end_array();
    write_modules(json, report);
    if (report.libraries) {
        write_libraries(json, *report.libraries);
        write_outside_libraries(json, report.outside_libraries);
    }
    if (target) write_json(json, *target);
    json.end_object();
}

namespace {

void write_near_miss(JsonWriter& json, const GroupedSymbol& group, const abi::NearMiss& miss) {
    json.begin_object().field("name", miss.name).field("demangled", miss.demangled).field("library", miss.library);
    json.field("forwardable", miss.compatibility.forwardable);
    json.field("appended_zero_params", static_cast<std::uint64_t>(miss.compatibility.appended_zero_params));
    json.field("reason", miss.compatibility.reason).key("known_drift");
    if (const abi::Drift* drift = abi::known_drift(group.symbol.name, miss.name))
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
    json.field("elsewhere", static_cast<std::uint64_t>(check.elsewhere));
    json.field("weak_missing", static_cast<std::uint64_t>(check.weak_missing));
    json.field("unresolved", static_cast<std::uint64_t>(check.unresolved.size()));
    json.string_array("missing_libraries", check.missing_libraries).end_object();
}

void write_torch(JsonWriter& json, const TorchResult& torch) {
    json.begin_object().field("source", torch.source).field("torch_version", torch.torch_version);
    json.field("cuda_version", torch.cuda_version).field("loads", torch.loads());
    json.field("missing", static_cast<std::uint64_t>(torch.missing()));
    json.string_array("install_notes", torch.install_notes);
    json.field("not_admitted", torch.not_admitted);
    object_array(json, "missing_libraries", torch.missing_libraries, [&](const GroupedLibrary& library) {
        json.field("name", library.name).string_array("needed_by", library.needed_by);
    });
    object_array(json, "not_covered", torch.not_covered, [&](const GroupedLibrary& library) {
        json.field("name", library.name).field("reason", torch.uncovered_reason(library.name))
            .string_array("needed_by", library.needed_by);
    });
    json.key("unresolved").begin_array();
    for (const GroupedSymbol& group : torch.unresolved) write_unresolved(json, group);
    json.end_array().key("members").begin_array();
    for (const abi::ElfCheck& check : torch.members) write_member(json, check);
    json.end_array().end_object();
}

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

std::string check_json(const CheckReport& report, const std::function<void(JsonWriter&)>& extra) {
    JsonWriter json;
    json.begin_object().field("schema", "wheelfix.check/1");
    write_report_fields(json, report);
    if (extra) extra(json);
    json.end_object();
    return json.str();
}

std::string checks_json(const std::vector<CheckReport>& reports,
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

void write_matrix_json(JsonWriter& json, const TorchMatrix& matrix) {
    json.key("matrix").begin_object().key("releases").begin_array();
    for (std::size_t column = 0; column < matrix.columns.size(); ++column) {
        const MatrixColumn& info = matrix.columns[column];
        json.begin_object().field("torch_version", info.torch_version).field("cuda_version", info.cuda_version);
        json.field("arch", info.arch).field("python_tag", info.python_tag).field("source", info.source);
        json.field("verdict", verdict_name(matrix.column_verdict(column)));
        if (column < matrix.wheel_missing.size())
            json.field("missing", static_cast<std::uint64_t>(matrix.wheel_missing[column]));
        json.field("cuda_note", info.cuda_note).field("build", info.build).string_array("builds", info.builds);
        json.end_object();
    }
    json.end_array().key("members").begin_array();
    for (std::size_t row = 0; row < matrix.members.size(); ++row) {
        json.begin_object().field("member", matrix.members[row]);
        object_array(json, "cells", matrix.cells[row], [&](const MatrixCell& cell) {
            json.field("verdict", verdict_name(cell.verdict));
            json.field("missing", static_cast<std::uint64_t>(cell.missing));
            json.field("first_missing", cell.first_missing).field("near_miss", cell.near_miss);
            json.field("runtime_note", cell.runtime_note);
            json.string_array("not_covered", cell.not_covered);
        });
        json.end_object();
    }
    json.end_array().field("loads_everywhere", matrix.loads_everywhere()).end_object();
}

void write_requirement_json(JsonWriter& json, const TorchRequirement& requirement,
                            const StableAbiUse& stable) {
    json.key("requirement").begin_object().field("any", requirement.any).field("specifier", requirement.specifier);
    json.field("lowest", requirement.lowest).field("highest", requirement.highest).field("upper", requirement.upper);
    json.field("later_unproven", requirement.later_unproven).field("contiguous", requirement.contiguous);
    json.field("kind", requirement.kind).field("built_for", requirement.built_for);
    json.field("built_for_source", requirement.built_for_source).field("author", requirement.author);
    json.field("symbol_level_only", requirement.symbol_level_only).field("finding", requirement.finding);
    json.key("pin");
    if (requirement.pin) {
        json.begin_object().field("name", "torch").field("specifier", requirement.pin->text()).key("clauses").begin_array();
        for (const wheel::SpecifierClause& clause : requirement.pin->clauses())
            json.begin_object().field("op", clause.op).field("version", clause.text().substr(clause.op.size())).end_object();
        json.end_array().end_object();
    } else {
        json.null();
    }
    json.field("stable_floor", requirement.stable_floor).field("stable_floor_function", requirement.stable_floor_function);
    json.field("stable_abi_only", stable.stable_only()).string_array("stable_abi_symbols", stable.stable);
    json.field("cpp_symbols", static_cast<std::uint64_t>(stable.cpp.size())).end_object();
}

}  // namespace wheelfix::analysis
