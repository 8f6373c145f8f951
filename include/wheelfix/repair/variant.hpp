// Labelling wheels as variants (PEP 825): the plan step repair and `wheelfix variant`
// share, the standalone command's run, and the index-level merge.
//
// Contract:
// - The variant step (plan.hpp VariantStep) of both writers below, for a wheel whose
//   binaries are read: properties from analysis/variant.hpp derive_variant, the
//   label request.label ("auto" or empty:
//   auto_variant_label; otherwise it must match ^[0-9a-z_.]{1,16}$ and not be
//   "null" for a wheel with properties, else an InputError naming --variant), the
//   variant.json in request.schema, and with request.requires_runtime a Requires-Dist
//   for the CUDA runtime package of each CUDA major the ELFs NEED (variants.policy
//   `runtime`), marked `; 'nvidia' in variant_namespaces` so that only a
//   variant-aware installer, which selected this wheel for its CUDA, evaluates it.
// - label_output(wheel, read, plan, asked): the variant step of every writer whose
//   plan changes what a variant's properties are derived from (repair, retag, shim):
//   with `asked` (repair --variant) that request; else, for an input that is a
//   variant wheel (a label, or a variant.json), the input's own variant kept: its
//   schema, and its label when given by hand, but "auto" when the label is what
//   auto_variant_label makes of the properties the input's variant.json claims (an
//   auto-made label is made again from the new properties); nullopt (no step) for
//   any other input. The properties are derived from the output as
//   the plan writes it: `read` (the input's ELF reports) with each member's NEEDED as
//   the plan's edit steps leave them (the edits' replace/remove/add of NEEDED; the
//   other properties come from device code no edit touches), and the torch minors
//   from the Requires-Dist on torch of the METADATA the plan writes
//   (analysis::pinned_torch_minors: the pin written, within the author's) when an
//   ELF member uses torch. Sets plan.variant (so call it once the plan's edit steps
//   and METADATA are decided) and returns the outcome (output left empty).
// - label_wheel(path, request, out_dir): `wheelfix variant`: one read of the wheel
//   (analysis::inspect_wheel: every member hashed, RECORD proven, the ELF members
//   analysed), the torch minors `check --torch-release all` proves
//   (analysis::proven_torch_minors), then a plan with only the variant step run by
//   the executor on that read: variant.json added (or replacing the input's), the
//   file name labelled, RECORD regenerated, every other member copied as stored.
//   Output over the input, or over an existing file without overwrite, is refused.
// - merge_variants(dir, overwrite, dry_run): `wheelfix variant merge`: every
//   variant wheel in dir (a file name with a label) grouped by escaped name and
//   version; per group the merged {name}-{version}-variants.json
//   (wheel/variant.hpp merge_variant_files) written atomically into dir. A label
//   whose properties differ between two wheels, disagreeing schemas or providers:
//   an InputError naming the wheels' group; nothing is written for any group.
#pragma once

#include "wheelfix/analysis/variant.hpp"
#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/repair/plan.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace wheelfix::repair {

struct VariantRequest {
    std::string label = "auto";            // "auto" or a label
    wheel::VariantSchema schema = wheel::kDefaultVariantSchema;
    bool requires_runtime = false;          // --variant-requires
    bool overwrite = false;
    bool dry_run = false;
};

struct VariantOutcome {
    std::filesystem::path output;
    std::string label;
    wheel::VariantProperties properties;
    std::optional<analysis::CudaFloor> cuda;
    wheel::VariantSchema schema = wheel::kDefaultVariantSchema;
    std::vector<wheel::Requirement> requires_dist;
    std::string plan;  // with dry_run
    bool written = false;
};

std::optional<VariantOutcome> label_output(const wheel::Wheel& wheel, const analysis::WheelReport& read, WheelPlan& plan,
                                           const std::optional<VariantRequest>& asked);

VariantOutcome label_wheel(const std::filesystem::path& path, const VariantRequest& request,
                           const std::filesystem::path& out_dir);

struct MergedIndex {
    std::filesystem::path path;  // dir/{name}-{version}-variants.json
    std::vector<std::string> wheels;
    std::vector<std::string> labels;
};
std::vector<MergedIndex> merge_variants(const std::filesystem::path& dir, bool overwrite, bool dry_run);

}  // namespace wheelfix::repair
