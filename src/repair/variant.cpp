// Variant labelling: the plan step, `wheelfix variant`, and `variant merge` (repair/variant.hpp).
#include "wheelfix/repair/variant.hpp"

#include "wheelfix/policy/variant_rules.hpp"
#include "wheelfix/repair/retag.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/wheel/filename.hpp"
#include "wheelfix/wheel/rewrite.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace wheelfix::repair {

namespace {

std::string checked_label(const std::string& asked, const wheel::VariantProperties& properties) {
    if (asked == "auto") return analysis::auto_variant_label(properties);
    if (!wheel::valid_variant_label(asked))
        throw InputError("--variant", "label '" + asked + "' must match ^[0-9a-z_.]{1,16}$ (PEP 825: at most " +
                                          std::to_string(wheel::kVariantLabelMax) + " characters)");
    if (asked == "null" && !properties.empty())
        throw InputError("--variant", "'null' is the null variant, which has no properties; this wheel has some");
    return asked;
}

std::vector<wheel::Requirement> runtime_requirements(const analysis::WheelReport& report) {
    std::set<int> majors;
    for (const auto& elf : report.elves)
        if (elf.cudart_major) majors.insert(*elf.cudart_major);
    std::vector<wheel::Requirement> requirements;
    for (int major : majors) {
        const std::string requirement = policy::runtime_requirement(major);
        if (requirement.empty())
            throw InputError("--variant-requires", "no CUDA runtime package known for libcudart.so." + std::to_string(major));
        requirements.push_back(wheel::parse_requirement(requirement + " ; 'nvidia' in variant_namespaces"));
    }
    return requirements;
}

// The input's own variant, for a writer not asked for one: nullopt for a wheel that is none.
std::optional<VariantRequest> kept_variant(const wheel::Wheel& wheel, const analysis::WheelReport& read) {
    const std::string& label = wheel.filename().variant_label;
    if (label.empty() && !read.variant) return std::nullopt;
    VariantRequest request;
    request.label = label;
    if (read.variant) {
        request.schema = read.variant->schema;
        if (label.empty() || analysis::auto_variant_label(read.variant->variants.begin()->second) == label) request.label = "auto";
    }
    return request;
}

// The ELF reports with each edited member's NEEDED as the plan's edits leave them.
analysis::WheelReport as_edited(const analysis::WheelReport& read, const std::vector<ElfEditStep>& steps) {
    analysis::WheelReport edited = read;
    for (const auto& step : steps) {
        const auto& edits = step.edits;
        if (edits.replace_needed.empty() && edits.remove_needed.empty() && edits.add_needed.empty()) continue;
        auto elf = std::find_if(edited.elves.begin(), edited.elves.end(),
                                [&](const analysis::ElfReport& report) { return report.name == step.member; });
        if (elf == edited.elves.end()) continue;
        std::vector<std::string> needed;
        for (const auto& library : elf->needed) {
            if (std::find(edits.remove_needed.begin(), edits.remove_needed.end(), library) != edits.remove_needed.end()) continue;
            auto replaced = std::find_if(edits.replace_needed.begin(), edits.replace_needed.end(),
                                         [&](const auto& pair) { return pair.first == library; });
            needed.push_back(replaced == edits.replace_needed.end() ? library : replaced->second);
        }
        for (const auto& library : edits.add_needed)
            if (std::find(needed.begin(), needed.end(), library) == needed.end()) needed.push_back(library);
        analysis::set_needed(*elf, std::move(needed));
    }
    return edited;
}

// The torch minors the written METADATA pins, when an ELF member uses torch.
std::vector<std::string> written_torch_minors(const wheel::Wheel& wheel, const analysis::WheelReport& read, const WheelPlan& plan) {
    if (std::none_of(read.elves.begin(), read.elves.end(), [](const auto& elf) { return analysis::uses_torch(elf); }))
        return {};
    const auto replaced = plan.dist_info.replaced.find("METADATA");
    const auto metadata = replaced == plan.dist_info.replaced.end()
                              ? wheel.metadata()
                              : wheel::parse_headers(replaced->second, wheel.dist_info() + "/METADATA");
    return analysis::pinned_torch_minors(wheel::torch_requirements(metadata), wheel.archive().path().string());
}

// The variant step for a wheel whose binaries `report` describes (variant.hpp), and what it labels.
VariantStep variant_step(const analysis::WheelReport& report, const std::vector<std::string>& torch_minors,
                         const VariantRequest& request, VariantOutcome& outcome) {
    analysis::VariantDerivation derived = analysis::derive_variant(report, torch_minors);
    VariantStep step;
    step.label = checked_label(request.label, derived.properties);
    step.json = wheel::format_variant_json(analysis::variant_file(step.label, derived.properties, request.schema));
    if (request.requires_runtime) step.requires_dist = runtime_requirements(report);
    outcome.label = step.label;
    outcome.properties = std::move(derived.properties);
    outcome.cuda = std::move(derived.cuda);
    outcome.schema = request.schema;
    outcome.requires_dist = step.requires_dist;
    return step;
}

}  // namespace

std::optional<VariantOutcome> label_output(const wheel::Wheel& wheel, const analysis::WheelReport& read, WheelPlan& plan,
                                           const std::optional<VariantRequest>& asked) {
    std::optional<VariantRequest> request = asked;
    if (!request) request = kept_variant(wheel, read);
    if (!request) return std::nullopt;
    VariantOutcome outcome;
    plan.variant = variant_step(as_edited(read, plan.edit_elf), written_torch_minors(wheel, read, plan), *request, outcome);
    return outcome;
}

VariantOutcome label_wheel(const std::filesystem::path& path, const VariantRequest& request,
                           const std::filesystem::path& out_dir) {
    auto wheel = wheel::Wheel::open(path);
    const analysis::WheelReport report = analysis::inspect_wheel(path);
    wheel::refuse_findings(wheel, report.record_findings);
    VariantOutcome outcome;
    WheelPlan plan;
    plan.output = out_dir / path.filename();
    plan.overwrite = request.overwrite;
    plan.variant = variant_step(report, analysis::proven_torch_minors(path.string(), report), request, outcome);
    ExecuteOptions execute;
    execute.dry_run = request.dry_run;
    // inspect_wheel hashed every member and proved RECORD: the plan copies, it does not read again.
    execute.digests = retag_digests(wheel, false);
    execute.check_record = [&](const wheel::Wheel&, const std::vector<wheel::MemberDigest>&) {};
    auto executed = execute_plan(wheel, plan, {}, execute);
    outcome.output = executed.output;
    outcome.written = executed.written;
    if (request.dry_run) outcome.plan = describe_plan(wheel, plan, executed);
    return outcome;
}

std::vector<MergedIndex> merge_variants(const std::filesystem::path& dir, bool overwrite, bool dry_run) {
    std::error_code error;
    if (!std::filesystem::is_directory(dir, error)) throw InputError(dir.string(), "not a directory");
    std::map<std::string, std::vector<std::filesystem::path>> groups;  // "name-version" -> wheels
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        if (!name.ends_with(".whl") || !entry.is_regular_file()) continue;
        wheel::WheelFilename parsed;
        try {
            parsed = wheel::parse_filename(name);
        } catch (const InputError&) {
            continue;  // not a wheel name: not ours to merge
        }
        if (parsed.variant_label.empty()) continue;
        groups[wheel::escape_distribution(parsed.distribution) + "-" + parsed.version].push_back(entry.path());
    }
    if (groups.empty()) throw InputError(dir.string(), "holds no variant wheel (a file name with a variant label)");
    std::vector<MergedIndex> merged;
    std::vector<std::string> documents;
    for (auto& [stem, wheels] : groups) {
        std::sort(wheels.begin(), wheels.end());
        std::vector<wheel::VariantFile> files;
        MergedIndex index;
        index.path = dir / (stem + "-variants.json");
        for (const auto& path : wheels) {
            auto wheel = wheel::Wheel::open(path);
            auto file = wheel::read_variant_json(wheel);
            if (!file) throw InputError(path.string(), "has a variant label but no " + wheel.dist_info() + "/variant.json");
            if (file->variants.begin()->first != wheel.filename().variant_label)
                throw InputError(path.string(), "its variant.json names variant '" + file->variants.begin()->first +
                                                    "', not the file name's '" + wheel.filename().variant_label + "'");
            files.push_back(std::move(*file));
            index.wheels.push_back(path.filename().string());
        }
        const wheel::VariantFile all = wheel::merge_variant_files(files, stem + " (" + dir.string() + ")");
        for (const auto& [label, properties] : all.variants) index.labels.push_back(label);
        if (!dry_run) refuse_existing_output(index.path, overwrite);
        documents.push_back(wheel::format_variant_json(all));
        merged.push_back(std::move(index));
    }
    if (dry_run) return merged;
    using std::filesystem::perms;
    for (std::size_t i = 0; i < merged.size(); ++i)
        write_file_atomically(merged[i].path,
                              {reinterpret_cast<const std::uint8_t*>(documents[i].data()), documents[i].size()},
                              perms::owner_read | perms::owner_write | perms::group_read | perms::others_read, overwrite);
    return merged;
}

}  // namespace wheelfix::repair
