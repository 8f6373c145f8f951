// repair_wheel: a plan run by the one executor (plan.hpp): the shim foreseen before
// the read (foresight.hpp); each extension analysed, checked and its relink planned
// on the executor's one parse, with the foreseen shim's links; shim, grafts, retag
// and platform tag decided on the whole picture after the read (members edited with
// links it does not confirm edited again); one write, staged, read back, judged and
// load-tested before it is published.
#include "wheelfix/repair/repair.hpp"

#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/policy/library_classes.hpp"
#include "wheelfix/repair/foresight.hpp"
#include "wheelfix/repair/sbom.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/wheel/rewrite.hpp"
#include "wheelfix/util/text.hpp"

#include <elf.h>
#include <sys/utsname.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace wheelfix::repair {
namespace {

// An extension whose edits wait for the shim's name (none was foreseen) or the
// graft plan: its own relink options and the search path entries its one parse said
// to drop. It is not kept inflated meanwhile (a wheel's extensions together can be
// gigabytes) but read again by the executor once its edits are known
// (PlanHooks::reread_kept).
struct PendingMember {
    std::string name;
    int depth = 0;
    RelinkOptions options;
    std::vector<std::string> dropped;
    bool needs_shim = false;
    std::size_t elf = 0;  // index into the read's ElfReports
};

// A member edited while it was read although its edits depend on the whole wheel:
// with the links foreseen before the pass (repair/foresight.hpp; graft links from
// its own search path when the grafts were not foreseen: repair/graft.hpp
// early_links). Checked against the shim and grafts the whole read decides: waits
// like a PendingMember, and is edited again, when they differ.
struct EarlyMember {
    PendingMember member;  // its own relink, without the shim's or the grafts' links
    Links applied;         // the links it was edited with
};

bool excluded(const RepairOptions& options, const std::string& member) { return matches_any(options.skip_member, member); }

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

// Without a profile, an extension linking a CUDA runtime gets the wiring of the
// built-in profile for its CUDA major (cuda13-blackwell, cuda12-hopper): its rpath
// directories, where torch and the nvidia-* wheels install their libraries.
const policy::Profile& wiring_for(const policy::Profile& fallback, const analysis::ElfReport& report) {
    static const policy::Profile cuda13 = [] {
        auto wiring = policy::load_profile("cuda13-blackwell");
        return policy::Profile{wiring.name, wiring.source, {}, {}, {}, wiring.rpaths, {}, {}};
    }();
    static const policy::Profile cuda12 = [] {
        auto wiring = policy::load_profile("cuda12-hopper");
        return policy::Profile{wiring.name, wiring.source, {}, {}, {}, wiring.rpaths, {}, {}};
    }();
    if (report.cudart_major == 13) return cuda13;
    if (report.cudart_major == 12) return cuda12;
    return fallback;
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

std::string platform_part(const wheel::Wheel& wheel) { return join(wheel.filename().platform_tags, "."); }

// Retagged for the index's torch when the wheel uses torch, else torch is left out.
RetagOptions retag_options(const RepairOptions& options, const abi::SymbolIndex& index,
                           std::optional<std::string> platform, bool uses_torch) {
    RetagOptions retag;
    retag.request = {std::nullopt, std::nullopt, options.local_format};
    if (uses_torch) retag.request.torch = options.label_torch ? *options.label_torch : wheel::Version::parse(index.torch_version);
    retag.pin = options.pin;
    retag.pin_specifier = options.pin_specifier;
    retag.keep_version = options.keep_version;
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

// With --no-update-tags the wheel keeps its platform tags by request (auditwheel's
// meaning): what the file name's tag says is then not a finding left.
void drop_kept_tags(const RepairOptions& options, std::vector<analysis::Finding>& remaining) {
    if (options.no_update_tags)
        std::erase_if(remaining, [](const analysis::Finding& finding) { return finding.kind == analysis::Finding::Kind::platform; });
}

// The platform findings judged the input before the grafts were known: their "repair
// sets TAG" names the tag this repair writes (a grafted library may need a newer
// one), so that the plan's lines equal what is written.
void name_the_written_platform(std::vector<analysis::Finding>& findings, const std::string& written_tag,
                               const std::string& foreseen_tag, bool tags_kept) {
    constexpr std::string_view sets = "; repair sets ";
    for (auto& finding : findings) {
        const auto at = finding.message.find(sets);
        if (finding.kind != analysis::Finding::Kind::platform || at == std::string::npos) continue;
        const std::string said = finding.message.substr(at + sets.size());
        finding.message.resize(at);
        if (tags_kept) {
            finding.message += "; --no-update-tags keeps it";
        } else {
            finding.message += std::string(sets) + written_tag;
            if (said != written_tag && written_tag != foreseen_tag) finding.message += " (the grafted libraries need it)";
            else if (said != written_tag) finding.message += " (--plat)";
        }
    }
}

// What the plan leaves: the findings repair cannot fix.
std::vector<analysis::Finding> unfixable(const std::vector<analysis::Finding>& findings) {
    std::vector<analysis::Finding> left;
    std::copy_if(findings.begin(), findings.end(), std::back_inserter(left),
                 [](const analysis::Finding& finding) { return !finding.repair_fixes; });
    return left;
}

// What this repair knows of an output member without reading it back:
// - a copy of an input member as stored: same name, not rewritten, same method,
//   CRC-32 and sizes (its stored bytes were copied raw): the input's digest and
//   ElfReport;
// - an edited (spliced) member whose central directory entry has the CRC-32 and
//   sizes the splice made: the digest and ElfReport the splice's one pass over the
//   new content gave (plan.hpp read_edited; the splice proved its stream: zip/splice.hpp).
// Anything else (added members: the shim, grafted libraries; the dist-info) is read
// back: they are small, and reading them proves the new-member deflate and RECORD as written.
class KnownOutput {
public:
    KnownOutput(const wheel::Wheel& input, const std::vector<wheel::MemberDigest>& digests,
                const analysis::WheelReport& input_report, std::set<std::string> rewritten,
                const std::vector<MemberChange>& edited, const std::map<std::string, analysis::ElfReport>& edited_reports)
        : input_(input), rewritten_(std::move(rewritten)), edited_reports_(edited_reports) {
        for (const auto& digest : digests) digests_.emplace(digest.member->name, &digest);
        for (const auto& elf : input_report.elves) elves_.emplace(elf.name, &elf);
        for (const auto& change : edited) edited_.emplace(change.member, &change);
    }

    std::optional<analysis::KnownMember> operator()(const zip::Member& written) const {
        if (auto change = edited_.find(written.name); change != edited_.end()) return edited(written, *change->second);
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
    std::optional<analysis::KnownMember> edited(const zip::Member& written, const MemberChange& change) const {
        auto report = edited_reports_.find(written.name);
        if (report == edited_reports_.end()) return std::nullopt;
        if (written.method != zip::Method::deflated || written.is_symlink || written.crc32 != change.crc32_after ||
            written.size != change.size_after || written.compressed_size != change.compressed_after)
            throw std::logic_error(written.name + ": the written member's CRC-32 or sizes are not the ones its splice made");
        wheel::MemberDigest digest;
        digest.size = change.size_after;
        digest.sha256 = change.sha256_after;
        digest.is_elf = true;
        return analysis::KnownMember{digest, &report->second};
    }

    const wheel::Wheel& input_;
    std::set<std::string> rewritten_;
    const std::map<std::string, analysis::ElfReport>& edited_reports_;
    std::map<std::string, const wheel::MemberDigest*> digests_;
    std::map<std::string, const analysis::ElfReport*> elves_;
    std::map<std::string, const MemberChange*> edited_;
};

// Judges the output: the members this repair added and the new dist-info are read
// back; members copied as stored are the input's, read already, and edited ones were
// read in their splice (KnownOutput) — RECORD must hold (our own write), the
// profile judges it. Returns the output's ELF
// members as the load test needs them.
std::vector<LoadMember> prove_output(const policy::Profile& profile, const KnownOutput& known,
                                      const std::filesystem::path& written_path, RepairReport& report) {
    auto written = analysis::inspect_wheel(written_path, std::cref(known));
    report.output_record_findings = written.record_findings;
    report.remaining = analysis::evaluate(profile, written);
    if (!report.output_record_findings.empty())
        throw std::logic_error(report.output.string() + ": the written wheel fails its own RECORD: " +
                               report.output_record_findings.front().member + ": " + report.output_record_findings.front().problem);
    std::vector<LoadMember> elf_members;
    for (const auto& elf : written.elves) {
        LoadMember member{elf.name, elf.needed, {}, elf.elf_class, elf.machine};
        for (const auto& entry : elf.search_path) member.search_path.push_back(entry.path);
        elf_members.push_back(std::move(member));
    }
    return elf_members;
}

std::string host_machine() {
    utsname names{};
    return ::uname(&names) == 0 ? names.machine : "";
}

// The last rung of the ladder, where it can run here.
void load_edited_extensions(const RepairOptions& options, const std::string& machine,
                            const std::vector<LoadMember>& elf_members, const std::filesystem::path& written_path,
                            RepairReport& report) {
    std::error_code ignored;
    if (options.loader.empty()) report.load_test_skipped = options.no_loader.empty() ? "load test not asked for" : options.no_loader;
    else if (!options.torch_dir || !std::filesystem::is_directory(*options.torch_dir, ignored))
        report.load_test_skipped = !options.load_test_unavailable.empty() ? options.load_test_unavailable
                                   : options.no_torch ? "no --torch: no installed torch to load the extensions beside"
                                                      : "--torch is not an installed torch directory";
    else if (elf_members.empty()) report.load_test_skipped = "no extension in the wheel";
    else if (machine != host_machine()) report.load_test_skipped = "extensions for " + machine + ", this machine is " + host_machine();
    else if (report.relinked.empty()) report.load_test_skipped = "no extension was edited";
    if (!report.load_test_skipped.empty()) return;
    // The layout puts the torch given at site/torch: a member installed under torch/
    // would be laid over it (and, installed by pip, would overwrite torch's own files).
    // (A name longer than NAME_MAX never gets here: verify's finding refuses the wheel before work.)
    for (const auto& elf : elf_members) {
        const std::string& member = elf.member;
        if (std::string_view(wheel::installed_path(member)).starts_with("torch/"))
            throw InputError(report.input.string(), member + " is an ELF file installed under torch/, where torch itself "
                                                             "lives: installing the wheel would overwrite torch's files, and "
                                                             "the load test cannot lay it beside the torch given");
    }
    std::vector<std::string> members;
    for (const auto& change : report.relinked) members.push_back(change.member);
    std::filesystem::path torch_dir = *options.torch_dir;  // the torch package, or the directory holding it
    if (!std::filesystem::is_directory(torch_dir / "lib", ignored)) torch_dir /= "torch";
    LoadLayout layout{torch_dir, {}};
    for (const auto& rpath : options.profile ? options.profile->rpaths : std::vector<std::string>{})
        if (rpath.starts_with("{root}/")) layout.beside.push_back(rpath.substr(7));
    report.loads = load_test(written_path, elf_members, members, layout, options.loader, options.load_test_limit);
}


// The platform tag the result truly meets: the wheel's and the grafted libraries'
// symbol-version needs, raised to the oldest tag allowing every system library the
// result links, then to the profile's min-platform; --plat asks for one tag
// (refused below what the result needs; with --only-plat it is the tag).
std::string result_platform_tag(const policy::Profile& profile, analysis::WheelReport wheel_report,
                                const GraftPlan* grafts, const RepairOptions& options, const std::string& wheel_label) {
    if (wheel_report.elves.empty()) return {};
    const std::string arch = wheel_report.elves.front().machine;
    if (grafts) {
        wheel_report.needs = policy::newest(wheel_report.needs, grafts->needs);
        wheel_report.honest_tag = policy::tag_allowing(policy::honest_tag(wheel_report.needs, arch),
                                                       grafts->resolution.names_of(analysis::LibraryClass::system),
                                                       arch, wheel_report.needs.links_musl);
    }
    std::string tag = analysis::target_platform_tag(profile, wheel_report);
    if (!options.plat) return tag;
    auto asked = policy::parse_platform_tag(*options.plat);
    if (asked.kind != policy::PlatformTag::Kind::manylinux && asked.kind != policy::PlatformTag::Kind::musllinux)
        throw InputError(*options.plat, "--plat takes a manylinux or musllinux tag with its architecture");
    if (asked.arch != arch)
        throw InputError(wheel_label, "--plat " + *options.plat + ": the extensions are for " + arch);
    if (tag.empty())
        throw InputError(wheel_label, "--plat " + *options.plat + " cannot be met: no platform tag fits the binaries");
    auto least = policy::parse_platform_tag(tag);
    if (least.kind != asked.kind || std::pair(asked.major, asked.minor) < std::pair(least.major, least.minor))
        throw InputError(wheel_label, "--plat " + *options.plat + " cannot be met: the result needs " + tag +
                                          (grafts && !grafts->grafts.empty() ? " (grafted libraries included)" : ""));
    return options.only_plat ? asked.text : tag;
}

// The distributions a wheel's torch and nvidia libraries come from, and whether
// METADATA requires each ("torch (required)", "nvidia-cuda-runtime (not in METADATA)").
std::vector<std::string> needed_distributions(const wheel::Wheel& wheel, const analysis::NeededResolution& resolution) {
    std::set<std::string> names;
    for (const auto& object : resolution.members)
        for (const auto& need : object.needs)
            if ((need.library_class == analysis::LibraryClass::torch || need.library_class == analysis::LibraryClass::nvidia) &&
                !need.distribution.empty())
                names.insert(need.distribution);
    std::vector<std::string> requires_dist;
    for (const auto& [key, value] : wheel.metadata().headers)
        if (key == "Requires-Dist") requires_dist.push_back(value);
    auto normal = [](std::string text) {
        for (auto& c : text) c = c == '_' || c == '.' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return text;
    };
    std::vector<std::string> lines;
    for (const auto& name : names) {
        bool required = std::any_of(requires_dist.begin(), requires_dist.end(), [&](const std::string& line) {
            auto lowered = normal(line);
            auto wanted = normal(name);
            return lowered.starts_with(wanted) &&
                   (lowered.size() == wanted.size() || std::string(" ;<>=!~([").find(lowered[wanted.size()]) != std::string::npos);
        });
        lines.push_back(name + (required ? " (METADATA requires it)" : " (not in METADATA's Requires-Dist)"));
    }
    return lines;
}

// The edit request of one member: its relink options for its depth, the search
// path entries its one parse said to drop (request_for with the ELF), and --strip.
elf::EditRequest request_with(const RelinkOptions& options, int depth, const std::vector<std::string>& dropped,
                              bool strip) {
    auto request = request_for(options, depth);
    request.remove_search_path = dropped;
    request.strip_symbols = strip;
    return request;
}

// A grafted copy with --strip: its symbol and debug sections dropped (after its
// SONAME and NEEDED edits, graft.cpp), as auditwheel strips what it grafts.
void strip_copy(wheel::AddedMember& copy) {
    elf::EditRequest request;
    request.strip_symbols = true;
    const auto plan = elf::plan_edits(elf::ElfFile::parse(copy.bytes), request);
    if (!plan.edits.empty()) copy.bytes = apply_edits(copy.bytes, plan.edits);
}

// One repair as the executor's hooks: take() each ELF member on its one parse,
// decide() after the read, prove() the staged output.
class RepairRun {
public:
    RepairRun(const wheel::Wheel& wheel, const abi::SymbolIndex& index, const RepairOptions& options,
              const std::filesystem::path& out_dir, RepairReport& report)
        : wheel_(wheel),
          index_(index),
          options_(options),
          out_dir_(out_dir),
          profile_(profile_or_default(options)),
          report_(report),
          planner_(index, wheel.archive().path().string(), options.maps) {}

    // Before the read: the shim and the grafts it will decide, foreseen from each
    // library member's linkage and imports (repair/foresight.hpp), so that the
    // members needing them are edited, and a big one hashed, in the read itself.
    void foresee() {
        ForesightRequest request;
        if (!options_.no_torch) request.index = &index_;
        request.maps = options_.maps;
        request.runpath = shim_runpath(profile_);
        if (options_.graft_libraries && grafts_worth_foreseeing(wheel_)) request.graft = &options_.graft;
        if (request.index || request.graft) foresight_ = repair::foresee(wheel_, request);
    }

    PlanHooks hooks() {
        PlanHooks hooks;
        hooks.on_elf = [this](const std::string& member, const elf::ElfFile& elf, WheelPlan& plan) {
            return take(member, elf, plan);
        };
        hooks.decide = [this](WheelPlan& plan, const PlanResult& read) { decide(plan, read); };
        hooks.reread_kept = true;
        hooks.bounded_reader = analysis::streamed_for_analysis;  // take() analyses every member
        hooks.read_edited = [this](const std::string& member, std::uint64_t size) { return read_edited(member, size); };
        hooks.speculate = [this](const std::string& member, const elf::ElfFile& elf) { return speculate(member, elf); };
        return hooks;
    }

    ExecuteOptions execute_options() {
        ExecuteOptions execute;
        execute.dry_run = options_.dry_run;
        // WHEEL's Tag lines disagreeing with the file name is what repair rewrites anyway.
        execute.check_record = [](const wheel::Wheel& wheel, const std::vector<wheel::MemberDigest>& digests) {
            auto findings = wheel::verify_wheel(wheel, digests);
            std::erase_if(findings, [](const auto& f) { return f.kind == wheel::FindingKind::tags; });
            wheel::refuse_findings(wheel, findings);
        };
        execute.prove = [this](const std::filesystem::path& written, const PlanResult& result) { return prove(written, result); };
        return execute;
    }

    // What the executor did, in the report.
    void finish(const PlanResult& executed) {
        report_.relinked = executed.changed;
        for (const auto& change : executed.changed)
            if (shim_members_.contains(change.member)) report_.shim.changed.push_back(change);
        report_.written = executed.written;
        report_.withdrawn = executed.withdrawn;
    }

private:
    const wheel::Wheel& wheel_;
    const abi::SymbolIndex& index_;
    const RepairOptions& options_;
    std::filesystem::path out_dir_;
    policy::Profile profile_;
    RepairReport& report_;
    ShimPlanner planner_;
    std::vector<analysis::ElfReport> elves_;
    std::vector<PendingMember> pending_;
    std::vector<EarlyMember> early_;
    std::set<std::string> shim_members_;
    std::set<std::string> added_;
    std::optional<analysis::WheelReport> wheel_report_;
    std::string machine_;
    std::map<std::string, analysis::ElfReport> edited_reports_;  // each edited member's new content, analysed
    Foresight foresight_;                                         // the shim's links and the grafts, foreseen

    // An edited member's new content analysed as the splice (or, speculated, the
    // member's read) streams it: what the proof would otherwise read back from the
    // output. Made on the speculation's thread too (plan.hpp): it touches nothing
    // shared before finish().
    EditedReader read_edited(const std::string& member, std::uint64_t size) {
        std::shared_ptr<elf::StreamedElf> streamed = analysis::streamed_for_analysis(size);
        EditedReader reader;
        reader.content = [streamed](std::span<const std::uint8_t> chunk) { streamed->consume(chunk); };
        reader.finish = [this, streamed, member](const elf::Fetch& again) {
            const std::string label = wheel_.archive().path().string() + ": " + member + " (as edited)";
            edited_reports_.insert_or_assign(member, analysis::analyze_streamed(*streamed, again, label, member));
        };
        return reader;
    }

    // The edits take() will plan for a big member during its read, asked on a parse
    // of its dynamic tables before the read (plan.hpp PlanHooks::speculate), with no
    // effect but the answer: the same relink from the same linkage, with the same
    // links (early_links_of); nullopt where take() would keep the member waiting or
    // plan nothing. A wrong answer costs only the second read it saves.
    std::optional<elf::EditRequest> speculate(const std::string& name, const elf::ElfFile& elf) const {
        if (excluded(options_, name) || !elf.has_dynamic()) return std::nullopt;
        const int depth = wheel::directory_depth(name);
        const auto report = analysis::analyze_linking(name, elf, depth);
        const bool may_graft = options_.graft_libraries && may_need_graft(report, report.needs.links_musl);
        const bool needs_shim = !options_.no_torch && planner_.examine(name, elf).needs_shim();
        const auto relink = member_relink(options_.profile ? profile_ : wiring_for(profile_, report), report, depth);
        const auto links = early_links_of(needs_shim, may_graft, report);
        if (!links) return std::nullopt;
        return request_with(with_links(relink, *links), depth, request_for(relink, elf, depth).remove_search_path, options_.strip);
    }

    // The links a member can be given during the read: the foreseen shim's when it
    // needs the shim; when it may need a graft, the foreseen grafts', or else those
    // its own search path gives (early_links); nullopt when one of them is not known
    // then (its edits wait).
    std::optional<Links> early_links_of(bool needs_shim, bool may_graft, const analysis::ElfReport& report) const {
        Links links;
        if (needs_shim) {
            if (!foresight_.shim_links) return std::nullopt;
            links += *foresight_.shim_links;
        }
        if (may_graft) {
            auto grafted = foresight_.grafts ? std::optional(foresight_.grafts->links(report))
                                             : early_links(wheel_, report, options_.graft, shim_directory(wheel_));
            if (!grafted) return std::nullopt;
            links += *grafted;
        }
        return links;
    }

    // One ELF member on the executor's one parse: analysed, checked against torch
    // for the shim, its relink planned: edited at once, with the links it can be
    // given now when it needs the shim or a graft (kept: edited again if the whole
    // plan disagrees), or left waiting for the shim's name and the graft plan (kept:
    // read again then).
    bool take(const std::string& name, const elf::ElfFile& elf, WheelPlan& plan) {
        auto report = analysis::analyze_member(wheel_, name, elf);
        int depth = wheel::directory_depth(name);
        auto relink = member_relink(options_.profile ? profile_ : wiring_for(profile_, report), report, depth);
        bool needs_shim = options_.no_torch ? false : planner_.take(name, elf);
        bool may_graft = options_.graft_libraries && may_need_graft(report, report.needs.links_musl);
        elves_.push_back(std::move(report));
        if (excluded(options_, name)) return false;
        if (!elf.has_dynamic()) {
            if (options_.strip && elf.type() != ET_REL) plan.edit_elf.push_back({name, request_with({}, depth, {}, true)});
            return false;
        }
        auto dropped = request_for(relink, elf, depth).remove_search_path;
        if (!needs_shim && !may_graft) {
            plan.edit_elf.push_back({name, request_with(relink, depth, dropped, options_.strip)});
            return false;
        }
        if (auto applied = early_links_of(needs_shim, may_graft, elves_.back())) {
            plan.edit_elf.push_back({name, request_with(with_links(relink, *applied), depth, dropped, options_.strip)});
            early_.push_back({{name, depth, std::move(relink), std::move(dropped), needs_shim, elves_.size() - 1}, std::move(*applied)});
            return true;
        }
        pending_.push_back({name, depth, std::move(relink), std::move(dropped), needs_shim, elves_.size() - 1});
        return true;
    }

    // The shim named and the grafts planned, the members waiting for them get
    // their edit steps; a member edited early whose links the whole plan does not
    // confirm is planned again (without the edits, when it gets none now).
    void wire_shim_and_grafts(const GraftPlan* grafts, WheelPlan& plan) {
        std::optional<Links> shim;
        if (!report_.torch_skipped) {
            auto library = planner_.finish(report_.shim, shim_runpath(profile_));
            if (library) {
                report_.shim.shim_member = shim_directory(wheel_) + "/" + library->file_name;
                shim = shim_links(wheel_, *library);
                plan.add.push_back({report_.shim.shim_member, std::move(library->bytes), 0100755});
                library->bytes.clear();
                report_.shim.shim = std::move(library);
            }
        }
        // The links a member gets, the whole wheel read; nullopt: it gets no edits.
        auto wanted = [&](const PendingMember& member) -> std::optional<Links> {
            if (member.needs_shim && !shim) return std::nullopt;
            Links links;
            if (member.needs_shim) links += *shim;
            if (grafts) links += grafts->links(wheel_report_->elves.at(member.elf));
            return links;
        };
        std::set<std::string> replanned;
        for (auto& [member, applied] : early_) {
            auto links = wanted(member);
            if (links && *links == applied) {
                if (member.needs_shim) shim_members_.insert(member.name);
                continue;
            }
            std::erase_if(plan.edit_elf, [&](const ElfEditStep& step) { return step.member == member.name; });
            replanned.insert(member.name);
            pending_.push_back(std::move(member));
        }
        early_.clear();
        for (auto& member : pending_) {
            const bool again = replanned.contains(member.name);
            auto links = wanted(member);
            if (!links) {
                if (again) plan.edit_elf.push_back({member.name, request_with({}, member.depth, {}, options_.strip), true});  // its early edits undone
                continue;
            }
            if (member.needs_shim) shim_members_.insert(member.name);
            plan.edit_elf.push_back({member.name, request_with(with_links(member.options, *links), member.depth, member.dropped,
                                                               options_.strip),
                                     again});
        }
        pending_.clear();
    }

    void decide(WheelPlan& plan, const PlanResult& read) {
        wheel_report_ = analysis::wheel_report(wheel_, read.digests, std::move(elves_));
        machine_ = wheel_report_->elves.empty() ? "" : wheel_report_->elves.front().machine;
        std::optional<GraftPlan> grafts;
        if (options_.graft_libraries) {
            grafts = plan_grafts(wheel_, wheel_report_->elves, options_.graft, shim_directory(wheel_));
            report_.grafted = grafts->grafts;
            report_.resolution = grafts->resolution;
            report_.distributions = needed_distributions(wheel_, grafts->resolution);
        }
        note_what_was_wrong(*wheel_report_, profile_, report_);
        wire_shim_and_grafts(grafts ? &*grafts : nullptr, plan);
        if (grafts)
            for (auto& copy : grafts->added) {
                if (options_.strip) strip_copy(copy);
                plan.add.push_back(std::move(copy));
            }
        for (const auto& added : plan.add) added_.insert(added.name);
        note_stubs(report_);

        auto target_tag = result_platform_tag(profile_, *wheel_report_, grafts ? &*grafts : nullptr, options_,
                                              report_.input.string());
        std::optional<std::string> platform;
        if (!options_.no_update_tags && !target_tag.empty() && target_tag != report_.platform_before) platform = target_tag;
        report_.platform_after = platform.value_or(report_.platform_before);
        name_the_written_platform(report_.findings_before, report_.platform_after,
                                  analysis::target_platform_tag(profile_, *wheel_report_), options_.no_update_tags);
        report_.uses_torch = report_.shim.shim || std::any_of(wheel_report_->elves.begin(), wheel_report_->elves.end(),
                                                              [](const auto& elf) { return analysis::uses_torch(elf); });
        auto retag = plan_retag(wheel_, retag_options(options_, index_, platform, report_.uses_torch && !options_.no_torch), out_dir_);
        if (grafts && !grafts->grafts.empty())
            retag.dist_info.added.emplace("sboms/wheelfix.cdx.json",
                                          sbom_json(wheel_.metadata_name(), retag.result.version.after, grafts->grafts));
        report_.retag = retag.result;
        report_.output = retag.result.output;
        label_variant(plan, retag.result);
        if (options_.add_runtime_requires) add_runtime_requires(plan, grafts ? &*grafts : nullptr);
        refuse_output_over_input(wheel_, report_.output);
        if (options_.claims) options_.claims->claim(report_.output, report_.input, options_.claim_position);
        plan.output = report_.output;
        plan.dist_info = std::move(retag.dist_info);
        report_.remaining = unfixable(report_.findings_before);
        drop_kept_tags(options_, report_.remaining);
        plan.withhold = options_.strict && !report_.clean();
    }

    // --add-runtime-requires: the CUDA libraries the extensions NEED that the torch build
    // repaired for does not bring, as Requires-Dist (what the wheel ships is not needed).
    void add_runtime_requires(WheelPlan& plan, const GraftPlan* grafts) {
        std::vector<std::string> needed, shipped;
        for (const auto& elf : wheel_report_->elves) {
            needed.insert(needed.end(), elf.needed.begin(), elf.needed.end());
            shipped.push_back(std::filesystem::path(elf.name).filename().string());
            if (elf.soname) shipped.push_back(*elf.soname);
        }
        if (grafts)
            for (const auto& graft : grafts->grafts) shipped.push_back(graft.needed_name);
        report_.runtime_torch_cuda = index_.cuda_version;
        report_.runtime_requires = analysis::runtime_requirements(needed, shipped, index_.cuda_version,
                                                                  analysis::torch_claims(wheel_));
        for (const auto& requirement : report_.runtime_requires) plan.requires_dist.push_back(requirement.line);
    }

    // --variant, or the input's own label kept (its properties derived again, in its schema).
    void label_variant(WheelPlan& plan, const RetagResult& retag) {
        std::optional<VariantRequest> request = options_.variant;
        if (!request && !wheel_.filename().variant_label.empty()) {
            request.emplace();
            request->label = wheel_.filename().variant_label;
            if (wheel_report_->variant) request->schema = wheel_report_->variant->schema;
        }
        if (!request) return;
        std::vector<std::string> torch_minors;
        if (report_.uses_torch && !options_.no_torch && retag.pin_specifier)
            torch_minors = analysis::pinned_torch_minors(retag.pin_specifier->text(), report_.input.string());
        VariantOutcome outcome;
        plan.variant = variant_step(*wheel_report_, torch_minors, *request, &outcome);
        report_.output = report_.output.parent_path() / wheel::with_variant_label(report_.output.filename().string(), outcome.label);
        outcome.output = report_.output;
        report_.variant = std::move(outcome);
    }

    // The staged output read back and judged, then load-tested; kept only when it
    // loads and, with --strict, is clean.
    bool prove(const std::filesystem::path& written, const PlanResult& result) {
        report_.relinked = result.changed;
        std::set<std::string> rewritten = added_;
        for (const auto& change : result.changed) rewritten.insert(change.member);
        const KnownOutput known(wheel_, result.digests, *wheel_report_, std::move(rewritten), result.changed, edited_reports_);
        auto elf_members = prove_output(profile_, known, written, report_);
        drop_kept_tags(options_, report_.remaining);
        load_edited_extensions(options_, machine_, elf_members, written, report_);
        return !report_.loads_failed() && !(options_.strict && !report_.clean());
    }
};

}  // namespace

OutputClaims::OutputClaims(std::vector<std::string> groups) : groups_(std::move(groups)), settled_(groups_.size(), false) {}

bool OutputClaims::earlier_pending(std::size_t position) const {
    if (position >= groups_.size()) return false;
    for (std::size_t earlier = 0; earlier < position; ++earlier)
        if (!settled_[earlier] && groups_[earlier] == groups_[position]) return true;
    return false;
}

void OutputClaims::ended(std::size_t position) {
    {
        const std::lock_guard lock(mutex_);
        if (position >= settled_.size() || settled_[position]) return;
        settled_[position] = true;
    }
    settled_changed_.notify_all();
}

void OutputClaims::claim(const std::filesystem::path& output, const std::filesystem::path& input, std::size_t position) {
    std::unique_lock lock(mutex_);
    settled_changed_.wait(lock, [&] { return !earlier_pending(position); });
    auto [taken, fresh] = taken_.emplace(output.lexically_normal(), input);
    if (position < settled_.size() && !settled_[position]) {
        settled_[position] = true;
        settled_changed_.notify_all();
    }
    if (fresh) return;
    throw InputError(input.string(), output.string() + " is also the output of " + taken->second.string() +
                                         " in this run (two inputs, one output name); repair them into separate -o directories");
}

RepairReport repair_wheel(const std::filesystem::path& wheel_path, const abi::SymbolIndex& index,
                          const RepairOptions& options, const std::filesystem::path& out_dir) {
    if (!options.no_torch && index.torch_version.empty())
        throw InputError(index.source, "torch version unknown (no torch/version.py); repair retags for one version");
    auto wheel = wheel::Wheel::open(wheel_path);
    require_agreeing_versions(wheel, false);
    RepairReport report;
    report.input = wheel_path;
    report.torch_skipped = options.no_torch;
    if (!options.no_torch) report.torch_version = index.torch_version;
    report.platform_before = platform_part(wheel);
    auto early = plan_retag(wheel, retag_options(options, index, std::nullopt, !options.no_torch), out_dir);  // refuse before reading
    refuse_output_over_input(wheel, early.result.output);

    RepairRun run(wheel, index, options, out_dir, report);
    run.foresee();
    WheelPlan plan;  // its output is named after the read: the platform tag comes from the binaries
    plan.overwrite = options.overwrite;
    auto hooks = run.hooks();
    auto executed = execute_plan(wheel, plan, hooks, run.execute_options());
    run.finish(executed);
    if (options.dry_run) report.plan = describe_plan(wheel, plan, executed);
    return report;
}

}  // namespace wheelfix::repair
