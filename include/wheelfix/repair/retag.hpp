// retag: record in a wheel's version which torch (and CUDA) it needs, pin torch in
// METADATA, optionally set the platform tag. Only metadata changes.
//
// Contract:
// - require_agreeing_versions(wheel, fix_version): the file name's version,
//   METADATA's Version and the .dist-info directory's version must be one PEP 440
//   version; otherwise an InputError naming the wheel and both versions, unless
//   fix_version (then METADATA wins: the file name and the directory follow it).
//   Reads nothing: call it before the members are read.
// - retag_digests(wheel, verify) is the read retag makes before retag_wheel, and
//   what it proves of the input. By default it inflates none of the members it
//   copies as stored: each is checked against its RECORD line by what is cheap and
//   sure (present in both, the size from the central directory, the line well
//   formed), and METADATA and WHEEL, which it rewrites, are hashed (RECORD itself is
//   parsed by Wheel::open). Every other RECORD line is copied verbatim, so a member
//   tampered without changing its size keeps its stale hash: retag never launders a
//   wheel into a fresh matching RECORD (`wheelfix verify` or `wheel unpack` of the
//   output still fails). Retag changes metadata only: one raw copy, where inflating
//   every member costs twenty times that (bench/README.md, retag-big). With `verify`
//   every member is hashed (scan_members) and a mismatch refused, as relink does.
// - retag_wheel(wheel, digests, options, out_dir): `digests` come from
//   retag_digests() or any full read of every member (scan.hpp; --torch auto reads
//   every member anyway); digests disagreeing with RECORD are refused (tag findings
//   set aside, and version findings with fix_version). The new version is METADATA's
//   Version retagged (local_label.hpp); METADATA gets it and the torch pin
//   (metadata_edit.hpp). With `platform` (a tag, or a compressed set
//   "manylinux_2_17_x86_64.manylinux2014_x86_64") the file name's platform part
//   becomes it and WHEEL's Tag lines the file name's python and abi tags crossed
//   with it, so both expand to the same set; WHEEL's Tag lines that disagree with the
//   file name (a rename left them behind) are rewritten the same way: pip installs
//   by the name. Without a torch in the request (repair of a wheel no extension of
//   which uses torch) the torch segment and the pin stay. The write is a plan run by
//   the one executor on the caller's digests (plan.hpp: its refusals, options.overwrite
//   and options.dry_run; the .dist-info renamed, METADATA and WHEEL replaced, RECORD
//   regenerated, the rest copied raw) to out_dir/<new file name>; an invalid platform
//   tag is an InputError naming --platform. A variant wheel (a label, or a
//   variant.json) is read whole once more (analysis::inspect_wheel: every member
//   hashed, RECORD proven, the ELF members analysed) so that its variant is derived
//   again for the output in the same plan (variant.hpp label_output):
//   abi_dependency :: torch follows the pin written; the label is kept, or made
//   again when it was auto-made.
// - plan_retag(wheel, options, out_dir) computes all of that (names, the new
//   METADATA and WHEEL texts, the .dist-info rename) without reading members or
//   writing, for callers that write other changes in the same pass (repair).
//   refuse_output_over_input() is the check every writer makes.
// - PinRequest is --pin parsed once, for retag and repair: parse_pin_request(text,
//   automatic) reads minor, exact, none, range or a PEP 440 specifier (InputError
//   naming --pin for anything else); an empty text is the default, the verdict's pin
//   with --torch auto, else minor. mode() is the torch verdict's mode it asks for.
// - RetagCommand is `retag`'s options as given, the pin parsed. check_retag_command()
//   refuses, with an InputError naming the option, --torch-from or --pin range without
//   --torch auto, a --torch that is not a version, a --cuda that is not one.
//   retag_options(command, torch, verdict) is the RetagOptions for the torch picked:
//   the pin a specifier names (within the author's, as every pin), or --pin range and
//   the default with --torch auto the verdict's (`verdict` the pick's requirement, null
//   without auto), else the TorchPin named.
#pragma once

#include "wheelfix/analysis/torch_matrix.hpp"
#include "wheelfix/analysis/torch_verdict.hpp"
#include "wheelfix/repair/variant.hpp"
#include "wheelfix/wheel/local_label.hpp"
#include "wheelfix/wheel/metadata_edit.hpp"
#include "wheelfix/wheel/rewrite.hpp"
#include "wheelfix/wheel/scan.hpp"
#include "wheelfix/wheel/wheel.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelfix::repair {

struct RetagOptions {
    wheel::LocalLabelRequest request;           // torch version, CUDA, local label spelling
    wheel::TorchPin pin = wheel::TorchPin::minor;
    // A range pin (">=2.9.0,<2.10", from `--torch auto`'s matrix or `--pin '>=…'`): written as
    // given, in place of what `pin` would make of the torch version.
    std::optional<wheel::SpecifierSet> pin_specifier;
    // within_author: intersected with each torch requirement the author wrote (never wider);
    // replace: the pin of the torch the wheel was shimmed for supersedes the old one.
    wheel::PinWrite pin_write = wheel::PinWrite::within_author;
    std::optional<std::string> platform;   // nullopt keeps the platform tags
    bool fix_version = false;
    bool keep_version = false;             // no local label: the version stays, the torch pin is still written
    bool overwrite = false;                // replace an existing output file
    bool dry_run = false;                  // plan and describe, write nothing (retag_wheel)
};

template <typename T>
struct Change {
    T before;
    T after;
};

struct RetagResult {
    std::filesystem::path output;
    Change<std::string> file_name;
    Change<std::string> version;
    Change<std::string> dist_info;
    Change<std::vector<std::string>> tags;     // WHEEL Tag lines (unchanged without --platform, unless they disagreed)
    bool wheel_tags_rewritten = false;         // WHEEL's Tag lines disagreed with the file name: rewritten from it
    std::optional<std::string> fixed_file_name_version;  // what the file name said, when --fix-version fixed it
    std::string torch;                         // the torch version retagged for (public part); "" when none
    std::optional<wheel::SpecifierSet> pin_specifier;  // ">=2.10,<2.11" as asked; nullopt with --pin none
    std::vector<std::pair<std::string, std::string>> requirements;  // Requires-Dist before -> after ("" = added)
    std::string plan;                          // with dry_run: the plan (plan.hpp describe_plan); nothing written
    std::optional<VariantOutcome> variant;     // a variant input's variant, derived again (variant.hpp label_output)
};

void require_agreeing_versions(const wheel::Wheel& wheel, bool fix_version);

// A --platform a user asked for, judged against the tags the wheel has
// (policy::platform_change_problem): an InputError naming --platform when retagging
// cannot make it true. plan_retag takes any valid tag: repair derives its platform
// from the binaries it read.
void require_plausible_platform(const wheel::Wheel& wheel, const std::string& platform);

// The manylinux/musllinux tags of the output's file name when retag kept them (no
// --platform): retag judges no binary's glibc floor (it reads a variant wheel's only
// for the variant), so it cannot tell whether the floor contradicts them; empty when
// it set the platform or the name claims neither.
std::vector<std::string> unchecked_platform_tags(const RetagResult& result, const RetagOptions& options);

struct RetagPlan {
    RetagResult result;
    wheel::DistInfoChanges dist_info;
};

RetagPlan plan_retag(const wheel::Wheel& wheel, const RetagOptions& options, const std::filesystem::path& out_dir);
void refuse_output_over_input(const wheel::Wheel& wheel, const std::filesystem::path& output);

// METADATA with the torch requirement pinned to `torch`'s minor series, as shim writes it
// for the torch it shimmed for: within the author's requirement (an author's pin that
// excludes it is an InputError naming METADATA), superseding the pin an earlier retag
// wrote for the torch the local version names.
wheel::PinnedTorch pin_for_torch(const wheel::Wheel& wheel, const wheel::Version& torch);

std::vector<wheel::MemberDigest> retag_digests(const wheel::Wheel& wheel, bool verify);

RetagResult retag_wheel(const wheel::Wheel& wheel, const std::vector<wheel::MemberDigest>& digests,
                        const RetagOptions& options, const std::filesystem::path& out_dir);

struct PinRequest {
    enum class Kind {
        minor, exact, none,  // the wheel::TorchPin of the torch version
        verdict,             // --torch auto's default: the torch verdict's pin
        range,               // --pin range (--torch auto): every release whose symbols resolve
        specifier,           // --pin '>=2.9,<2.11': as given, within the author's
    };
    Kind kind = Kind::minor;
    std::optional<wheel::SpecifierSet> specifier;  // with Kind::specifier

    analysis::PinMode mode() const { return kind == Kind::range ? analysis::PinMode::range : analysis::PinMode::truth; }
    // What is made of the torch version where no range is written: minor for verdict, range and specifier.
    wheel::TorchPin torch_pin() const;
    // The range written instead: the specifier given, or for verdict and range the verdict's
    // pin (`verdict` the torch verdict, null without --torch auto); nullopt for the others.
    std::optional<wheel::SpecifierSet> range(const analysis::TorchRequirement* verdict) const;
};
PinRequest parse_pin_request(std::string_view text, bool automatic);

struct RetagCommand {
    std::string torch;                    // a torch version, or "auto"
    std::vector<std::string> torch_from;  // with "auto"
    std::optional<std::string> cuda;
    std::optional<std::string> platform;
    PinRequest pin;                       // parse_pin_request(--pin, automatic())
    std::string local_format = "dotted";
    bool fix_version = false;
    bool overwrite = false;
    bool dry_run = false;

    bool automatic() const { return torch == "auto"; }
};
void check_retag_command(const RetagCommand& command);
wheel::Version retag_torch_version(const std::string& text);  // --torch VERSION, else an InputError
RetagOptions retag_options(const RetagCommand& command, const wheel::Version& torch,
                           const analysis::TorchRequirement* verdict);

}  // namespace wheelfix::repair
