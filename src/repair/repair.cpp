// repair_wheel: one read (analyse, check, plan and splice each extension), then
// shim, retag and platform tag decided on the whole picture, one write, and the
// output read back and judged.
#include "wheelfix/repair/repair.hpp"

#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/wheel/rewrite.hpp"
#include "wheelfix/wheel/scan.hpp"

#include <sys/utsname.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace wheelfix::repair {
namespace {

// An extension that needs the shim, with its own relink options: its edits wait
// for the shim's name. It is not kept inflated meanwhile (a wheel's extensions
// together can be gigabytes) but inflated again once the shim exists, so memory
// stays that of the largest member.
struct PendingMember {
    const zip::Member* member = nullptr;
    int depth = 0;
    RelinkOptions options;
};

std::string join(const std::vector<std::string>& items, std::string_view separator) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
    return out;
}

bool excluded(const RepairOptions& options, const std::string& member) { return matches_any(options.exclude, member); }

// The profile used for judging: the one given, or, without one, only what every
// torch extension needs: torch's libraries where pip installs them.
policy::Profile profile_or_default(const RepairOptions& options) {
    if (options.profile) return *options.profile;
    policy::Profile torch_only;
    torch_only.name = "torch's pip layout";
    torch_only.source = "built-in";
    torch_only.rpaths = {"{root}/torch/lib"};
    return torch_only;
}

// The relink an extension gets from the profile and the general rules.
RelinkOptions member_relink(const policy::Profile& profile, const analysis::ElfReport& report, int depth) {
    RelinkOptions options;
    options.drop_absolute = true;
    options.add_rpath = analysis::missing_search_path(profile, report, depth);
    for (const auto& replacement : profile.replace_needed)
        if (std::find(report.needed.begin(), report.needed.end(), replacement.from) != report.needed.end())
            options.replace_needed.emplace_back(replacement.from, replacement.to);
    return options;
}

void add_shim_links(RelinkOptions& options, const RelinkOptions& shim_links) {
    options.add_needed.insert(options.add_needed.end(), shim_links.add_needed.begin(), shim_links.add_needed.end());
    options.add_rpath.insert(options.add_rpath.end(), shim_links.add_rpath.begin(), shim_links.add_rpath.end());
}

std::string platform_part(const wheel::Wheel& wheel) { return join(wheel.filename().platform_tags, "."); }

// Everything one read of the wheel gathers.
class Reader {
public:
    Reader(const wheel::Wheel& wheel, const abi::SymbolIndex& index, const RepairOptions& options,
           const policy::Profile& profile)
        : wheel_(wheel),
          options_(options),
          profile_(profile),
          label_(wheel.archive().path().string()),
          planner_(index, label_, options.maps) {}

    std::vector<wheel::MemberDigest> read() {
        auto wants = [&](const zip::Member& member) {
            return !member.is_symlink && !member.name.starts_with(wheel_.dist_info() + "/");
        };
        auto digests = wheel::scan_members_indexed(wheel_.archive(), wants,
                                                   [&](const zip::Member& member, const zip::InflatedMember& inflated) {
                                                       if (member_error_) return;
                                                       try {
                                                           take(member, inflated);
                                                       } catch (const InputError& error) {
                                                           member_error_ = error;
                                                       }
                                                   });
        // A tampered member explains a broken ELF: RECORD first. WHEEL's Tag lines
        // disagreeing with the file name is what repair rewrites anyway.
        auto findings = wheel::verify_wheel(wheel_, digests);
        std::erase_if(findings, [](const auto& f) { return f.kind == wheel::FindingKind::tags; });
        wheel::refuse_findings(wheel_, findings);
        if (member_error_) throw *member_error_;
        return digests;
    }

    std::vector<analysis::ElfReport> elves;
    std::vector<PendingMember> pending;
    std::map<std::string, zip::PrecompressedMember> edited;
    std::vector<MemberChange> changed;
    ShimPlanner& planner() { return planner_; }

private:
    void take(const zip::Member& member, const zip::InflatedMember& inflated) {
        const std::string& name = member.name;
        if (!elf::is_elf(inflated.data)) return;
        auto report = analysis::analyze_member(wheel_, name, inflated.data);
        int depth = wheel::directory_depth(name);
        auto relink = member_relink(profile_, report, depth);
        bool needs_shim = planner_.take(name, parse(name, inflated.data));
        elves.push_back(std::move(report));
        if (excluded(options_, name)) return;
        if (needs_shim) {
            pending.push_back({&member, depth, std::move(relink)});
            return;
        }
        auto member_edit = relink_member(relink, label_, name, inflated, depth);
        if (!member_edit) return;
        changed.push_back(std::move(member_edit->change));
        edited.emplace(name, std::move(member_edit->data));
    }

    elf::ElfFile parse(const std::string& name, std::span<const std::uint8_t> image) const {
        try {
            return elf::ElfFile::parse(image);
        } catch (const elf::ElfError& error) {
            throw InputError(label_ + ": " + name, std::string("invalid ELF: ") + error.what());
        }
    }

    const wheel::Wheel& wheel_;
    const RepairOptions& options_;
    const policy::Profile& profile_;
    std::string label_;
    ShimPlanner planner_;
    std::optional<InputError> member_error_;
};

// Retagged for the index's torch when the wheel uses torch, else torch is left out.
RetagOptions retag_options(const RepairOptions& options, const abi::SymbolIndex& index,
                           std::optional<std::string> platform, bool uses_torch) {
    RetagOptions retag;
    retag.request = {std::nullopt, std::nullopt, options.local_format};
    if (uses_torch) retag.request.torch = wheel::Version::parse(index.torch_version);
    retag.pin = options.pin;
    retag.platform = std::move(platform);
    retag.overwrite = options.overwrite;
    return retag;
}

// The shim named, the extensions that need it get their edits.
// The shim's RUNPATH: the profile's directories seen from "<dist>.libs/", torch's
// always among them.
std::string shim_runpath(const policy::Profile& profile) {
    constexpr int kShimDepth = 1;
    std::vector<std::string> entries;
    for (const auto& path : profile.rpaths) entries.push_back(wheel::expand_root(path, kShimDepth));
    if (std::find(entries.begin(), entries.end(), kShimRunpath) == entries.end()) entries.push_back(kShimRunpath);
    return join(entries, ":");
}

std::vector<wheel::AddedMember> wire_shim(const wheel::Wheel& wheel, const policy::Profile& profile, Reader& read,
                                          RepairReport& report) {
    auto library = read.planner().finish(report.shim, shim_runpath(profile));
    if (!library) return {};
    report.shim.shim_member = shim_directory(wheel) + "/" + library->file_name;
    auto links = shim_link_options(wheel, *library);
    for (auto& member : read.pending) {
        add_shim_links(member.options, links);
        auto inflated = zip::inflate_indexed(wheel.archive(), *member.member, [](std::span<const std::uint8_t>) {}, true);
        auto member_edit = relink_member(member.options, report.input.string(), member.member->name, inflated, member.depth);
        if (!member_edit) continue;
        report.shim.changed.push_back(member_edit->change);
        read.changed.push_back(std::move(member_edit->change));
        read.edited.emplace(member.member->name, std::move(member_edit->data));
    }
    read.pending.clear();
    std::vector<wheel::AddedMember> added{{report.shim.shim_member, std::move(library->bytes), 0100755}};
    library->bytes.clear();
    report.shim.shim = std::move(library);
    return added;
}

void note_what_was_wrong(const analysis::WheelReport& wheel_report, const policy::Profile& profile,
                         RepairReport& report) {
    report.findings_before = analysis::evaluate(profile, wheel_report);
    for (const auto& elf : wheel_report.elves)
        for (const auto& entry : elf.search_path)
            if (entry.absolute || entry.outside_wheel) report.absolute_rpath_entries.push_back(elf.name + ": " + entry.path);
    report.platform_lied = std::any_of(wheel_report.platform_claims.begin(), wheel_report.platform_claims.end(),
                                       [](const analysis::PlatformClaim& claim) { return claim.lies; });
}

void note_stubs(RepairReport& report) {
    for (const auto& symbol : report.shim.symbols) {
        if (symbol.decision == ShimDecision::stub) report.stubbed.push_back(symbol.symbol.demangled);
        else ++report.unresolved_torch_symbols;
    }
    report.unresolved_torch_symbols += report.stubbed.size() + report.shim.not_shimmed.size();
}

// What the plan leaves: the findings repair cannot fix.
std::vector<analysis::Finding> unfixable(const std::vector<analysis::Finding>& findings) {
    std::vector<analysis::Finding> left;
    std::copy_if(findings.begin(), findings.end(), std::back_inserter(left),
                 [](const analysis::Finding& finding) { return !finding.repair_fixes; });
    return left;
}

// What the input's reading says of an output member that is a copy of an input
// member as stored: same name, not rewritten, same method, CRC-32 and sizes (its
// stored bytes were copied raw). Anything else is read back.
class CopiedMembers {
public:
    CopiedMembers(const wheel::Wheel& input, const std::vector<wheel::MemberDigest>& digests,
                  const analysis::WheelReport& input_report, std::set<std::string> rewritten)
        : input_(input), rewritten_(std::move(rewritten)) {
        for (const auto& digest : digests) digests_.emplace(digest.member->name, &digest);
        for (const auto& elf : input_report.elves) elves_.emplace(elf.name, &elf);
    }

    std::optional<analysis::KnownMember> operator()(const zip::Member& written) const {
        if (rewritten_.contains(written.name)) return std::nullopt;
        const zip::Member* original = input_.archive().find(written.name);
        auto digest = digests_.find(written.name);
        if (original == nullptr || digest == digests_.end() || !digest->second->hashed) return std::nullopt;
        if (original->method != written.method || original->crc32 != written.crc32 || original->size != written.size ||
            original->compressed_size != written.compressed_size || original->is_symlink != written.is_symlink)
            return std::nullopt;
        analysis::KnownMember known{*digest->second, nullptr};
        if (known.digest.is_elf) {
            auto elf = elves_.find(written.name);
            if (elf == elves_.end()) return std::nullopt;
            known.elf = elf->second;
        }
        return known;
    }

private:
    const wheel::Wheel& input_;
    std::set<std::string> rewritten_;
    std::map<std::string, const wheel::MemberDigest*> digests_;
    std::map<std::string, const analysis::ElfReport*> elves_;
};

// Reads the output back — what this repair wrote (edited and added members, the
// new dist-info); members copied as stored are the input's, read already — RECORD
// must hold (our own write), the profile judges it. Returns the output's ELF
// members (the load test lays them all out).
std::vector<std::string> prove_output(const policy::Profile& profile, const CopiedMembers& copied, RepairReport& report) {
    auto written = analysis::inspect_wheel(report.output, std::cref(copied));
    report.output_record_findings = written.record_findings;
    report.remaining = analysis::evaluate(profile, written);
    if (!report.output_record_findings.empty())
        throw std::logic_error(report.output.string() + ": the written wheel fails its own RECORD: " +
                               report.output_record_findings.front().member + ": " + report.output_record_findings.front().problem);
    std::vector<std::string> elf_members;
    for (const auto& elf : written.elves) elf_members.push_back(elf.name);
    return elf_members;
}

std::string host_machine() {
    utsname names{};
    return ::uname(&names) == 0 ? names.machine : "";
}

// The last rung of the ladder, where it can run here.
void load_edited_extensions(const RepairOptions& options, const std::string& machine,
                            const std::vector<std::string>& elf_members, RepairReport& report) {
    std::error_code ignored;
    if (options.loader.empty()) report.load_test_skipped = "load test not asked for";
    else if (!options.torch_dir || !std::filesystem::is_directory(*options.torch_dir, ignored))
        report.load_test_skipped = "--torch is not an installed torch directory";
    else if (elf_members.empty()) report.load_test_skipped = "no extension in the wheel";
    else if (machine != host_machine()) report.load_test_skipped = "extensions for " + machine + ", this machine is " + host_machine();
    else if (report.relinked.empty()) report.load_test_skipped = "no extension was edited";
    if (!report.load_test_skipped.empty()) return;
    std::vector<std::string> members;
    for (const auto& change : report.relinked) members.push_back(change.member);
    std::filesystem::path torch_dir = *options.torch_dir;  // the torch package, or the directory holding it
    if (!std::filesystem::is_directory(torch_dir / "lib", ignored)) torch_dir /= "torch";
    report.loads = load_test(report.output, elf_members, members, torch_dir, options.loader);
}

// --strict, and what only the written wheel showed (its read-back, the load test)
// is not clean: the output goes again, so --strict never leaves a wheel with
// findings behind.
void withdraw_output(RepairReport& report) {
    std::filesystem::remove(report.output);
    report.written = false;
    report.withdrawn = true;
}

}  // namespace

RepairReport repair_wheel(const std::filesystem::path& wheel_path, const abi::SymbolIndex& index,
                          const RepairOptions& options, const std::filesystem::path& out_dir) {
    if (index.torch_version.empty())
        throw InputError(index.source, "torch version unknown (no torch/version.py); repair retags for one version");
    auto wheel = wheel::Wheel::open(wheel_path);
    require_agreeing_versions(wheel, false);
    auto profile = profile_or_default(options);
    RepairReport report;
    report.input = wheel_path;
    report.torch_version = index.torch_version;
    report.platform_before = platform_part(wheel);
    auto early = plan_retag(wheel, retag_options(options, index, std::nullopt, true), out_dir);  // refuse before reading
    refuse_output_over_input(wheel, early.result.output);

    Reader read(wheel, index, options, profile);
    auto digests = read.read();
    auto wheel_report = analysis::wheel_report(wheel, digests, std::move(read.elves));
    std::string machine = wheel_report.elves.empty() ? "" : wheel_report.elves.front().machine;
    note_what_was_wrong(wheel_report, profile, report);
    auto added = wire_shim(wheel, profile, read, report);
    note_stubs(report);
    report.relinked = std::move(read.changed);

    auto target_tag = analysis::target_platform_tag(profile, wheel_report);
    std::optional<std::string> platform;
    if (!target_tag.empty() && target_tag != report.platform_before) platform = target_tag;
    report.platform_after = platform.value_or(report.platform_before);
    report.uses_torch = report.shim.shim || std::any_of(wheel_report.elves.begin(), wheel_report.elves.end(),
                                                        [](const auto& elf) { return analysis::uses_torch(elf); });
    auto retag = plan_retag(wheel, retag_options(options, index, platform, report.uses_torch), out_dir);
    report.retag = retag.result;
    report.output = retag.result.output;
    refuse_output_over_input(wheel, report.output);
    report.remaining = unfixable(report.findings_before);
    if (options.dry_run || (options.strict && !report.clean())) return report;

    refuse_existing_output(report.output, options.overwrite);
    std::set<std::string> rewritten;
    for (const auto& [name, _] : read.edited) rewritten.insert(name);
    for (const auto& member : added) rewritten.insert(member.name);
    const CopiedMembers copied(wheel, digests, wheel_report, std::move(rewritten));
    wheel::WheelChanges changes{std::move(read.edited), std::move(added), std::move(retag.dist_info)};
    std::filesystem::create_directories(out_dir);
    wheel::write_wheel_changes(wheel, std::move(changes), report.output,
                               wheel::WriteOptions{wheel::source_date_epoch_from_environment()});
    report.written = true;
    auto elf_members = prove_output(profile, copied, report);
    load_edited_extensions(options, machine, elf_members, report);
    if (options.strict && !report.clean()) withdraw_output(report);
    return report;
}

}  // namespace wheelfix::repair
