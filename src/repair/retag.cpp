// retag_wheel: versions agreed, RECORD proven, then the new names and the two
// metadata texts are computed and run as a plan of dist-info changes (plan.hpp).
#include "wheelfix/repair/retag.hpp"

#include "wheelfix/analysis/torch_verdict.hpp"
#include "wheelfix/analysis/wheel_report.hpp"

#include "wheelfix/repair/plan.hpp"
#include "wheelfix/repair/variant.hpp"

#include "wheelfix/policy/manylinux.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/text.hpp"
#include "wheelfix/wheel/filename.hpp"
#include "wheelfix/wheel/rewrite.hpp"
#include "wheelfix/wheel/verify.hpp"

#include <algorithm>

namespace wheelfix::repair {

namespace {

constexpr std::string_view kDistInfoSuffix = ".dist-info";

std::string dist_info_version(const wheel::Wheel& wheel) {
    std::string_view stem = wheel.dist_info();
    stem.remove_suffix(kDistInfoSuffix.size());
    auto dash = stem.rfind('-');
    return dash == std::string_view::npos ? std::string() : std::string(stem.substr(dash + 1));
}

std::string dist_info_name_part(const wheel::Wheel& wheel) {
    std::string_view stem = wheel.dist_info();
    stem.remove_suffix(kDistInfoSuffix.size());
    return std::string(stem.substr(0, stem.rfind('-')));
}

bool same_version(const std::string& a, const wheel::Version& b) {
    auto parsed = wheel::Version::try_parse(a);
    return parsed && *parsed == b;
}

std::string member_text(const wheel::Wheel& wheel, const std::string& file) {
    auto bytes = wheel.archive().read(*wheel.archive().find(wheel.dist_info() + "/" + file));
    return std::string(bytes.begin(), bytes.end());
}

// The new file name, proven by parsing it back (that checks the platform tags).
wheel::WheelFilename new_file_name(const wheel::Wheel& wheel, const wheel::Version& version,
                                   const std::optional<std::string>& platform) {
    wheel::WheelFilename name = wheel.filename();
    name.version = version.normalized();
    if (platform) name.platform_tags = split(*platform, '.');
    wheel::WheelFilename parsed;
    try {
        parsed = wheel::parse_filename(wheel::format_filename(name));
    } catch (const InputError& error) {
        throw InputError("--platform", error.problem());
    }
    // A '-' in the platform would read back as a variant label: the parts must survive.
    if (parsed.platform_tags != name.platform_tags || parsed.variant_label != name.variant_label)
        throw InputError("--platform", "invalid platform tag '" + platform.value_or("") + "'");
    return parsed;
}

std::vector<std::string> trimmed_tags(const wheel::Wheel& wheel) {
    std::vector<std::string> tags;
    for (const auto& tag : wheel.wheel_file().all("Tag")) tags.push_back(tag.substr(0, tag.find_last_not_of(" \t") + 1));
    return tags;
}

// RECORD's findings refused. Set aside: WHEEL's Tag lines disagreeing with the file
// name (retag rewrites them from it) and, with fix_version, versions.
void refuse_record_findings(const wheel::Wheel& wheel, std::vector<wheel::VerifyFinding> findings, bool fix_version) {
    std::erase_if(findings, [&](const wheel::VerifyFinding& f) {
        return f.kind == wheel::FindingKind::tags || (fix_version && f.kind == wheel::FindingKind::version);
    });
    wheel::refuse_findings(wheel, findings);
}

// The pin an earlier retag wrote for the torch the current local version names: superseded.
std::optional<wheel::SpecifierSet> earlier_pin(const wheel::Wheel& wheel) {
    if (const auto current = wheel::Version::try_parse(wheel.metadata_version()))
        if (const auto named = analysis::torch_from_local(current->local_segments()); named && named->release().size() >= 2)
            return wheel::torch_pin_specifier(*named, wheel::TorchPin::minor);
    return std::nullopt;
}

// METADATA with the new Version and the torch pin; records the requirement changes.
std::string new_metadata(const wheel::Wheel& wheel, const RetagOptions& options, RetagResult& result) {
    std::string text = wheel::set_version(member_text(wheel, "METADATA"), result.version.after);
    if (options.pin_specifier) result.pin_specifier = options.pin_specifier;
    else if (options.request.torch) result.pin_specifier = wheel::torch_pin_specifier(*options.request.torch, options.pin);
    if (!result.pin_specifier) return text;
    auto pinned = wheel::pin_torch(text, *result.pin_specifier, options.pin_write, earlier_pin(wheel));
    result.requirements = std::move(pinned.changes);
    return pinned.text;
}

// METADATA's Version parsed; an invalid one is an InputError naming the wheel.
wheel::Version metadata_version_of(const wheel::Wheel& wheel) {
    try {
        return wheel::Version::parse(wheel.metadata_version());
    } catch (const InputError& error) {
        throw InputError(wheel.archive().path().string(), "METADATA Version: " + error.problem());
    }
}

bool is_specifier(std::string_view pin) { return !pin.empty() && std::string_view("<>=!~").find(pin[0]) != std::string_view::npos; }

}  // namespace

void require_agreeing_versions(const wheel::Wheel& wheel, bool fix_version) {
    auto metadata = metadata_version_of(wheel);
    const auto& file_name = wheel.filename().version;
    auto directory = dist_info_version(wheel);
    if (fix_version || (same_version(file_name, metadata) && same_version(directory, metadata))) return;
    std::string where = same_version(file_name, metadata) ? "the .dist-info directory says " + directory
                                                          : "the file name says " + file_name;
    throw InputError(wheel.archive().path().string(),
                     where + " but METADATA says Version " + wheel.metadata_version() +
                         "; --fix-version makes the file name and the .dist-info directory follow METADATA");
}

RetagPlan plan_retag(const wheel::Wheel& wheel, const RetagOptions& options, const std::filesystem::path& out_dir) {
    require_agreeing_versions(wheel, options.fix_version);
    auto metadata_version = metadata_version_of(wheel);
    auto version = options.keep_version ? metadata_version : wheel::relabel_version(metadata_version, options.request);
    auto file_name = new_file_name(wheel, version, options.platform);

    RetagPlan plan;
    RetagResult& result = plan.result;
    const auto& input = wheel.archive().path();
    result.file_name = {input.filename().string(), wheel::format_filename(file_name)};
    result.output = out_dir / result.file_name.after;
    result.version = {wheel.metadata_version(), version.normalized()};
    result.dist_info = {wheel.dist_info(), dist_info_name_part(wheel) + "-" + version.normalized() + ".dist-info"};
    result.wheel_tags_rewritten = !wheel::tags_agree(wheel);
    const bool new_tags = options.platform || result.wheel_tags_rewritten;
    result.tags = {trimmed_tags(wheel), new_tags ? file_name.tags() : trimmed_tags(wheel)};
    if (!same_version(wheel.filename().version, metadata_version)) result.fixed_file_name_version = wheel.filename().version;
    if (options.request.torch) result.torch = options.request.torch->public_part();

    plan.dist_info.replaced["METADATA"] = new_metadata(wheel, options, result);
    if (new_tags) plan.dist_info.replaced["WHEEL"] = wheel::set_tags(member_text(wheel, "WHEEL"), result.tags.after);
    if (result.dist_info.after != result.dist_info.before) plan.dist_info.rename_to = result.dist_info.after;
    return plan;
}

std::vector<std::string> unchecked_platform_tags(const RetagResult& result, const RetagOptions& options) {
    if (options.platform) return {};
    const auto tags = wheel::parse_filename(result.file_name.after).platform_tags;
    const bool claims = std::any_of(tags.begin(), tags.end(), [](const std::string& tag) {
        return tag.starts_with("manylinux") || tag.starts_with("musllinux");
    });
    return claims ? tags : std::vector<std::string>{};
}

void require_plausible_platform(const wheel::Wheel& wheel, const std::string& platform) {
    auto problem = policy::platform_change_problem(wheel.filename().platform_tags, split(platform, '.'));
    if (!problem.empty()) throw InputError("--platform", problem);
}

void refuse_output_over_input(const wheel::Wheel& wheel, const std::filesystem::path& output) {
    if (same_file(wheel.archive().path(), output))
        throw InputError(output.string(), "output would overwrite the input wheel; choose another -o directory");
}

wheel::PinnedTorch pin_for_torch(const wheel::Wheel& wheel, const wheel::Version& torch) {
    return wheel::pin_torch(member_text(wheel, "METADATA"), *wheel::torch_pin_specifier(torch, wheel::TorchPin::minor),
                            wheel::PinWrite::within_author, earlier_pin(wheel));
}

std::vector<wheel::MemberDigest> retag_digests(const wheel::Wheel& wheel, bool verify) {
    if (verify) return wheel::scan_members(wheel.archive());
    const auto& dist_info = wheel.dist_info();
    return wheel::scan_sizes(wheel.archive(), [&](const zip::Member& member) {
        return member.name == dist_info + "/METADATA" || member.name == dist_info + "/WHEEL";
    });
}

RetagResult retag_wheel(const wheel::Wheel& wheel, const std::vector<wheel::MemberDigest>& digests,
                        const RetagOptions& options, const std::filesystem::path& out_dir) {
    auto retag = plan_retag(wheel, options, out_dir);
    WheelPlan plan;
    plan.output = retag.result.output;
    plan.overwrite = options.overwrite;
    plan.dist_info = std::move(retag.dist_info);
    if (wheel::is_variant_wheel(wheel)) {
        // A variant's properties come from the binaries and the pin written: the wheel
        // read as `wheelfix variant` reads it (every member, RECORD proven).
        const analysis::WheelReport read = analysis::inspect_wheel(wheel.archive().path());
        refuse_record_findings(wheel, read.record_findings, options.fix_version);
        retag.result.variant = label_output(wheel, read, plan, std::nullopt);
        plan.output = plan.output.parent_path() / wheel::with_variant_label(plan.output.filename().string(),
                                                                            retag.result.variant->label);
    }
    ExecuteOptions execute;
    execute.dry_run = options.dry_run;
    execute.digests = digests;
    execute.check_record = [&](const wheel::Wheel& read, const std::vector<wheel::MemberDigest>& proven) {
        refuse_record_findings(read, wheel::verify_wheel(read, proven), options.fix_version);
    };
    auto executed = execute_plan(wheel, plan, {}, execute);
    retag.result.output = executed.output;
    retag.result.file_name.after = executed.output.filename().string();
    if (retag.result.variant) retag.result.variant->output = executed.output;
    if (options.dry_run) retag.result.plan = describe_plan(wheel, plan, executed);
    return retag.result;
}

wheel::TorchPin PinRequest::torch_pin() const {
    if (kind == Kind::exact) return wheel::TorchPin::exact;
    return kind == Kind::none ? wheel::TorchPin::none : wheel::TorchPin::minor;
}

std::optional<wheel::SpecifierSet> PinRequest::range(const analysis::TorchRequirement* verdict) const {
    if (kind == Kind::specifier) return specifier;
    if ((kind == Kind::verdict || kind == Kind::range) && verdict) return verdict->pin;
    return std::nullopt;
}

PinRequest parse_pin_request(std::string_view text, bool automatic) {
    using Kind = PinRequest::Kind;
    static constexpr std::pair<std::string_view, Kind> kWords[] = {
        {"minor", Kind::minor}, {"exact", Kind::exact}, {"none", Kind::none}, {"range", Kind::range}};
    if (text.empty()) return {automatic ? Kind::verdict : Kind::minor, std::nullopt};
    for (const auto& [word, kind] : kWords)
        if (text == word) return {kind, std::nullopt};
    const std::string given(text);
    if (!is_specifier(text))
        throw InputError("--pin", "expected minor, exact, none, range or a specifier like '>=2.9,<2.11', got '" + given + "'");
    auto specifier = wheel::SpecifierSet::try_parse(text);
    if (!specifier) throw InputError("--pin", "'" + given + "' is not a PEP 440 specifier like '>=2.9,<2.11'");
    return {Kind::specifier, std::move(specifier)};
}

wheel::Version retag_torch_version(const std::string& text) {
    auto version = wheel::Version::try_parse(text);
    if (!version) throw InputError("--torch", "expected a torch version like 2.10 or 2.10.0, or 'auto', got '" + text + "'");
    return *version;
}

void check_retag_command(const RetagCommand& command) {
    if (!command.automatic() && !command.torch_from.empty()) throw InputError("--torch-from", "only goes with --torch auto");
    if (command.pin.kind == PinRequest::Kind::range && !command.automatic())
        throw InputError("--pin range", "needs --torch auto (or give the range: --pin '>=2.9,<2.11')");
    if (!command.automatic()) retag_torch_version(command.torch);
    if (command.cuda) wheel::cuda_segment(*command.cuda);
}

RetagOptions retag_options(const RetagCommand& command, const wheel::Version& torch,
                           const analysis::TorchRequirement* verdict) {
    return RetagOptions{.request = {torch, command.cuda, *wheel::parse_local_format(command.local_format)},
                        .pin = command.pin.torch_pin(),
                        .pin_specifier = command.pin.range(verdict),
                        .platform = command.platform,
                        .fix_version = command.fix_version,
                        .overwrite = command.overwrite,
                        .dry_run = command.dry_run};
}

}  // namespace wheelfix::repair
