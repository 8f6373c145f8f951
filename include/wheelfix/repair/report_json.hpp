// The JSON documents of the writing commands (schemas in docs/schema): the
// machine-readable contract of relink, shim, retag and repair, written beside the
// results they serialise so a field added to a result and its key change together.
// The commands (src/cli) print them; their text for people is report_text.hpp's
// and the CLI's summaries.
//
// Contract:
// - relink_json(result): wheelfix.relink/1; shim_json(result): wheelfix.shim/1, its
//   "fully_repaired" being fully_repaired(result): no stub, nothing left unshimmed,
//   no torch library missing.
// - retag_json(input, pick, result, pin): wheelfix.retag/1; `pick` is --torch
//   auto's choice (its candidates, and against the atlas its matrix and requirement),
//   `result` null when nothing was written (no torch loads); `pin` is the --pin the
//   pin came from, named in pin.mode ("minor", "range" also for --torch auto's
//   default, the specifier as SpecifierSet::text writes it).
// - repair_json(outcomes, dry_run, target, extra): wheelfix.repair/1: the reports
//   under "wheels", the wheels the --torch auto verdict refused under
//   "not_repaired", the input errors under "errors"; `extra` writes further keys
//   (write_torch_auto_json: "torch_auto", each wheel's matrix, requirement and the
//   torch it was repaired against; a wheel without a plan, one that could not be
//   read, is left out).
// - variant_json(inputs, outcomes, dry_run): wheelfix.variant/1, one entry per input
//   with its outcome (outcomes[i] is inputs[i]'s); variant_merge_json(indexes, dry_run):
//   wheelfix.variant-merge/1, one entry per -variants.json written (or, dry, not).
// - A requirement change is {before (null when added), after}.
#pragma once

#include "wheelfix/policy/profile.hpp"
#include "wheelfix/repair/relink.hpp"
#include "wheelfix/repair/retag.hpp"
#include "wheelfix/repair/schedule.hpp"
#include "wheelfix/repair/shim_planner.hpp"
#include "wheelfix/repair/torch_auto.hpp"
#include "wheelfix/repair/variant.hpp"
#include "wheelfix/util/json.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace wheelfix::repair {

std::string relink_json(const RelinkResult& result);

bool fully_repaired(const ShimResult& result);
std::string shim_json(const ShimResult& result);

std::string retag_json(const std::string& input, const std::optional<RetagPick>& pick, const RetagResult* result,
                       const PinRequest& pin);

void write_json(JsonWriter& json, const RepairReport& report);
std::string repair_json(const std::vector<RepairOutcome>& outcomes, bool dry_run, const policy::Profile* target,
                        const std::function<void(JsonWriter&)>& extra = {});
void write_torch_auto_json(JsonWriter& json, const std::vector<std::optional<TorchAutoPlan>>& plans);

std::string variant_json(const std::vector<std::string>& inputs, const std::vector<VariantOutcome>& outcomes, bool dry_run);
std::string variant_merge_json(const std::vector<MergedIndex>& indexes, bool dry_run);

}  // namespace wheelfix::repair
