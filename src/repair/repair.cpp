// repair_wheel: a plan run by the one executor (plan.hpp): the shim foreseen before
// the read (foresight.hpp); each extension analysed, checked and its relink planned
// on the executor's one parse, with the foreseen shim's links; shim, grafts, retag
// and platform tag decided on the whole picture after the read (members edited with
// links it does not confirm edited again); one write, staged, read back, judged and
// load-tested before it is published.
#include "wheelfix/repair/repair.hpp"

#include "wheelfix/analysis/torch_verdict.hpp"
#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/policy/library_classes.hpp"
#include "wheelfix/repair/foresight.hpp"
#include "wheelfix/repair/sbom.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/wheel/rewrite.hpp"
#include "wheelfix/util/text.hpp"
#include "wheelfix/wheel/filename.hpp"

#include <elf.h>
#include <sys/utsname.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace wheelfix::repair {
namespace {

// What repair's decision reads of an ELF member (the loader's view of it): its
// linkage (NEEDED, search path, CUDA runtime, symbol-version floor), whether it
// imports torch functions the torch lacks, and the relink the profile gives it.
struct RepairView : MemberView {
    int depth = 0;
    bool skipped = false;      // --skip-member: never edited
    bool has_dynamic = false;
    bool relocatable = false;  // ET_REL: --strip leaves it
    analysis::ElfReport linkage;
    bool needs_shim = false;
    bool may_graft = false;
    RelinkOptions relink;               // the profile's and the general rules' relink
    std::vector<std::string> dropped;   // the search path entries that relink drops
};

// The wheel-wide facts repair's decision reads. Before the pass (whole false): the
// shim's links and the graft plan as foreseen (repair/foresight.hpp), either
// nullopt when not foreseen. After the whole read: the shim written (nullopt:
// none) and the graft plan (nullopt: --no-graft).
struct RepairFacts : WheelFacts {
    RepairFacts(bool whole_wheel, std::optional<Links> shim_links, std::optional<GraftPlan> graft_plan)
        : whole(whole_wheel), shim(std::move(shim_links)), grafts(std::move(graft_plan)) {}
    bool whole = false;
    std::optional<Links> shim;
    std::optional<GraftPlan> grafts;
};

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
    const auto wiring = [](const char* name) {
        auto loaded = policy::load_profile(name);
        return policy::Profile{loaded.name, loaded.source, {}, {}, {}, loaded.rpaths, {}, {}};
    };
    static const policy::Profile cuda13 = wiring("cuda13-blackwell");
    static const policy::Profile cuda12 = wiring("cuda12-hopper");
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
std::vector<analysis::Finding> unfixable(std::vector<analysis::Finding> findings) {
    std::erase_if(findings, [](const analysis::Finding& finding) { return finding.repair_fixes; });
    return findings;
}

// What this repair knows of an output member without reading it back:
// - a copy of an input member as stored: same name, not rewritten, same method,
//   CRC-32 and sizes (its stored bytes were copied raw): the input's digest and
//   ElfReport;
// - an edited (spliced) member whose central directory entry has the CRC-32 and
//   sizes the splice made: the digest and ElfReport the splice's one pass over the
//   new content gave (plan.hpp observe_edited; the splice proved its stream: zip/splice.hpp).
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

// The distributions a wheel's torch and nvidia libraries come from, each with
// whether a Requires-Dist names it (names compared as PEP 503 normalises them).
std::vector<DistributionNeed> needed_distributions(const wheel::Wheel& wheel, const analysis::NeededResolution& resolution) {
    std::set<std::string> names;
    for (const auto& object : resolution.members)
        for (const auto& need : object.needs)
            if ((need.library_class == analysis::LibraryClass::torch || need.library_class == analysis::LibraryClass::nvidia) &&
                !need.distribution.empty())
                names.insert(need.distribution);
    const auto claims = analysis::torch_claims(wheel);  // as check reads them
    std::vector<DistributionNeed> needs;
    for (const auto& name : names) needs.push_back({name, claims.names(name)});
    return needs;
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

// One repair as the executor's hooks: observe() each ELF member on its one parse,
// edits_for() it (the decision), decide() after the read, prove() the staged output.
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
    // library member's linkage and imports (repair/foresight.hpp).
    std::shared_ptr<const WheelFacts> foresee() const {
        ForesightRequest request;
        if (!options_.no_torch) request.index = &index_;
        request.maps = options_.maps;
        request.runpath = shim_runpath(profile_);
        if (options_.graft_libraries && grafts_worth_foreseeing(wheel_)) request.graft = &options_.graft;
        Foresight foresight;
        if (request.index || request.graft) foresight = repair::foresee(wheel_, request);
        return std::make_shared<RepairFacts>(false, std::move(foresight.shim_links), std::move(foresight.grafts));
    }

    PlanHooks hooks() {
        PlanHooks hooks;
        MemberDecision& decision = hooks.decision;
        decision.view = [this](const std::string& member, const elf::ElfFile& elf) {
            return with_shim(view_of(member, elf), !options_.no_torch && planner_.examine(member, elf).needs_shim());
        };
        decision.observe = [this](const std::string& member, const elf::ElfFile& elf) { return observe(member, elf); };
        decision.edits_for = [this](const MemberView& view, const WheelFacts* facts) {
            return edits_for(static_cast<const RepairView&>(view), static_cast<const RepairFacts*>(facts));
        };
        decision.foresee = [this] { return foresee(); };
        decision.decide = [this](WheelPlan& plan, const PlanResult& read) { return decide(plan, read); };
        decision.view_reads = wheel::Keeps::analysis;  // observe() analyses every member
        decision.observe_edited = [this](const std::string& member, wheel::MemberImage& edited) { observe_edited(member, edited); };
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
            if (report_.shim.shim && needs_shim_.contains(change.member)) report_.shim.changed.push_back(change);
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
    std::set<std::string> needs_shim_;  // members the decision gives the shim's links when one is written
    std::set<std::string> added_;
    std::optional<analysis::WheelReport> wheel_report_;
    std::string machine_;
    std::map<std::string, analysis::ElfReport> edited_reports_;  // each edited member's new content, analysed

    // An edited member's new content, analysed from what the engine kept of it as
    // the splice (or, speculated, the member's read) streamed it: what the proof
    // would otherwise read back from the output.
    void observe_edited(const std::string& member, wheel::MemberImage& edited) {
        const std::string label = wheel_.archive().path().string() + ": " + member + " (as edited)";
        edited_reports_.insert_or_assign(member, analysis::analyze_image(edited, label, member));
    }

    // What the decision reads of a member, on any parse of it (the pass's, or a big
    // member's speculative one); whether it needs the shim is the caller's to add.
    RepairView view_of(const std::string& name, const elf::ElfFile& elf) const {
        RepairView view;
        view.depth = wheel::directory_depth(name);
        view.skipped = matches_any(options_.skip_member, name);
        view.has_dynamic = elf.has_dynamic();
        view.relocatable = elf.type() == ET_REL;
        if (view.skipped || !view.has_dynamic) return view;
        view.linkage = analysis::analyze_linking(name, elf, view.depth);
        view.may_graft = options_.graft_libraries && may_need_graft(view.linkage, view.linkage.needs.links_musl);
        view.relink = member_relink(options_.profile ? profile_ : wiring_for(profile_, view.linkage), view.linkage, view.depth);
        view.dropped = request_for(view.relink, elf, view.depth).remove_search_path;
        return view;
    }

    static std::shared_ptr<const MemberView> with_shim(RepairView view, bool needs_shim) {
        view.needs_shim = needs_shim;
        view.reads_wheel = !view.skipped && view.has_dynamic && (needs_shim || view.may_graft);
        return std::make_shared<RepairView>(std::move(view));
    }

    // One ELF member on the executor's one parse: analysed for the whole-wheel
    // judgement, taken by the shim planner, and its view for the decision (every
    // read before anything is recorded: a bounded member's reads may be retried).
    std::shared_ptr<const MemberView> observe(const std::string& name, const elf::ElfFile& elf) {
        auto report = analysis::analyze_member(wheel_, name, elf);
        RepairView view = view_of(name, elf);
        const bool needs_shim = !options_.no_torch && planner_.take(name, elf);
        elves_.push_back(std::move(report));
        if (needs_shim && view.has_dynamic && !view.skipped) needs_shim_.insert(name);
        return with_shim(std::move(view), needs_shim);
    }

    // repair's decision about one ELF member, stated once: the relink the profile
    // and the general rules give it, with the shim's links when it needs the shim and
    // the grafts' when it may need one, and --strip. It waits when the facts given
    // do not decide those links: the shim not foreseen, the grafts neither foreseen
    // nor decidable from the member's own search path (graft.hpp early_links). With
    // the whole wheel read, a member that needs the shim gets no edits when no shim
    // is written.
    MemberEdits edits_for(const RepairView& view, const RepairFacts* facts) const {
        if (view.skipped) return {};
        if (!view.has_dynamic) {
            if (options_.strip && !view.relocatable) return {request_with({}, view.depth, {}, true)};
            return {};
        }
        const bool whole = facts && facts->whole;
        Links links;
        if (view.needs_shim) {
            if (!whole && !(facts && facts->shim)) return {std::nullopt, true};
            if (!facts->shim) return {};
            links += *facts->shim;
        }
        if (view.may_graft) {
            std::optional<Links> grafted;
            if (facts && facts->grafts) grafted = facts->grafts->links(view.linkage);
            else if (!whole) grafted = early_links(wheel_, view.linkage, options_.graft, shim_directory(wheel_));
            if (!grafted) return {std::nullopt, true};
            links += *grafted;
        }
        return {request_with(with_links(view.relink, links), view.depth, view.dropped, options_.strip)};
    }

    // The whole wheel read: its judgement, the shim built, the grafts planned, the
    // retag and platform tag; returns the facts every member's edits are final on.
    std::shared_ptr<const WheelFacts> decide(WheelPlan& plan, const PlanResult& read) {
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
        std::optional<Links> shim;
        if (!report_.torch_skipped)
            if (auto library = planner_.finish(report_.shim, shim_runpath(profile_)))
                shim = add_shim(wheel_, std::move(*library), plan, report_.shim);
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
        plan.dist_info = std::move(retag.dist_info);
        label_variant(plan);
        if (options_.add_runtime_requires) add_runtime_requires(plan, grafts ? &*grafts : nullptr);
        refuse_output_over_input(wheel_, report_.output);
        if (options_.claims) options_.claims->claim(report_.output, report_.input, options_.claim_position);
        plan.output = report_.output;
        report_.remaining = unfixable(report_.findings_before);
        drop_kept_tags(options_, report_.remaining);
        plan.withhold = options_.strict && !report_.clean();
        return std::make_shared<RepairFacts>(true, std::move(shim), std::move(grafts));
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
        for (const auto& runtime : report_.runtime_requires) plan.requires_dist.push_back(runtime.requirement);
    }

    // --variant, or the input's own variant kept, derived again for the output (repair/variant.hpp).
    void label_variant(WheelPlan& plan) {
        auto outcome = label_output(wheel_, *wheel_report_, plan, options_.variant);
        if (!outcome) return;
        report_.output = report_.output.parent_path() / wheel::with_variant_label(report_.output.filename().string(), outcome->label);
        outcome->output = report_.output;
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

std::string DistributionNeed::text() const {
    return name + (required ? " (METADATA requires it)" : " (not in METADATA's Requires-Dist)");
}

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
    WheelPlan plan;  // its output is named after the read: the platform tag comes from the binaries
    plan.overwrite = options.overwrite;
    auto hooks = run.hooks();
    auto executed = execute_plan(wheel, plan, hooks, run.execute_options());
    run.finish(executed);
    if (options.dry_run) report.plan = describe_plan(wheel, plan, executed);
    return report;
}

}  // namespace wheelfix::repair
