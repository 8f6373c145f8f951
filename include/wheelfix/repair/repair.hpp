// repair: the pipeline step — one read of a wheel, every fix wheelfix knows, one
// write, then the output proven.
//
// Contract: repair_wheel(wheel, index, options, out_dir) runs one plan through the
// executor (repair/plan.hpp: its refusals, its one read, its staged atomic write),
// except that WHEEL Tag lines disagreeing with the file name are not refused: repair
// rewrites them. Its decision about each ELF member, on the member's one parse:
// - the member is analysed (analysis/elf_report.hpp) and checked against the torch
//   `index` through a ShimPlanner (repair/shim_planner.hpp);
// - its edits: search path entries that are absolute or climb out of the wheel are
//   dropped, the profile's rpath directories it does not reach are added ({root}
//   expanded for its depth), NEEDED entries the profile's replace-needed maps are
//   swapped; one that needs the shim gets the shim's SONAME and {root}/<dist>.libs,
//   one that needs a graft the graft's name; with strip, its symbol and debug
//   sections go. The shim and the grafts are foreseen before the read
//   (repair/foresight.hpp), so an extension is edited as it is read.
// After the read, on the whole wheel: the grafts (repair/graft.hpp), the shim, the
// retag (repair/retag.hpp: when an extension uses torch, the local version names the
// index's torch and METADATA pins it, options.pin), the platform tag (the honest one
// raised to the profile's min-platform, or --plat), the variant, the SBOM.
// The output is proven before it appears: judged as analysis::inspect_wheel reads it
// against the profile again, reading back only what repair does not know (a member
// copied as stored has the input's digest and report; an edited one its splice's,
// whose written CRC-32 and sizes must be the splice's). What is still found, the
// torch functions only a stub provides and the symbols no shim provides are
// `remaining`. Then, with options.loader and an installed torch at options.torch_dir,
// for this machine's architecture, the edited extensions are loaded by the real
// dynamic loader beside that torch (repair/load_test.hpp); otherwise load_test_skipped
// says why not. A wheel whose load test fails never appears (withdrawn), nor, with
// strict, one left unclean; with dry_run nothing is written (`plan` is
// describe_plan's text).
// Members matching options.skip_member are never edited; options.graft.exclude names
// SONAMEs never grafted. A wheel none of whose extensions uses torch keeps its version
// and requirements (uses_torch false). The same input, index and options give
// byte-identical output; repair_wheel only reads `index` and may run on several
// threads at once.
#pragma once

#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/analysis/profile_findings.hpp"
#include "wheelfix/analysis/torch_verdict.hpp"
#include "wheelfix/policy/profile.hpp"
#include "wheelfix/repair/graft.hpp"
#include "wheelfix/repair/load_test.hpp"
#include "wheelfix/repair/relink.hpp"
#include "wheelfix/repair/retag.hpp"
#include "wheelfix/repair/variant.hpp"
#include "wheelfix/repair/shim_wheel.hpp"

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace wheelfix::repair {

struct RepairOptions {
    std::optional<policy::Profile> profile;  // nullopt: only {root}/torch/lib for extensions linking torch, honest tag
    wheel::TorchPin pin = wheel::TorchPin::minor;
    wheel::LocalFormat local_format = wheel::LocalFormat::dotted;
    SymbolMap maps;                          // --map OLD=NEW for the shim
    std::vector<std::string> skip_member;    // globs of members never edited (--skip-member)
    bool no_torch = false;                   // no --torch: nothing checked against torch, version and pins kept
    bool graft_libraries = true;             // resolve every NEEDED, graft what the build machine provides
    GraftOptions graft;                      // --ldpaths, --exclude (SONAME globs)
    std::optional<std::string> plat;         // --plat TAG: refused when the result cannot meet it
    bool only_plat = false;                  // --only-plat: exactly --plat's tag
    bool no_update_tags = false;             // --no-update-tags: the platform tags stay as they are
    bool keep_version = false;               // --keep-version: no local +label, the torch pin still written
    bool strip = false;                      // --strip: symbol and debug sections dropped (elf::EditRequest::strip_symbols)
    bool dry_run = false;
    bool strict = false;
    bool overwrite = false;
    // The loader program for the load test (repair/load_test.hpp; empty: none) and
    // the installed torch it loads beside (the --torch directory, when it is one).
    std::vector<std::string> loader;
    std::string no_loader;  // why `loader` is empty though the load test was asked for ("no python3 on PATH")
    std::optional<std::filesystem::path> torch_dir;
    std::chrono::milliseconds load_test_limit = kDefaultLoadTestLimit;  // then the loader's group is killed
    // Set by repair_wheels: the run's output names (OutputClaims) and this wheel's
    // place among the run's inputs.
    class OutputClaims* claims = nullptr;
    std::size_t claim_position = 0;
    // `repair --torch auto` (analysis/torch_releases.hpp): the index is the newest release of the range the
    // atlas proved; the local label names label_torch (the range's lowest release) instead of the index's
    // torch, METADATA gets pin_specifier (">=2.9.0,<2.10") instead of what `pin` makes of it, and
    // load_test_unavailable (when set and torch_dir is not) is why no load test ran.
    std::optional<wheel::Version> label_torch;
    std::optional<wheel::SpecifierSet> pin_specifier;
    std::string load_test_unavailable;
    // --variant LABEL|auto: the output labelled as a PEP 825 variant in the same pass
    // (repair/variant.hpp label_output; abi_dependency :: torch from the pin repair
    // writes). Without it, a variant input keeps its variant (a hand-given label kept,
    // an auto-made one made again), its properties derived again for the output.
    std::optional<VariantRequest> variant;
    // --add-runtime-requires: METADATA gets a Requires-Dist for each CUDA library the
    // extensions NEED of another major than the torch build repaired for brings
    // (analysis::runtime_requirements), through the plan's METADATA step.
    bool add_runtime_requires = false;
};

// Output paths taken by the inputs of one run, shared by its workers: two inputs
// with one output name (the same wheel named twice; two builds of one wheel whose
// platform tags become the same) would otherwise have the second refused as
// "exists" or, with --overwrite, replace the first. claim(output, input, position)
// records the output for the input at `position` (its place in the run's inputs),
// or throws InputError(input, "… is also the output of <other input> in this run …")
// when another input has it. The earlier input in the run's order always wins, as
// it does when the inputs run one at a time, whichever worker gets there first: a
// claim waits until every earlier input that may name the same output (same
// distribution in its file name: `groups`, one key per input) has claimed or
// ended (ended(position), idempotent, when its repair returns or throws). So that
// this cannot wait for an input no worker will start, inputs of one group must be
// started in their order (repair_wheels does). A default-constructed OutputClaims
// has no order: first come, first served.
class OutputClaims {
public:
    OutputClaims() = default;
    explicit OutputClaims(std::vector<std::string> groups);
    void claim(const std::filesystem::path& output, const std::filesystem::path& input, std::size_t position = 0);
    void ended(std::size_t position);

private:
    bool earlier_pending(std::size_t position) const;  // under mutex_

    std::mutex mutex_;
    std::condition_variable settled_changed_;
    std::vector<std::string> groups_;
    std::vector<bool> settled_;  // claimed or ended
    std::map<std::filesystem::path, std::filesystem::path> taken_;
};

// A distribution the wheel's torch or NVIDIA libraries come from (torch,
// nvidia-cuda-runtime, ...), and whether a Requires-Dist of METADATA names it: the
// user must install it beside the wheel.
struct DistributionNeed {
    std::string name;
    bool required = false;
    // "torch (METADATA requires it)", "nvidia-cuda-runtime (not in METADATA's Requires-Dist)"
    std::string text() const;
};

struct RepairReport {
    std::filesystem::path input;
    std::filesystem::path output;           // written (or, dry run / strict refusal, would be)
    bool written = false;
    bool withdrawn = false;                 // staged, then not kept: does not load, or --strict and unclean
    std::string torch_version;

    // What was wrong.
    std::vector<analysis::Finding> findings_before;
    std::size_t unresolved_torch_symbols = 0;   // torch functions the extensions miss
    std::vector<std::string> absolute_rpath_entries;  // "member: entry"
    std::string platform_before;                // the file name's platform part
    bool platform_lied = false;

    bool uses_torch = false;                    // an extension links or imports torch: retagged for it
    bool torch_skipped = false;                 // no --torch: no torch was checked

    // Every NEEDED resolved and classified (repair/graft.hpp), what was grafted, and
    // the distributions the torch/nvidia libraries come from (with whether
    // METADATA requires them).
    analysis::NeededResolution resolution;
    std::vector<GraftedFile> grafted;
    std::vector<DistributionNeed> distributions;

    // What was done.
    std::vector<MemberChange> relinked;
    ShimResult shim;                            // symbols, shim member, not_shimmed
    RetagResult retag;                          // names, version, pin, tags
    std::optional<VariantOutcome> variant;      // the variant label and properties written
    std::vector<analysis::RuntimeRequirement> runtime_requires;  // added with add_runtime_requires
    std::string runtime_torch_cuda;             // the CUDA version of the torch build they were judged against
    std::string platform_after;

    // What is left (judged on the output when written, else from the plan).
    std::vector<analysis::Finding> remaining;
    std::vector<std::string> stubbed;           // demangled torch functions only a stub provides
    std::vector<wheel::VerifyFinding> output_record_findings;  // must be empty: our own check
    std::vector<LoadOutcome> loads;             // the load test, when it ran
    std::string load_test_skipped;              // why it did not run, when it did not
    std::string plan;                           // with dry_run: the plan as text (describe_plan)

    bool loads_failed() const {
        return std::any_of(loads.begin(), loads.end(), [](const LoadOutcome& o) { return o.status == LoadOutcome::Status::failed; });
    }
    // Members the load test could not load (a library absent here): nothing proven
    // about them; the run exits 1 (--no-load-test asks for no proof).
    std::size_t not_loaded() const {
        return static_cast<std::size_t>(std::count_if(loads.begin(), loads.end(), [](const LoadOutcome& o) {
            return o.status == LoadOutcome::Status::not_tested;
        }));
    }
    bool not_proven() const { return not_loaded() > 0; }
    bool clean() const { return remaining.empty() && stubbed.empty() && shim.not_shimmed.empty() && !loads_failed(); }
};

RepairReport repair_wheel(const std::filesystem::path& wheel, const abi::SymbolIndex& index,
                          const RepairOptions& options, const std::filesystem::path& out_dir);

}  // namespace wheelfix::repair
