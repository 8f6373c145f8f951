// The JSON documents of the writing commands (report_json.hpp has the contract).
#include "wheelfix/repair/report_json.hpp"

#include "wheelfix/analysis/report_json.hpp"

#include <algorithm>
#include <type_traits>
#include <variant>

namespace wheelfix::repair {

namespace {

// {before (null when added), after} per requirement line changed.
void write_requirement_changes(JsonWriter& json, const std::vector<std::pair<std::string, std::string>>& changes) {
    json.key("requirements").begin_array();
    for (const auto& [before, after] : changes)
        json.begin_object().field("before", before.empty() ? std::nullopt : std::optional(before)).field("after", after).end_object();
    json.end_array();
}

void write_symbol(JsonWriter& json, const ShimmedSymbol& shimmed) {
    const auto& symbol = shimmed.symbol;
    json.begin_object().field("name", symbol.name).field("demangled", symbol.demangled);
    json.field("action", shimmed.decision == ShimDecision::forward ? "forward" : "stub");
    json.string_array("members", shimmed.members);
    json.field("target", symbol.target).field("target_library", symbol.target_library);
    json.field("target_demangled", symbol.target ? std::optional(shimmed.target_demangled) : std::nullopt);
    json.field("appended_zero_params", static_cast<std::uint64_t>(symbol.appended_params));
    json.key("appended_values").begin_array();
    for (auto value : symbol.appended_values) json.value(static_cast<std::uint64_t>(value));
    json.end_array();
    json.field("source", shimmed.source).field("reason", shimmed.reason).end_object();
}

template <typename T>
void write_change(JsonWriter& json, std::string_view name, const Change<T>& change) {
    json.key(name).begin_object();
    if constexpr (std::is_same_v<T, std::string>) json.field("before", change.before).field("after", change.after);
    else json.string_array("before", change.before).string_array("after", change.after);
    json.end_object();
}

// retag/1's pin.mode: the --pin word, "range" for --torch auto's verdict too, or the specifier.
std::string pin_mode(const PinRequest& pin) {
    switch (pin.kind) {
    case PinRequest::Kind::exact: return "exact";
    case PinRequest::Kind::none: return "none";
    case PinRequest::Kind::verdict:
    case PinRequest::Kind::range: return "range";
    case PinRequest::Kind::specifier: return pin.specifier->text();
    case PinRequest::Kind::minor: break;
    }
    return "minor";
}

void write_pin_json(JsonWriter& json, const RetagResult& result, const PinRequest& pin) {
    json.key("pin").begin_object().field("mode", pin_mode(pin));
    json.field("specifier", result.pin_specifier ? std::optional<std::string>(result.pin_specifier->text()) : std::nullopt);
    write_requirement_changes(json, result.requirements);
    json.end_object();
}

// Each edited member: its name, the editor's change lines, the bytes deflated again.
void write_changes(JsonWriter& json, std::string_view key, const std::vector<MemberChange>& changes) {
    json.key(key).begin_array();
    for (const auto& change : changes)
        json.begin_object().field("member", change.member).string_array("changes", change.changes)
            .field("recompressed_bytes", change.recompressed_bytes).end_object();
    json.end_array();
}

void write_findings(JsonWriter& json, std::string_view key, const std::vector<analysis::Finding>& findings) {
    json.key(key).begin_array();
    for (const auto& finding : findings)
        json.begin_object().field("kind", analysis::kind_name(finding.kind)).field("member", finding.member)
            .field("message", finding.message).field("repair_fixes", finding.repair_fixes).end_object();
    json.end_array();
}

// The variant a writer labelled its output as: the "variant" key, null when none.
void write_variant(JsonWriter& json, const std::optional<VariantOutcome>& variant) {
    json.key("variant");
    if (!variant) {
        json.null();
        return;
    }
    json.begin_object().field("label", variant->label);
    json.field("variant_schema", wheel::variant_schema_name(variant->schema)).key("properties");
    wheel::write_variant_properties(json, variant->properties);
    json.end_object();
}

}  // namespace

std::string relink_json(const RelinkResult& result) {
    JsonWriter json;
    json.begin_object().field("schema", "wheelfix.relink/1").field("output", result.output.string());
    json.field("dry_run", !result.plan.empty());
    json.field("elf_members", static_cast<std::uint64_t>(result.elf_members));
    json.key("changed").begin_array();
    for (const auto& change : result.changed) {
        json.begin_object().field("member", change.member).string_array("changes", change.changes);
        json.field("size_before", change.size_before).field("size_after", change.size_after);
        json.field("grew", change.grew).field("recompressed_bytes", change.recompressed_bytes).end_object();
    }
    json.end_array().end_object();
    return json.str();
}

bool fully_repaired(const ShimResult& result) {
    bool stubs = std::any_of(result.symbols.begin(), result.symbols.end(),
                             [](const auto& s) { return s.decision == ShimDecision::stub; });
    return !stubs && result.not_shimmed.empty() && result.missing_libraries.empty();
}

std::string shim_json(const ShimResult& result) {
    JsonWriter json;
    json.begin_object().field("schema", "wheelfix.shim/1").field("output", result.output.string());
    json.field("dry_run", !result.plan.empty());
    json.field("torch_version", result.torch_version).field("machine", result.machine);
    json.field("elf_members", static_cast<std::uint64_t>(result.elf_members));
    json.key("shim");
    if (result.shim) {
        json.begin_object().field("member", result.shim_member).field("file_name", result.shim->file_name);
        json.field("soname", result.shim->soname).field("version_node", result.shim->version_node).end_object();
    } else {
        json.null();
    }
    json.key("symbols").begin_array();
    for (const auto& shimmed : result.symbols) write_symbol(json, shimmed);
    json.end_array().key("not_shimmed").begin_array();
    for (const auto& skipped : result.not_shimmed)
        json.begin_object().field("name", skipped.name).field("demangled", skipped.demangled)
            .string_array("members", skipped.members).field("reason", skipped.reason).end_object();
    json.end_array().string_array("missing_libraries", result.missing_libraries);
    write_changes(json, "changed", result.changed);
    write_requirement_changes(json, result.requirements);
    json.field("fully_repaired", fully_repaired(result));
    write_variant(json, result.variant);
    json.end_object();
    return json.str();
}

std::string retag_json(const std::string& input, const std::optional<RetagPick>& pick, const RetagResult* result,
                       const PinRequest& pin) {
    JsonWriter json;
    json.begin_object().field("schema", "wheelfix.retag/1").field("input", input);
    json.field("output", result ? std::optional(result->output.string()) : std::nullopt);
    json.field("torch_from", pick ? "auto" : "option");
    json.field("torch", result ? std::optional(result->torch) : std::nullopt);
    json.key("candidates").begin_array();
    if (pick)
        for (const analysis::TorchResult& torch : pick->report.torches)
            json.begin_object().field("source", torch.source).field("torch_version", torch.torch_version)
                .field("loads", torch.loads()).field("missing", static_cast<std::uint64_t>(torch.missing())).end_object();
    json.end_array();
    if (pick && pick->releases) {
        analysis::write_matrix_json(json, pick->releases->matrix);
        analysis::write_requirement_json(json, pick->requirement, pick->releases->stable);
    }
    if (result) {
        write_change(json, "file_name", result->file_name);
        write_change(json, "version", result->version);
        write_change(json, "dist_info", result->dist_info);
        write_change(json, "tags", result->tags);
        write_pin_json(json, *result, pin);
        json.field("fixed_file_name_version", result->fixed_file_name_version);
        json.field("dry_run", !result->plan.empty());
        write_variant(json, result->variant);
    }
    return json.end_object().str();
}

void write_json(JsonWriter& json, const RepairReport& report) {
    json.begin_object().field("input", report.input.string()).field("output", report.output.string());
    json.field("written", report.written).field("torch_checked", !report.torch_skipped).field("torch_version", report.torch_version)
        .field("uses_torch", report.uses_torch).field("clean", report.clean());
    json.key("wrong").begin_object();
    write_findings(json, "findings", report.findings_before);
    json.field("unresolved_torch_symbols", static_cast<std::uint64_t>(report.unresolved_torch_symbols));
    json.string_array("outside_search_path_entries", report.absolute_rpath_entries);
    json.field("platform", report.platform_before).field("platform_lied", report.platform_lied);
    json.field("wheel_tags_disagreed", report.retag.wheel_tags_rewritten).end_object();
    json.key("done").begin_object();
    write_changes(json, "relinked", report.relinked);
    json.key("shim");
    if (report.shim.shim)
        json.begin_object().field("member", report.shim.shim_member).field("soname", report.shim.shim->soname)
            .field("symbols", static_cast<std::uint64_t>(report.shim.symbols.size()))
            .field("stubs", static_cast<std::uint64_t>(report.stubbed.size())).end_object();
    else
        json.null();
    const auto& retag = report.retag;
    json.key("grafted").begin_array();
    for (const auto& graft : report.grafted)
        json.begin_object().field("needed", graft.needed_name).field("member", graft.member)
            .field("source", graft.source.string()).field("sha256", graft.sha256).field("owner", graft.owner ? graft.owner->purl() : std::string())
            .string_array("needed_by", graft.needed_by).end_object();
    json.end_array().key("distributions_needed").begin_array();
    for (const auto& distribution : report.distributions) json.value(distribution.text());
    json.end_array();
    write_change(json, "file_name", retag.file_name);
    write_change(json, "version", retag.version);
    json.field("torch_pin", retag.pin_specifier ? std::optional<std::string>(retag.pin_specifier->text()) : std::nullopt);
    json.key("runtime_requires").begin_array();
    for (const auto& runtime : report.runtime_requires)
        json.begin_object().field("requirement", runtime.requirement.text).field("distribution", runtime.requirement.name)
            .field("library", runtime.library).end_object();
    json.end_array();
    json.field("platform", report.platform_after);
    write_variant(json, report.variant);
    json.end_object();
    json.key("left").begin_object();
    write_findings(json, "findings", report.remaining);
    json.string_array("stubs", report.stubbed).key("not_shimmed").begin_array();
    for (const auto& skipped : report.shim.not_shimmed)
        json.begin_object().field("name", skipped.name).field("demangled", skipped.demangled)
            .field("reason", skipped.reason).end_object();
    json.end_array().end_object().key("load_test").begin_object().field("skipped", report.load_test_skipped);
    json.key("results").begin_array();
    for (const auto& load : report.loads) {
        const char* status = load.status == LoadOutcome::Status::loaded   ? "loaded"
                             : load.status == LoadOutcome::Status::failed ? "failed"
                                                                                  : "not_tested";
        json.begin_object().field("member", load.member).field("status", status).field("reason", load.reason)
            .field("stand_in", load.stand_in).end_object();
    }
    json.end_array().field("proven", !report.loads.empty() && !report.not_proven()).end_object().end_object();
}

std::string repair_json(const std::vector<RepairOutcome>& outcomes, bool dry_run, const policy::Profile* target,
                        const std::function<void(JsonWriter&)>& extra) {
    JsonWriter json;
    json.begin_object().field("schema", "wheelfix.repair/1").field("dry_run", dry_run);
    json.field("target", target ? std::optional<std::string>(target->name) : std::nullopt);
    json.key("wheels").begin_array();
    for (const auto& outcome : outcomes)
        if (const auto* report = std::get_if<RepairReport>(&outcome)) write_json(json, *report);
    json.end_array().key("not_repaired").begin_array();
    for (const auto& outcome : outcomes)
        if (const auto* skipped = std::get_if<NotRepaired>(&outcome))
            json.begin_object().field("input", skipped->wheel).field("why", skipped->why).end_object();
    json.end_array().key("errors").begin_array();
    for (const auto& outcome : outcomes)
        if (const auto* error = std::get_if<InputError>(&outcome))
            json.begin_object().field("file", error->file()).field("problem", error->problem()).end_object();
    json.end_array();
    if (extra) extra(json);
    json.end_object();
    return json.str();
}

void write_torch_auto_json(JsonWriter& json, const std::vector<std::optional<TorchAutoPlan>>& plans) {
    json.key("torch_auto").begin_array();
    for (const auto& plan : plans) {
        if (!plan) continue;
        const TorchAutoPlan& run = *plan;
        json.begin_object().field("input", run.input);
        analysis::write_matrix_json(json, run.releases.matrix);
        analysis::write_requirement_json(json, run.releases.requirement, run.releases.stable);
        json.field("against", run.against).field("installed", run.installed).end_object();
    }
    json.end_array();
}

std::string variant_json(const std::vector<std::string>& inputs, const std::vector<VariantOutcome>& outcomes, bool dry_run) {
    JsonWriter json;
    json.begin_object().field("schema", "wheelfix.variant/1").field("dry_run", dry_run);
    json.key("wheels").begin_array();
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        const auto& outcome = outcomes[i];
        json.begin_object().field("input", inputs[i]).field("output", outcome.output.string());
        json.field("label", outcome.label).field("variant_schema", wheel::variant_schema_name(outcome.schema));
        json.key("properties");
        wheel::write_variant_properties(json, outcome.properties);
        json.field("cuda_lower_bound_from", outcome.cuda ? std::optional(outcome.cuda->because) : std::nullopt);
        json.key("requires_dist").begin_array();
        for (const auto& requirement : outcome.requires_dist) json.value(requirement.text);
        json.end_array();
        json.end_object();
    }
    json.end_array().end_object();
    return json.str();
}

std::string variant_merge_json(const std::vector<MergedIndex>& indexes, bool dry_run) {
    JsonWriter json;
    json.begin_object().field("schema", "wheelfix.variant-merge/1").field("dry_run", dry_run);
    json.key("indexes").begin_array();
    for (const auto& index : indexes)
        json.begin_object().field("path", index.path.string()).string_array("wheels", index.wheels)
            .string_array("labels", index.labels).end_object();
    json.end_array().end_object();
    return json.str();
}

}  // namespace wheelfix::repair
