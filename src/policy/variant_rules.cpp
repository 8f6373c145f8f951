// Parses variants.policy (policy/variant_rules.hpp): one record kind per first field.
#include "wheelfix/policy/variant_rules.hpp"

#include "data_lines.hpp"

#include <charconv>
#include <stdexcept>
#include <tuple>

extern const char wheelfix_variants_policy[];
extern const unsigned long wheelfix_variants_policy_size;

namespace wheelfix::policy {

namespace {

std::string lookup(const std::vector<VersionRow>& rows, const std::string& key) {
    for (const VersionRow& row : rows)
        if (row.key == key) return row.cuda;
    return {};
}

std::tuple<unsigned, unsigned> major_minor(std::string_view version) {
    unsigned major = 0;
    unsigned minor = 0;
    const auto dot = version.find('.');
    std::from_chars(version.data(), version.data() + version.substr(0, dot).size(), major);
    if (dot != std::string_view::npos) std::from_chars(version.data() + dot + 1, version.data() + version.size(), minor);
    return {major, minor};
}

}  // namespace

VariantRules parse_variant_rules(std::string_view text, const std::string& source) {
    VariantRules rules;
    for_each_data_line(text, [&](const DataLine& line) {
        const auto& f = line.fields;
        auto bad = [&] { throw std::logic_error(source + ":" + std::to_string(line.number) + ": malformed '" + f[0] + "' line"); };
        if (f[0] == "namespace") {
            if (f.size() != 2) bad();
            rules.namespaces.push_back(f[1]);
        } else if (f[0] == "provider") {
            if (f.size() != 4) bad();
            rules.providers.push_back({f[1], f[2], f[3]});
        } else if (f[0] == "ptx" || f[0] == "sm" || f[0] == "cudart" || f[0] == "runtime") {
            if (f.size() != 3) bad();
            auto& rows = f[0] == "ptx" ? rules.ptx : f[0] == "sm" ? rules.sm : f[0] == "cudart" ? rules.cudart : rules.runtime;
            rows.push_back({f[1], f[2]});
        } else {
            bad();
        }
    });
    return rules;
}

const VariantRules& variant_rules() {
    static const VariantRules rules = parse_variant_rules(
        std::string_view(wheelfix_variants_policy, wheelfix_variants_policy_size), "variants.policy (built in)");
    return rules;
}

std::string cuda_for_ptx_isa(std::uint16_t major, std::uint16_t minor) {
    return lookup(variant_rules().ptx, std::to_string(major) + "." + std::to_string(minor));
}
std::string cuda_for_sm(std::uint32_t sm) { return lookup(variant_rules().sm, std::to_string(sm)); }
std::string cuda_for_cudart(int major) { return lookup(variant_rules().cudart, std::to_string(major)); }
std::string runtime_requirement(int major) { return lookup(variant_rules().runtime, std::to_string(major)); }

bool cuda_version_less(std::string_view a, std::string_view b) { return major_minor(a) < major_minor(b); }

}  // namespace wheelfix::policy
