// The rules behind wheel-variant properties, as data (src/policy/data/variants.policy):
// the namespaces' default order, the installer plugins (schema 0.0.3 `providers`),
// and the tables that turn what a binary holds into the CUDA version a driver must
// at least have (`nvidia :: cuda_version_lower_bound`).
//
// Contract: variant_rules() parses the built-in file once; a malformed line throws
// std::logic_error (it is ours). cuda_for_ptx_isa("9.0") and cuda_for_sm(100) and
// cuda_for_cudart(13) give the CUDA version ("13.0", "12.8") or "" when the table
// does not know it (a newer toolkit than the data: the caller says so, never guesses).
// runtime_requirement(13) is the Requires-Dist of the CUDA runtime package, or "".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::policy {

struct VariantProvider {
    std::string name_space;  // "nvidia"
    std::string plugin_api;  // "nvidia_variant_provider.plugin:NvidiaVariantPlugin"
    std::string requirement; // "nvidia-variant-provider>=0.0.1,<1.0.0"
};

struct VersionRow {
    std::string key;   // "9.0", "100", "13"
    std::string cuda;  // "13.0"
};

struct VariantRules {
    std::vector<std::string> namespaces;  // default-priorities.namespace order
    std::vector<VariantProvider> providers;
    std::vector<VersionRow> ptx, sm, cudart, runtime;
};

const VariantRules& variant_rules();
VariantRules parse_variant_rules(std::string_view text, const std::string& source);

std::string cuda_for_ptx_isa(std::uint16_t major, std::uint16_t minor);
std::string cuda_for_sm(std::uint32_t sm);
std::string cuda_for_cudart(int major);
std::string runtime_requirement(int major);

// "12.8" < "13.0", numerically by major then minor ("12.10" > "12.9").
bool cuda_version_less(std::string_view a, std::string_view b);

}  // namespace wheelfix::policy
