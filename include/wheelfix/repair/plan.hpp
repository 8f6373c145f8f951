// The plan engine under every command that writes a wheel: a command decides, the
// plan records what it decided, one executor reads the input once and writes it.
//
// A WheelPlan says, per member of the output:
// - edit ELF: a list of editor edits (one elf::EditRequest: search path, NEEDED,
//   SONAME), planned on the member's one parse and spliced into its stream
//   (zip/splice.hpp), so only the bytes around each edit are deflated again;
// - add member: a new file (a shim library, a grafted library, an SBOM);
// - rename member: the .dist-info directory and every member in it;
// - replace metadata: METADATA, WHEEL (small dist-info files written anew);
// - label a variant (PEP 825): the output's file name gets the label and the
//   .dist-info directory its variant.json (added, or replacing the input's), and
//   METADATA the variant's Requires-Dist lines when it has any (repair/variant.hpp);
// - copy raw: every member the plan does not name, as stored (never inflated
//   again for writing).
// RECORD is regenerated from the original (wheel/rewrite.hpp has the rules).
//
// Contract of execute_plan(wheel, plan, hooks, options):
// 1. Refuses, before reading a byte: an output that is the input file, and (unless
//   a dry run, which writes nothing) an existing output unless plan.overwrite
//   (InputError naming the output). A plan whose output is empty before the read
//   gets it from decision.decide (repair: the platform tag comes from the binaries);
//   an output the hooks named or changed is refused the same way after them.
// 2. Reads the input once (wheel/scan.hpp): with options.digests given (the caller
//   already read what it proves, retag), nothing is read and the plan may not edit
//   ELF members; otherwise every member is hashed, the ones PlanHooks::reads picks
//   are read into a wheel::MemberImage, and each ELF member among them (by its
//   magic) is parsed once and its view taken (MemberDecision: observe, else view). The decision's answer on the foreseen facts, when it is an edit, is
//   planned and spliced at once, so memory holds one member at a time; a member
//   whose edits read the wheel (MemberView::reads_wheel) is kept until the facts
//   are final (step 4).
//   How a member is read (wheel/member_reader.hpp has each way, its cost, its
//   memory): whole when stored or below kBoundedFrom inflated bytes; bounded from
//   it (windows and the ranges the ELF readers need, 8 MiB at most), so the view
//   and the editor run on a partial image that fetches what they find missing
//   (observe must not act before it has read what it needs). The splice streams an
//   edited member once more for its new SHA-256 unless its edits were known before
//   its pass: the decision is first asked on a big member's far view
//   (wheel/member_reader.hpp read_far_view), and when the edits planned on the real bytes are the
//   same, byte for byte, the pass's digest of them and its reader of the new
//   content are taken: one full inflate, not two. No speculation in a dry run.
//   A kept member read whole is not held once the pass moves on: it is inflated
//   and parsed again when its edit step is planned (a wheel's extensions together
//   can be gigabytes; the foresight makes such members few). A bounded member is
//   held: what it keeps is small. What a big member's image keeps is the
//   decision's declaration (MemberDecision::view_reads); an edited member's new
//   content is read into the same kind of image for decision.observe_edited.
// 3. Proves the read: options.check_record (default wheel::require_record_matches)
//   on the digests; an error a member's view or edit raised is thrown after it (a
//   tampered member explains a broken ELF better than the ELF error does). ELF
//   errors and edit errors are InputErrors naming "<wheel>: <member>".
// 4. decision.decide(plan, read) makes the whole-wheel decision with what the read
//   gathered (digests; repair: findings, shim, grafts, platform tag, output name):
//   it may refuse (InputError) or add steps (added members, dist-info changes), and
//   returns the final facts. Each kept member is asked again on them: an early edit
//   they confirm (the same EditRequest) stays; one they do not is dropped with its
//   splice, and the final edits are planned on the kept member (or a new read of
//   it). A wrong foresight costs a second read, never a byte.
// 5. With options.dry_run (or plan.withhold) nothing is written: the result has
//   the plan's member changes (what the editor would change) and `written` false.
//   Otherwise the output is written (atomically, wheel/rewrite.hpp), its directory
//   created. With options.prove the output is written to a hidden staging file
//   beside it (util/output_file.hpp StagedFile), prove(staged path, result) runs
//   on it, and it is moved into place only when prove returns true (refusing, in
//   that step, a file another process put there meanwhile unless plan.overwrite);
//   otherwise it is removed and the result says `withdrawn`.
// The result carries what the proofs need: the output path, the digests of the
// input, the per-member changes, the number of ELF members read.
//
// describe_plan(plan, result) renders the plan for --dry-run: one line per step
// ("edit ELF", "add", "rename", "replace"), then the count of members copied raw.
#pragma once

#include "wheelfix/elf/editor.hpp"
#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/wheel/member_reader.hpp"
#include "wheelfix/wheel/rewrite.hpp"
#include "wheelfix/wheel/scan.hpp"
#include "wheelfix/wheel/wheel.hpp"
#include "wheelfix/zip/splice.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace wheelfix::repair {

// ELF members from this inflated size on are edited with bounded memory (above).
inline constexpr std::uint64_t kBoundedFrom = std::uint64_t(64) << 20;

struct ElfEditStep {
    std::string member;
    elf::EditRequest edits;
};

// The variant the output is labelled as; the executor applies it after the hooks,
// to whatever output name and dist-info changes they decided.
struct VariantStep {
    std::string label;                  // ^[0-9a-z_.]{1,16}$
    std::string json;                   // *.dist-info/variant.json
    std::vector<wheel::Requirement> requires_dist;  // added to METADATA (`--variant-requires`)
};

struct WheelPlan {
    std::filesystem::path output;         // the output wheel's path
    bool overwrite = false;               // replace an existing output
    std::vector<ElfEditStep> edit_elf;    // one step per member at most
    std::vector<wheel::AddedMember> add;
    wheel::DistInfoChanges dist_info;     // rename_to: rename member; replaced: replace metadata
    std::optional<VariantStep> variant;   // label the output as this variant
    // Requires-Dist added to METADATA after the hooks decided (the variant's join them);
    // one METADATA already holds (wheel::same_requirement) is not written twice.
    std::vector<wheel::Requirement> requires_dist;
    bool withhold = false;                // decided after the read (repair --strict): write nothing
};

// What the editor changed in one member (or would, in a dry run).
struct MemberChange {
    std::string member;
    std::vector<std::string> changes;
    std::uint64_t size_before = 0;
    std::uint64_t size_after = 0;
    std::uint64_t recompressed_bytes = 0;  // uncompressed bytes that went through deflate
    bool grew = false;
    // The spliced member as written (not in a dry run): its central directory's
    // CRC-32 and compressed size, and the SHA-256 RECORD gets.
    std::uint32_t crc32_after = 0;
    std::uint64_t compressed_after = 0;
    std::array<std::uint8_t, 32> sha256_after{};
};

struct PlanResult;

// What a command knows of one ELF member: what its decision reads of the member's
// loader view (dynamic tables, notes, fatbin headers), reduced to that. Each
// command derives its own; reads_wheel says its edits also read the wheel-wide
// facts, so the engine keeps the member until they are final.
struct MemberView {
    virtual ~MemberView() = default;
    bool reads_wheel = false;
};

// The wheel-wide facts a command's decision reads (the shim to be written, the
// grafts' names): each command derives its own; null when it reads none.
struct WheelFacts {
    virtual ~WheelFacts() = default;
};

// A decision's answer for one member.
struct MemberEdits {
    std::optional<elf::EditRequest> request;  // nullopt: no edit step
    bool waits = false;  // the facts given do not decide it: asked again on the final facts
};

// A writing command's decision about its ELF members, stated once: edits_for is a
// pure function of a member's view and the wheel-wide facts; the engine alone
// decides when to ask it and what an early answer is worth (steps 2 and 4).
struct MemberDecision {
    // The member's view on any parse of it (the pass's, a speculative one): no
    // effect but the answer; may run on the pass's second thread.
    std::function<std::shared_ptr<const MemberView>(const std::string& member, const elf::ElfFile& elf)> view;
    // The same on the pass's one parse, which may also gather what the whole-wheel
    // decision needs (repair's analysis, the shim's imports); default: view.
    std::function<std::shared_ptr<const MemberView>(const std::string& member, const elf::ElfFile& elf)> observe;
    std::function<MemberEdits(const MemberView& view, const WheelFacts* facts)> edits_for;
    // Before the read: the facts as far as they can be known then (unset: none).
    std::function<std::shared_ptr<const WheelFacts>()> foresee;
    // After the read: the whole-wheel decision (step 4); returns the final facts
    // (unset: the foreseen ones are final).
    std::function<std::shared_ptr<const WheelFacts>(WheelPlan& plan, const PlanResult& read)> decide;
    // What view/observe read of a big member: what the engine's reader of it keeps
    // (wheel/member_reader.hpp Keeps: the loader's view, or the analysis'); a read
    // past it fetches the member again.
    wheel::Keeps view_reads = wheel::Keeps::loader;
    // Each edited member's new content, as the engine read it while writing it (not
    // in a dry run): a bounded image keeping what view_reads declares, whose fetch
    // reads any range of the new content once more (MemberImage::read fetches what
    // a reader lacks). On the executor's thread, once the member is spliced: what a
    // command would otherwise read back from the output.
    std::function<void(const std::string& member, wheel::MemberImage& edited)> observe_edited;
};

// What a command asks of the executor: its decision, and which members are read.
struct PlanHooks {
    MemberDecision decision;
    // Which file members outside the .dist-info directory, symlinks aside, are read
    // (inflated, and parsed when ELF); default: all. Others are only hashed as they pass.
    std::function<bool(const zip::Member& member)> reads;
};

struct ExecuteOptions {
    bool dry_run = false;
    std::optional<std::vector<wheel::MemberDigest>> digests;  // the read already made (no ELF edits then)
    std::function<void(const wheel::Wheel&, const std::vector<wheel::MemberDigest>&)> check_record;
    // Proofs on the written output (staged): true keeps it, false withdraws it.
    std::function<bool(const std::filesystem::path& written, const PlanResult& result)> prove;
};

struct PlanResult {
    std::filesystem::path output;
    bool written = false;
    bool withdrawn = false;             // written, then not kept: options.prove said no
    std::vector<MemberChange> changed;  // in the order the steps were planned
    std::vector<wheel::MemberDigest> digests;
    std::size_t elf_members = 0;        // ELF members read
};

PlanResult execute_plan(const wheel::Wheel& wheel, WheelPlan& plan, const PlanHooks& hooks,
                        const ExecuteOptions& options = {});

// The plan as text, one step a line, for --dry-run.
std::string describe_plan(const wheel::Wheel& wheel, const WheelPlan& plan, const PlanResult& result);

}  // namespace wheelfix::repair
