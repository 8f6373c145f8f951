// Wheel variants (PEP 825 "Wheel Variants: Package Format"; properties PEP 817):
// the *.dist-info/variant.json of one wheel and the index-level
// {name}-{version}-variants.json, in the two schema versions in use.
//
// - v0.0.3 (https://variants-schema.wheelnext.dev/v0.0.3.json): what the deployed
//   variant-aware installer (variantlib, uv's preview) and PyTorch's variant index
//   read. Required: default-priorities.namespace, providers, variants; the
//   namespaces of default-priorities must be exactly those of `providers` (an
//   installer refuses otherwise), so abi_dependency, which has no provider (the
//   installer derives it from the environment), is not listed there.
// - v0.1.1 (https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json): the PEP
//   825 draft. Only $schema, default-priorities.namespace (every namespace used)
//   and variants; no other key.
// Labels match ^[0-9a-z_.]{1,16}$ (filename.hpp valid_variant_label); namespaces and
// features ^[a-z0-9_]+$, values ^[a-z0-9_.]+$, each feature one or more values.
//
// Contract:
// - format_variant_json(file) writes the document for file.schema, keys in a fixed
//   order (the same input gives the same bytes). A namespace, feature, value or
//   label that breaks the patterns is a std::logic_error (callers validate input).
// - parse_variant_json(text, where) reads either schema (by $schema; a document
//   without one is read as 0.0.3, as variantlib does) and checks the patterns above;
//   anything else is an InputError naming `where`. Bounded by util/json_read.hpp.
// - read_variant_json(wheel) is the wheel's own *.dist-info/variant.json, or
//   nullopt when it has none; a member over kVariantJsonMax bytes, or one whose
//   `variants` does not hold exactly one label, is an InputError naming
//   "<wheel>: <member>". A label other than the file name's is a lie, not a
//   malformed file: analysis/variant.hpp judges it.
// - merge_variant_files(files, where) is the index-level file: the union of the
//   files' variants; the schema, namespace order and providers must agree, and one
//   label must carry the same properties in every file; otherwise an InputError
//   naming `where` and the label.
#pragma once

#include "wheelfix/util/json.hpp"
#include "wheelfix/wheel/wheel.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::wheel {

// namespace -> feature -> values (in the order they are written)
using VariantProperties = std::map<std::string, std::map<std::string, std::vector<std::string>>>;

enum class VariantSchema { v0_0_3, v0_1_1 };
inline constexpr VariantSchema kDefaultVariantSchema = VariantSchema::v0_0_3;
// "0.0.3" / "0.1.1" (also with a leading 'v'); InputError naming `option` otherwise.
VariantSchema parse_variant_schema(std::string_view text, const std::string& option);
const char* variant_schema_name(VariantSchema schema);  // "0.0.3"
const char* variant_schema_url(VariantSchema schema);

inline constexpr std::uint64_t kVariantJsonMax = 1 << 20;
inline constexpr const char* kVariantJsonName = "variant.json";

struct VariantProviderEntry {
    std::string plugin_api;
    std::vector<std::string> requires_dist;
    bool operator==(const VariantProviderEntry&) const = default;
};

struct VariantFile {
    VariantSchema schema = kDefaultVariantSchema;
    std::vector<std::string> namespaces;                         // default-priorities.namespace
    std::map<std::string, VariantProviderEntry> providers;       // 0.0.3 only
    std::map<std::string, VariantProperties> variants;           // label -> properties
};

std::string format_variant_json(const VariantFile& file);
VariantFile parse_variant_json(std::string_view text, const std::string& where);
std::optional<VariantFile> read_variant_json(const Wheel& wheel);
// Whether the wheel is a variant wheel: a label in its file name, or a variant.json.
bool is_variant_wheel(const Wheel& wheel);
VariantFile merge_variant_files(const std::vector<VariantFile>& files, const std::string& where);

// The properties as one JSON object {namespace: {feature: [values]}}, the shape
// variant.json and wheelfix's --json documents share.
void write_variant_properties(JsonWriter& json, const VariantProperties& properties);

// "nvidia :: sm_arch :: 100_real", one per value, namespaces and features in order.
std::vector<std::string> property_lines(const VariantProperties& properties);

}  // namespace wheelfix::wheel
