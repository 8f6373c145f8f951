// variant.json in both schema versions (wheel/variant.hpp).
#include "wheelfix/wheel/variant.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/json.hpp"
#include "wheelfix/util/json_read.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace wheelfix::wheel {

namespace {

bool variant_name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }
bool value_char(char c) { return variant_name_char(c) || c == '.'; }
bool matches(std::string_view text, bool (*allowed)(char)) {
    return !text.empty() && std::all_of(text.begin(), text.end(), allowed);
}

// Empty when the properties are well formed, else the first problem.
std::string properties_problem(const VariantProperties& properties) {
    for (const auto& [name_space, features] : properties) {
        if (!matches(name_space, variant_name_char)) return "namespace '" + name_space + "' breaks ^[a-z0-9_]+$";
        for (const auto& [feature, values] : features) {
            if (!matches(feature, variant_name_char)) return "feature '" + feature + "' breaks ^[a-z0-9_]+$";
            if (values.empty()) return "feature " + name_space + " :: " + feature + " has no value";
            std::set<std::string> seen;
            for (const auto& value : values) {
                if (!matches(value, value_char)) return "value '" + value + "' breaks ^[a-z0-9_.]+$";
                if (!seen.insert(value).second) return "value '" + value + "' given twice";
            }
        }
    }
    return {};
}

// The same properties, values compared as sets.
bool same_properties(const VariantProperties& a, const VariantProperties& b) {
    auto canonical = [](VariantProperties p) {
        for (auto& [ns, features] : p)
            for (auto& [feature, values] : features) std::sort(values.begin(), values.end());
        return p;
    };
    return canonical(a) == canonical(b);
}

const JsonValue& require(const JsonValue& value, JsonValue::Kind kind, const std::string& where, const std::string& what) {
    if (value.kind != kind) {
        const char* expected = kind == JsonValue::Kind::object ? "an object" : kind == JsonValue::Kind::array ? "an array" : "a string";
        throw InputError(where, what + " must be " + expected);
    }
    return value;
}

std::vector<std::string> string_list(const JsonValue& value, const std::string& where, const std::string& what) {
    std::vector<std::string> out;
    for (const auto& item : require(value, JsonValue::Kind::array, where, what).items)
        out.push_back(require(item, JsonValue::Kind::string, where, what + " item").text);
    return out;
}

}  // namespace

VariantSchema parse_variant_schema(std::string_view text, const std::string& option) {
    if (text.starts_with("v")) text.remove_prefix(1);
    if (text == "0.0.3") return VariantSchema::v0_0_3;
    if (text == "0.1.1") return VariantSchema::v0_1_1;
    throw InputError(option, "unknown variant schema '" + std::string(text) + "' (0.0.3 or 0.1.1)");
}

const char* variant_schema_name(VariantSchema schema) { return schema == VariantSchema::v0_0_3 ? "0.0.3" : "0.1.1"; }

const char* variant_schema_url(VariantSchema schema) {
    return schema == VariantSchema::v0_0_3 ? "https://variants-schema.wheelnext.dev/v0.0.3.json"
                                           : "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json";
}

std::string format_variant_json(const VariantFile& file) {
    for (const auto& [label, properties] : file.variants) {
        if (!valid_variant_label(label)) throw std::logic_error("variant label '" + label + "' breaks the pattern");
        if (auto problem = properties_problem(properties); !problem.empty()) throw std::logic_error(problem);
    }
    JsonWriter json;
    json.begin_object();
    json.field("$schema", variant_schema_url(file.schema));
    json.key("default-priorities").begin_object().string_array("namespace", file.namespaces).end_object();
    if (file.schema == VariantSchema::v0_0_3) {
        json.key("providers").begin_object();
        for (const auto& [name_space, provider] : file.providers) {
            json.key(name_space).begin_object();
            json.field("plugin-api", provider.plugin_api);
            json.string_array("requires", provider.requires_dist);
            json.end_object();
        }
        json.end_object();
    }
    json.key("variants").begin_object();
    for (const auto& [label, properties] : file.variants) {
        json.key(label);
        write_variant_properties(json, properties);
    }
    json.end_object();
    json.end_object();
    return json.str();
}

VariantFile parse_variant_json(std::string_view text, const std::string& where) {
    const JsonValue document = parse_json(text, where);
    require(document, JsonValue::Kind::object, where, "the document");
    VariantFile file;
    file.schema = VariantSchema::v0_0_3;
    if (const JsonValue* schema = document.find("$schema")) {
        const std::string& url = require(*schema, JsonValue::Kind::string, where, "$schema").text;
        if (url.find("0.1.1") != std::string::npos) file.schema = VariantSchema::v0_1_1;
        else if (url.find("0.0.3") == std::string::npos)
            throw InputError(where, "unknown $schema '" + url + "' (wheelfix reads v0.0.3 and v0.1.1)");
    }
    const JsonValue* priorities = document.find("default-priorities");
    if (!priorities) throw InputError(where, "no default-priorities");
    const JsonValue* namespaces = require(*priorities, JsonValue::Kind::object, where, "default-priorities").find("namespace");
    if (!namespaces) throw InputError(where, "no default-priorities.namespace");
    file.namespaces = string_list(*namespaces, where, "default-priorities.namespace");
    if (const JsonValue* providers = document.find("providers")) {
        for (const auto& [name_space, entry] : require(*providers, JsonValue::Kind::object, where, "providers").members) {
            VariantProviderEntry provider;
            require(entry, JsonValue::Kind::object, where, "providers." + name_space);
            if (const JsonValue* api = entry.find("plugin-api"))
                provider.plugin_api = require(*api, JsonValue::Kind::string, where, "plugin-api").text;
            if (const JsonValue* requires_dist = entry.find("requires"))
                provider.requires_dist = string_list(*requires_dist, where, "providers." + name_space + ".requires");
            file.providers.emplace(name_space, std::move(provider));
        }
    } else if (file.schema == VariantSchema::v0_0_3) {
        throw InputError(where, "no providers (required by schema 0.0.3)");
    }
    const JsonValue* variants = document.find("variants");
    if (!variants) throw InputError(where, "no variants");
    for (const auto& [label, namespaces_value] : require(*variants, JsonValue::Kind::object, where, "variants").members) {
        if (!valid_variant_label(label))
            throw InputError(where, "variant label '" + label + "' breaks ^[0-9a-z_.]{1,16}$");
        VariantProperties properties;
        for (const auto& [name_space, features] : require(namespaces_value, JsonValue::Kind::object, where, "variants." + label).members)
            for (const auto& [feature, values] : require(features, JsonValue::Kind::object, where, "variants." + label + "." + name_space).members)
                properties[name_space][feature] = string_list(values, where, "variants." + label + "." + name_space + "." + feature);
        if (auto problem = properties_problem(properties); !problem.empty())
            throw InputError(where, "variant '" + label + "': " + problem);
        file.variants.emplace(label, std::move(properties));
    }
    return file;
}

bool is_variant_wheel(const Wheel& wheel) {
    return !wheel.filename().variant_label.empty() || wheel.archive().find(wheel.dist_info() + "/" + kVariantJsonName);
}

std::optional<VariantFile> read_variant_json(const Wheel& wheel) {
    const std::string name = wheel.dist_info() + "/" + kVariantJsonName;
    const zip::Member* member = wheel.archive().find(name);
    if (!member) return std::nullopt;
    const std::string where = wheel.archive().path().string() + ": " + name;
    if (member->size > kVariantJsonMax)
        throw InputError(where, "is " + std::to_string(member->size) + " bytes (more than " + std::to_string(kVariantJsonMax) + ")");
    const auto bytes = wheel.archive().read(*member);
    VariantFile file = parse_variant_json(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), where);
    if (file.variants.size() != 1)
        throw InputError(where, "holds " + std::to_string(file.variants.size()) + " variants (a wheel's holds exactly one)");
    return file;
}

VariantFile merge_variant_files(const std::vector<VariantFile>& files, const std::string& where) {
    if (files.empty()) throw InputError(where, "no variant wheels to merge");
    VariantFile merged = files.front();
    merged.variants.clear();
    for (const VariantFile& file : files) {
        if (file.schema != merged.schema)
            throw InputError(where, std::string("variant.json schemas differ (") + variant_schema_name(merged.schema) + " and " +
                                        variant_schema_name(file.schema) + ")");
        if (file.namespaces != merged.namespaces) throw InputError(where, "default-priorities.namespace differ between wheels");
        for (const auto& [name_space, provider] : file.providers) {
            auto [known, fresh] = merged.providers.emplace(name_space, provider);
            if (!fresh && !(known->second == provider)) throw InputError(where, "providers." + name_space + " differ between wheels");
        }
        for (const auto& [label, properties] : file.variants) {
            auto [known, fresh] = merged.variants.emplace(label, properties);
            if (!fresh && !same_properties(known->second, properties))
                throw InputError(where, "variant label '" + label + "' names different properties in two wheels");
        }
    }
    return merged;
}

void write_variant_properties(JsonWriter& json, const VariantProperties& properties) {
    json.begin_object();
    for (const auto& [name_space, features] : properties) {
        json.key(name_space).begin_object();
        for (const auto& [feature, values] : features) json.string_array(feature, values);
        json.end_object();
    }
    json.end_object();
}

std::vector<std::string> property_lines(const VariantProperties& properties) {
    std::vector<std::string> lines;
    for (const auto& [name_space, features] : properties)
        for (const auto& [feature, values] : features)
            for (const auto& value : values) lines.push_back(name_space + " :: " + feature + " :: " + value);
    return lines;
}

}  // namespace wheelfix::wheel
