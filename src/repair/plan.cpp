// execute_plan: one read of the input, each ELF parsed once, edits spliced, one
// write (plan.hpp has the contract); describe_plan: the plan as --dry-run prints it.
#include "wheelfix/repair/plan.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/output_file.hpp"
#include "wheelfix/wheel/filename.hpp"
#include "wheelfix/wheel/member_reader.hpp"
#include "wheelfix/wheel/metadata_edit.hpp"
#include "wheelfix/wheel/variant.hpp"
#include "wheelfix/zip/splice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

namespace wheelfix::repair {

namespace {

// The chunks a big member's pass lets queue for its sink while the speculation reads
// its far view (why 32 MiB, and what the far reads cost: docs/decisions.md, "Big
// members: bounded memory and one inflate").
constexpr std::uint64_t kSpeculationLag = std::uint64_t(32) << 20;

// A member as its read left it (wheel/member_reader.hpp: whole, or bounded) with
// its parse. Kept after the read when its decision reads the wheel: a bounded one
// whole (its index, kept ranges and parse); a member read whole keeps only its
// name, and is inflated and parsed again when its edit is planned (plan.hpp, step 2).
struct KeptMember {
    std::string name;
    const zip::Member* member = nullptr;
    wheel::MemberImage image;
    std::optional<elf::ElfFile> elf;

    bool bounded() const { return image.way() == wheel::ReadWay::bounded; }
};

// What the engine feeds an edited member's new content into, for
// MemberDecision::observe_edited: `content` gets every byte in order, once (from
// the member's own read when its speculation planned the edits, else from the
// splice's pass, possibly on another thread); then `finish(again)` runs on the
// executor's thread. Made on the speculation's thread too, and dropped unfinished
// when the real edits do not confirm it: it touches nothing shared before finish().
struct EditedReader {
    zip::ContentSink content;
    std::function<void(const elf::Fetch& again)> finish;
};

class Executor {
public:
    Executor(const wheel::Wheel& wheel, WheelPlan& plan, const PlanHooks& hooks, const ExecuteOptions& options)
        : wheel_(wheel), plan_(plan), hooks_(hooks), options_(options), label_(wheel.archive().path().string()) {}

    PlanResult run() {
        const auto refused = plan_.output;
        if (!refused.empty()) refuse_output();
        if (decision().foresee) foreseen_ = decision().foresee();
        read();
        const auto facts = decision().decide ? decision().decide(plan_, result_) : foreseen_;
        settle(facts.get());
        if (plan_.variant) label_variant();
        add_requirements(plan_.requires_dist);
        if (plan_.output != refused || refused.empty()) refuse_output();
        result_.output = plan_.output;
        for (const auto& step : plan_.edit_elf)
            if (!planned_.contains(step.member)) edit_kept(step);
        kept_.clear();
        if (!options_.dry_run && !plan_.withhold) write();
        return std::move(result_);
    }

private:
    const wheel::Wheel& wheel_;
    WheelPlan& plan_;
    const PlanHooks& hooks_;
    const ExecuteOptions& options_;
    std::string label_;
    PlanResult result_;
    std::map<std::string, zip::PrecompressedMember> edited_;
    std::map<std::string, bool> planned_;  // members whose edit step was planned (true: something changed)
    std::vector<std::unique_ptr<KeptMember>> kept_;
    // The wheel-wide facts known before the pass (MemberDecision::foresee).
    std::shared_ptr<const WheelFacts> foreseen_;
    // A member whose edits read the wheel: its view and what the foreseen facts gave
    // (the edit made during the pass; nullopt: none, or it waited), asked again once
    // the facts are final (settle).
    struct Awaiting {
        std::string name;
        std::shared_ptr<const MemberView> view;
        std::optional<elf::EditRequest> early;
    };
    std::vector<Awaiting> awaiting_;
    // Bounded members whose edits were planned before their pass, the digest of the
    // new content that pass computed and the command's reader it fed (plan.hpp, step 2).
    struct Speculation {
        ByteEdits edits;
        EditedReader reader;  // before digest, which feeds reader.content
        std::unique_ptr<zip::EditedDigest> digest;
    };
    // What a speculation gives the splice when the real edits are its own.
    struct Speculated {
        zip::ContentDigests digests;
        EditedReader reader;
    };
    std::map<std::string, Speculation> speculated_;

    // A big deflated member is read with bounded memory (kBoundedFrom); others whole.
    // Its speculation is the sink's start: on the pass's second thread, while the
    // inflate goes on, the chunks queuing for it meanwhile (kSpeculationLag at
    // most; inline, before the first chunk, without a second thread).
    wheel::StreamSink stream_into(const zip::Member& member) {
        if (member.method != zip::Method::deflated || member.size < kBoundedFrom) return {};
        // speculated_'s digest, when the speculation planned edits: set by the start, before the first chunk.
        auto digest = std::make_shared<zip::EditedDigest*>(nullptr);
        // Each chunk once, through one of the two sinks: `original` is the member's own
        // SHA-256 when the pass hands it over (its hash paired with the edited copy's).
        auto take = [digest](std::span<const std::uint8_t> chunk, Sha256* original) {
            if (*digest && original) (*digest)->take(chunk, *original);
            else if (*digest) (*digest)->take(chunk);
            else if (original) original->update(chunk);
        };
        wheel::StreamSink sink{[take](std::span<const std::uint8_t> chunk) { take(chunk, nullptr); }, decision().view_reads, 0,
                               [take](std::span<const std::uint8_t> chunk, Sha256& original) { take(chunk, &original); }};
        if (may_speculate()) {
            sink.may_lag = kSpeculationLag;
            sink.start = [this, &member, digest] { *digest = speculate(member); };
        }
        return sink;
    }

    const MemberDecision& decision() const { return hooks_.decision; }

    // The engine's reader of an edited member's new content, when the decision
    // observes it (MemberDecision::observe_edited).
    EditedReader edited_reader(const std::string& member, std::uint64_t size) const {
        if (!decision().observe_edited) return {};
        std::shared_ptr<elf::StreamedElf> streamed = wheel::keeping(size, decision().view_reads);
        EditedReader reader;
        reader.content = [streamed](std::span<const std::uint8_t> chunk) { streamed->consume(chunk); };
        reader.finish = [this, streamed, member](const elf::Fetch& again) {
            wheel::MemberImage edited(wheel::ReadWay::bounded, streamed, again);
            decision().observe_edited(member, edited);
        };
        return reader;
    }

    bool may_speculate() const { return decision().view && decision().edits_for && !options_.dry_run; }

    // The digest the member's pass should feed, when the decision gives its edits
    // on its speculative view with the foreseen facts (only when may_speculate());
    // with MemberDecision::observe_edited, the reader it feeds. The view is the
    // member's far view (wheel/member_reader.hpp read_far_view), asked again on each
    // of its parses; nothing of it is CRC-checked, so its edits serve only as
    // plan.hpp step 2 says: a wrong speculation costs the second read it was meant to
    // save, never a wrong byte. None when the decision waits or wants nothing, the
    // plan changes nothing, or the far view cannot be had (the pass then meets any
    // fault of the member and reports it).
    zip::EditedDigest* speculate(const zip::Member& member) {
        std::optional<ByteEdits> edits;
        const bool read = wheel::read_far_view(wheel_.archive(), member, [&](const elf::ElfFile& elf) {
            edits.reset();
            const auto answer = decision().edits_for(*decision().view(member.name, elf), foreseen_.get());
            if (answer.waits || !answer.request) return;
            auto plan = elf::plan_edits(elf, *answer.request);
            if (!plan.edits.empty()) edits = std::move(plan.edits);
        });
        if (!read || !edits) return nullptr;
        Speculation& speculation = speculated_[member.name];
        speculation.edits = std::move(*edits);
        speculation.reader = edited_reader(member.name, edited_size(speculation.edits, member.size));
        speculation.digest = std::make_unique<zip::EditedDigest>(speculation.edits, speculation.reader.content);
        return speculation.digest.get();
    }

    // The new content's digests from the member's pass, and the reader it fed, when
    // its speculation planned exactly `edits` (used once: a replanned edit streams
    // the member again).
    std::optional<Speculated> speculated(const std::string& member, const ByteEdits& edits, std::uint64_t size) {
        auto found = speculated_.find(member);
        if (found == speculated_.end()) return std::nullopt;
        std::optional<Speculated> known;
        if (found->second.edits == edits) known = Speculated{found->second.digest->finish(size), std::move(found->second.reader)};
        speculated_.erase(found);
        return known;
    }

    // The variant step: the label into the output's name, variant.json into the
    // dist-info (replacing the input's own), its Requires-Dist into METADATA.
    void label_variant() {
        const VariantStep& variant = *plan_.variant;
        plan_.output = plan_.output.parent_path() / wheel::with_variant_label(plan_.output.filename().string(), variant.label);
        auto& dist_info = plan_.dist_info;
        const bool has_own = wheel_.archive().find(wheel_.dist_info() + "/" + wheel::kVariantJsonName) != nullptr;
        (has_own ? dist_info.replaced : dist_info.added)[wheel::kVariantJsonName] = variant.json;
        add_requirements(variant.requires_dist);
    }

    // Requires-Dist lines into METADATA: the one the hooks replaced (a pin), else the input's.
    void add_requirements(const std::vector<wheel::Requirement>& requirements) {
        if (requirements.empty()) return;
        auto& replaced = plan_.dist_info.replaced;
        auto metadata = replaced.find("METADATA");
        if (metadata == replaced.end()) {
            const auto bytes = wheel_.archive().read(*wheel_.archive().find(wheel_.dist_info() + "/METADATA"));
            metadata = replaced.emplace("METADATA", std::string(bytes.begin(), bytes.end())).first;
        }
        metadata->second = wheel::add_requirements(metadata->second, requirements);
    }

    void refuse_output() const {
        if (plan_.output.empty()) throw std::logic_error("a plan without an output");
        if (same_file(wheel_.archive().path(), plan_.output))
            throw InputError(plan_.output.string(), "output would overwrite the input wheel; choose another -o directory");
        if (!options_.dry_run && !plan_.withhold) refuse_existing_output(plan_.output, plan_.overwrite);
    }

    std::string member_label(const std::string& member) const { return label_ + ": " + member; }

    // Plans the editor's byte edits on the one parse and splices them into the
    // member's stream (skipped in a dry run: the change lines are what it shows).
    // A bounded member is planned on its kept ranges, fetching what the editor
    // finds missing (MemberImage::read: parsed again on what the image holds then),
    // and spliced reading the rest again.
    void edit(const ElfEditStep& step, KeptMember& kept) {
        planned_[step.member] = false;
        elf::EditPlan edits;
        try {
            edits = kept.image.read([&](std::span<const std::uint8_t>, const ByteRanges*) {
                if (kept.bounded()) kept.elf = kept.image.parse();
                return elf::plan_edits(*kept.elf, step.edits);
            });
        } catch (const elf::EditError& error) {
            throw InputError(member_label(step.member), std::string("cannot edit: ") + error.what());
        } catch (const elf::ElfError& error) {
            throw InputError(member_label(step.member), std::string("invalid ELF: ") + error.what());
        }
        if (edits.edits.empty()) return;
        planned_[step.member] = true;
        const std::uint64_t size = kept.image.index().size;
        MemberChange change{step.member, edits.changes, size, edits.new_size, 0, edits.grew};
        if (!options_.dry_run) {
            // The new content's digests (and the reader it fed) from the member's own
            // pass when a speculation planned these edits; else the splice streams it.
            auto known = kept.bounded() ? speculated(step.member, edits.edits, size) : std::nullopt;
            EditedReader reader = known ? std::move(known->reader) : EditedReader{};
            if (!known) reader = edited_reader(step.member, edits.new_size);
            auto spliced = splice(kept, edits.edits, known ? &known->digests : nullptr, reader.content);
            if (reader.finish) reader.finish(wheel::edited_fetch(kept.image, edits.edits));
            change.recompressed_bytes = spliced.recompressed_bytes;
            change.crc32_after = spliced.crc32;
            change.compressed_after = spliced.compressed_size;
            change.sha256_after = spliced.sha256;
            edited_.emplace(step.member, std::move(spliced));
        }
        result_.changed.push_back(std::move(change));
    }

    // `known`: the new content's digests, from the member's pass (`content` then
    // had its bytes already).
    static zip::PrecompressedMember splice(const KeptMember& kept, const ByteEdits& edits, const zip::ContentDigests* known,
                                           const zip::ContentSink& content) {
        const zip::InflatedMember& index = kept.image.index();
        if (!kept.bounded()) return zip::plan_splice(index, edits, content);
        const auto& windows = *kept.image.windows();
        if (known) return zip::plan_splice(index, windows, edits, *known);
        return zip::plan_splice(index, windows, edits, content);
    }

    void edit_kept(const ElfEditStep& step) {
        auto found = std::find_if(kept_.begin(), kept_.end(), [&](const auto& kept) { return kept->name == step.member; });
        if (found == kept_.end())
            throw std::logic_error("plan edits " + step.member + ", which was neither read nor kept");
        KeptMember& kept = **found;
        if (!kept.elf) {  // read whole, not held: read again for this edit only
            KeptMember again{kept.name, kept.member,
                             wheel::MemberImage(zip::inflate_indexed(wheel_.archive(), *kept.member,
                                                                     [](std::span<const std::uint8_t>) {}, {.keep = true})),
                             std::nullopt};
            again.elf = parse(again.name, again.image);
            edit(step, again);
            return;
        }
        edit(step, kept);
    }

    // A member edited during the read whose final edits differ: its step, splice and
    // change record go, to be planned again.
    void drop_edit(const std::string& member) {
        planned_.erase(member);
        edited_.erase(member);
        std::erase_if(result_.changed, [&](const MemberChange& change) { return change.member == member; });
        std::erase_if(plan_.edit_elf, [&](const ElfEditStep& step) { return step.member == member; });
    }

    // The whole wheel read and decided: each member whose edits read the wheel is
    // asked again with the final facts; an early edit they confirm stays, one they
    // do not is dropped, and the final edits get a step (planned on the kept member,
    // or on a new read of it).
    void settle(const WheelFacts* facts) {
        for (auto& member : awaiting_) {
            MemberEdits final_edits = decision().edits_for(*member.view, facts);
            if (final_edits.waits) throw std::logic_error(member.name + ": its edits still wait with the whole wheel read");
            if (member.early && final_edits.request == member.early) continue;
            if (member.early) drop_edit(member.name);
            if (final_edits.request) plan_.edit_elf.push_back({member.name, std::move(*final_edits.request)});
        }
        awaiting_.clear();
    }

    elf::ElfFile parse(const std::string& member, const wheel::MemberImage& whole) const {
        try {
            return whole.parse();
        } catch (const elf::ElfError& error) {
            throw InputError(member_label(member), std::string("invalid ELF: ") + error.what());
        }
    }

    // The member's view as the command reads it on the pass's parse
    // (MemberDecision::observe, else view); null without a decision.
    std::shared_ptr<const MemberView> observe(const std::string& name, const elf::ElfFile& elf) const {
        if (decision().observe) return decision().observe(name, elf);
        if (decision().view) return decision().view(name, elf);
        return nullptr;
    }

    // One ELF member as the read passes it: parsed once, its view taken, edited at
    // once when the foreseen facts decide an edit, kept when its edits read the wheel.
    void take(const zip::Member& member, wheel::MemberImage& image) {
        ++result_.elf_members;
        auto kept = std::make_unique<KeptMember>(KeptMember{member.name, &member, std::move(image), std::nullopt});
        std::shared_ptr<const MemberView> view;
        if (kept->bounded()) {
            view = observe_bounded(member.name, *kept);
        } else {
            kept->elf = parse(member.name, kept->image);
            view = observe(member.name, *kept->elf);
        }
        if (!view || !decision().edits_for) return;
        MemberEdits early = decision().edits_for(*view, foreseen_.get());
        if (early.waits) early.request.reset();
        if (early.request) {
            plan_.edit_elf.push_back({member.name, *early.request});
            edit(plan_.edit_elf.back(), *kept);
        }
        if (!view->reads_wheel && !early.waits) return;
        awaiting_.push_back({member.name, std::move(view), std::move(early.request)});
        if (!kept->bounded()) kept = std::make_unique<KeptMember>(KeptMember{member.name, &member, {}, std::nullopt});
        kept_.push_back(std::move(kept));
    }

    // Parses a bounded member and takes its view: what that finds missing is
    // fetched and it runs again (so observe must not act before it has read).
    std::shared_ptr<const MemberView> observe_bounded(const std::string& name, KeptMember& kept) {
        try {
            return kept.image.read([&](std::span<const std::uint8_t>, const ByteRanges*) {
                kept.elf = kept.image.parse();
                return observe(name, *kept.elf);
            });
        } catch (const elf::ElfError& error) {
            throw InputError(member_label(name), std::string("invalid ELF: ") + error.what());
        }
    }

    void read() {
        if (options_.digests) {
            if (!plan_.edit_elf.empty() || decision().edits_for)
                throw std::logic_error("a plan that edits ELF members needs the executor's own read");
            result_.digests = *options_.digests;
        } else {
            const std::string dist_info = wheel_.dist_info() + "/";
            auto wants = [&](const zip::Member& member) {
                return !member.is_symlink && !member.name.starts_with(dist_info) && (!hooks_.reads || hooks_.reads(member));
            };
            std::optional<InputError> member_error;  // thrown after RECORD: a tampered member explains a broken ELF
            result_.digests = wheel::scan_members_indexed(
                wheel_.archive(), wants,
                [&](const zip::Member& member, wheel::MemberImage& image) {
                    if (member_error || !image.is_elf()) return;
                    try {
                        take(member, image);
                    } catch (const InputError& error) {
                        member_error = error;
                    }
                },
                [&](const zip::Member& member) { return stream_into(member); });
            check_record();
            if (member_error) throw *member_error;
            return;
        }
        check_record();
    }

    void check_record() const {
        if (options_.check_record) options_.check_record(wheel_, result_.digests);
        else wheel::require_record_matches(wheel_, result_.digests);
    }

    void write() {
        wheel::WheelChanges changes;
        changes.edited = std::move(edited_);
        changes.added = std::move(plan_.add);
        plan_.add.clear();
        changes.dist_info = plan_.dist_info;
        if (!plan_.output.parent_path().empty()) std::filesystem::create_directories(plan_.output.parent_path());
        if (!options_.prove) {
            wheel::write_wheel_changes(wheel_, std::move(changes), plan_.output,
                                       wheel::WriteOptions{wheel::source_date_epoch_from_environment(), plan_.overwrite});
            result_.written = true;
            return;
        }
        StagedFile staged(plan_.output, plan_.overwrite ? Existing::replace : Existing::refuse);
        wheel::write_wheel_changes(wheel_, std::move(changes), staged.path(),
                                   wheel::WriteOptions{wheel::source_date_epoch_from_environment()});
        if (!options_.prove(staged.path(), result_)) {
            result_.withdrawn = true;
            return;
        }
        staged.publish();
        result_.written = true;
    }
};

}  // namespace

PlanResult execute_plan(const wheel::Wheel& wheel, WheelPlan& plan, const PlanHooks& hooks,
                        const ExecuteOptions& options) {
    return Executor(wheel, plan, hooks, options).run();
}

std::string describe_plan(const wheel::Wheel& wheel, const WheelPlan& plan, const PlanResult& result) {
    std::string out = fmt::format("plan: {} -> {}\n", wheel.archive().path().filename().string(), plan.output.string());
    std::size_t edited = 0;
    for (const auto& step : plan.edit_elf) {
        auto change = std::find_if(result.changed.begin(), result.changed.end(),
                                   [&](const MemberChange& c) { return c.member == step.member; });
        if (change == result.changed.end()) {
            out += fmt::format("  keep      {} (already as asked)\n", step.member);
            continue;
        }
        ++edited;
        out += fmt::format("  edit ELF  {}\n", step.member);
        for (const auto& line : change->changes) out += "              " + line + "\n";
    }
    for (const auto& added : plan.add) out += fmt::format("  add       {} ({} bytes)\n", added.name, added.bytes.size());
    if (plan.variant) out += fmt::format("  label     variant '{}'\n", plan.variant->label);
    if (plan.dist_info.rename_to)
        out += fmt::format("  rename    {} -> {}\n", wheel.dist_info(), *plan.dist_info.rename_to);
    for (const auto& [file, text] : plan.dist_info.replaced)
        out += fmt::format("  replace   {}/{}\n", plan.dist_info.rename_to.value_or(wheel.dist_info()), file);
    for (const auto& [file, text] : plan.dist_info.added)
        out += fmt::format("  add       {}/{} ({} bytes)\n", plan.dist_info.rename_to.value_or(wheel.dist_info()), file, text.size());
    std::size_t payload = 0;
    for (const auto& member : wheel.archive().members())
        if (!member.is_directory && !member.name.starts_with(wheel.dist_info() + "/")) ++payload;
    out += fmt::format("  copy raw  {} other payload member(s) as stored; RECORD regenerated\n", payload - edited);
    return out;
}

}  // namespace wheelfix::repair
