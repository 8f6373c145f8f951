// Wheel-variant properties (PEP 817 / PEP 825) derived from what the binaries hold,
// and a variant.json's claims judged against them. Reads and judges; the writing is
// repair/variant.hpp's plan step.
//
// Contract:
// - derive_variant(report, torch_minors): the properties. `nvidia :: sm_arch`: each
//   CUDA module (modules.hpp) contributes the union over its alternative builds of
//   X_real for every cubin sm_X (sm_Xa and sm_Xf too: the provider's values have no
//   'a'/'f' spelling) and X_virtual for every PTX compute_X; a value is kept only
//   when every module runs (cuda/coverage.hpp, the rule inspect uses) every SM an
//   installer selects the wheel for by that value: X_real on each GPU of X's major
//   with a minor at least X's, X_virtual on each GPU of X's major (the known SMs are
//   variants.policy's). So an sm_100a cubin alone (not on sm_103) gives no 100_real.
//   Ordered by SM, real first. `nvidia :: cuda_version_lower_bound` (also `cuda`):
//   the CUDA version the driver must at least have, the highest of
//   (policy/variant_rules.hpp tables) the CUDA major each ELF NEEDs (libcudart.so.13
//   -> 13.0), the toolkit that first writes each PTX entry's ISA version (PTX ISA 9.0
//   -> 13.0), and the first toolkit that targets each cubin's SM (sm_100 -> 12.8; a
//   cubin's header holds only its format version); `because` names the deciding
//   input; left out when no ELF links the CUDA runtime and none holds device code. A
//   PTX ISA or an SM the tables do not know is an InputError naming the member
//   (wheelfix is older than the toolkit: it says so rather than guess low).
//   `abi_dependency :: torch` = torch_minors ("2.9", "2.10"; left out when empty).
// - auto_variant_label(properties): "cu{M}sm{real SMs '.'-joined}" ("cu13sm90.100.120")
//   when it fits in 16 characters, "cu{M}" alone without device code; else
//   "cu{M}_" and the first 8 hex digits of the SHA-256 of the property lines. Stable:
//   the same properties give the same label.
// - variant_file(label, properties, schema): the variant.json document: the rules'
//   namespaces in their order (0.0.3: those with a provider; 0.1.1: those used), the
//   providers (0.0.3). InputError naming --schema when 0.0.3 would list no namespace.
// - Torch minors: proven_torch_minors(input, report): the minors all of whose bundled
//   atlas releases load (`check --torch-release all`, torch_releases.hpp) and every
//   torch Requires-Dist admits. pinned_torch_minors(requirements, input): the minors
//   all of whose atlas releases for the wheel's arch every Requires-Dist on torch in
//   `requirements` admits (a writer's claim from the METADATA it writes); empty when
//   none has a specifier or together they set no ceiling: every minor from a floor
//   on would be wider than a C++ extension's truth. Both empty when nothing applies.
// - variant_claim_problems(report, claimed): what a variant.json claims that the
//   binaries do not hold: an sm_arch value selecting an SM a module cannot run (the
//   rule above), a cuda_version_lower_bound below what they need; one line each.
// - judge_torch_claim(report, releases): a variant.json's `abi_dependency :: torch`
//   claim judged into report.variant_findings (after inspect_wheel; `releases` is
//   inspect's bundled_releases run, else one is made here when there is a claim): a
//   value that is not a torch minor ("2.10"), a claim when no ELF member uses torch,
//   and a minor the wheel's Requires-Dist on torch (each with a specifier) or the
//   torch verdict's pin over the bundled atlas does not admit. A minor is admitted
//   when every atlas release of it for the wheel's arch is (X.Y.0 when the atlas
//   knows none): the rule the writers claim by, so what they write holds.
// - verify_findings(wheel, input): `verify`'s findings for one wheel. A variant wheel
//   (a label, or a variant.json) is read as inspect reads it, its claims judged as
//   above in the same pass as RECORD (each problem a finding on its variant.json,
//   "variant ..."); any other is only hashed (wheel/verify.hpp).
#pragma once

#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/wheel/metadata.hpp"
#include "wheelfix/wheel/variant.hpp"
#include "wheelfix/wheel/verify.hpp"

#include <optional>
#include <string>
#include <vector>

namespace wheelfix::analysis {

struct CudaFloor {
    std::string version;  // "13.0"
    std::string because;  // "libcudart.so.13 (sgl_kernel/sm100/common_ops.abi3.so)"
};

struct VariantDerivation {
    wheel::VariantProperties properties;
    std::optional<CudaFloor> cuda;
};
VariantDerivation derive_variant(const WheelReport& report, const std::vector<std::string>& torch_minors);

std::string auto_variant_label(const wheel::VariantProperties& properties);
wheel::VariantFile variant_file(const std::string& label, const wheel::VariantProperties& properties,
                                wheel::VariantSchema schema);

std::vector<std::string> proven_torch_minors(const std::string& input, const WheelReport& report);
std::vector<std::string> pinned_torch_minors(const std::vector<wheel::Requirement>& requirements, const std::string& input);

std::vector<std::string> variant_claim_problems(const WheelReport& report, const wheel::VariantProperties& claimed);
struct ReleaseMatrix;
void judge_torch_claim(WheelReport& report, const std::optional<ReleaseMatrix>* releases = nullptr);
// Fills report.variant_label, .variant and .variant_findings from the wheel (after
// the ELF reports and modules are in): the claims judged, a variant.json naming
// another label than the file name, a label without variant.json, a variant.json
// without a label.
void attach_variant(WheelReport& report, const wheel::Wheel& wheel);

std::vector<wheel::VerifyFinding> verify_findings(const wheel::Wheel& wheel, const std::string& input);

}  // namespace wheelfix::analysis
