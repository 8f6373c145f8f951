// Wheel variants: the JSON reader's bounds, variant.json in both schemas, the
// merge's refusals, the property rules' data.
#include "wheelfix/policy/variant_rules.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/json_read.hpp"
#include "wheelfix/wheel/variant.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace wheelfix;

namespace {

std::string problem_of(const std::function<void()>& call) {
    try {
        call();
    } catch (const InputError& error) {
        return error.problem();
    }
    return "(nothing thrown)";
}

wheel::VariantFile sample(wheel::VariantSchema schema, const std::string& label, const std::string& sm) {
    wheel::VariantFile file;
    file.schema = schema;
    file.namespaces = {"nvidia"};
    if (schema == wheel::VariantSchema::v0_0_3)
        file.providers["nvidia"] = {"nvidia_variant_provider.plugin:NvidiaVariantPlugin", {"nvidia-variant-provider>=0.0.1,<1.0.0"}};
    else
        file.namespaces.push_back("abi_dependency");
    file.variants[label] = {{"nvidia", {{"sm_arch", {sm + "_real"}}, {"cuda_version_lower_bound", {"13.0"}}}},
                            {"abi_dependency", {{"torch", {"2.9"}}}}};
    return file;
}

}  // namespace

TEST_CASE("json reader: values, escapes, and the bounds a hostile file meets") {
    auto doc = parse_json(R"({"a": [1, true, null, "x\u00e9\ud83d\ude00"], "b": {}})", "t.json");
    REQUIRE(doc.is_object());
    CHECK(doc.find("a")->items.size() == 4);
    CHECK(doc.find("a")->items[3].text == "x\xc3\xa9\xf0\x9f\x98\x80");
    CHECK(doc.find("c") == nullptr);
    CHECK(problem_of([] { parse_json(R"({"a": 1, "a": 2})", "t"); }).find("given twice") != std::string::npos);
    CHECK(problem_of([] { parse_json("[1, 2", "t"); }).starts_with("invalid JSON"));
    CHECK(problem_of([] { parse_json("{} x", "t"); }).find("text after") != std::string::npos);
    CHECK(problem_of([] { parse_json(std::string(100000, '['), "t"); }).find("nested deeper") != std::string::npos);
    CHECK(problem_of([] { parse_json("\"a\nb\"", "t"); }).find("control character") != std::string::npos);
}

TEST_CASE("variant.json: both schemas written and read back") {
    for (auto schema : {wheel::VariantSchema::v0_0_3, wheel::VariantSchema::v0_1_1}) {
        CAPTURE(wheel::variant_schema_name(schema));
        const auto file = sample(schema, "cu13sm100", "100");
        const std::string text = wheel::format_variant_json(file);
        CHECK(text.find(wheel::variant_schema_url(schema)) != std::string::npos);
        CHECK((text.find("\"providers\"") != std::string::npos) == (schema == wheel::VariantSchema::v0_0_3));
        const auto back = wheel::parse_variant_json(text, "v.json");
        CHECK(back.schema == schema);
        CHECK(back.namespaces == file.namespaces);
        CHECK(back.variants == file.variants);
        CHECK(wheel::format_variant_json(back) == text);
    }
    CHECK(wheel::parse_variant_schema("v0.1.1", "--schema") == wheel::VariantSchema::v0_1_1);
    CHECK(problem_of([] { wheel::parse_variant_schema("0.2", "--schema"); }).starts_with("unknown variant schema"));
}

TEST_CASE("variant.json: what breaks the patterns is refused") {
    const std::string head = R"({"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
        "default-priorities": {"namespace": ["nvidia"]}, "variants": )";
    CHECK(problem_of([&] { wheel::parse_variant_json(head + R"({"TooLongLabel_abcdefgh": {}}})", "v"); })
              .find("breaks ^[0-9a-z_.]{1,16}$") != std::string::npos);
    CHECK(problem_of([&] { wheel::parse_variant_json(head + R"({"a": {"nvidia": {"sm_arch": []}}}})", "v"); })
              .find("has no value") != std::string::npos);
    CHECK(problem_of([&] { wheel::parse_variant_json(head + R"({"a": {"nvidia": {"sm_arch": ["X"]}}}})", "v"); })
              .find("breaks ^[a-z0-9_.]+$") != std::string::npos);
    CHECK(problem_of([&] { wheel::parse_variant_json(head + R"({"a": {"nvidia": {"sm_arch": "100_real"}}}})", "v"); })
              .find("must be an array") != std::string::npos);
    CHECK(problem_of([] { wheel::parse_variant_json(R"({"default-priorities": {"namespace": []}, "variants": {}})", "v"); })
              .find("no providers") != std::string::npos);
}

TEST_CASE("variant merge: the union, and a label that names two things refused") {
    const auto a = sample(wheel::VariantSchema::v0_0_3, "cu13sm100", "100");
    const auto b = sample(wheel::VariantSchema::v0_0_3, "cu13sm120", "120");
    const auto merged = wheel::merge_variant_files({a, b, a}, "dir");
    CHECK(merged.variants.size() == 2);
    CHECK(merged.providers.size() == 1);
    const auto liar = sample(wheel::VariantSchema::v0_0_3, "cu13sm100", "120");
    CHECK(problem_of([&] { wheel::merge_variant_files({a, liar}, "dir"); }).find("names different properties") !=
          std::string::npos);
    CHECK(problem_of([&] { wheel::merge_variant_files({a, sample(wheel::VariantSchema::v0_1_1, "x", "90")}, "dir"); })
              .find("schemas differ") != std::string::npos);
}

TEST_CASE("variant rules: the data's tables") {
    CHECK(policy::cuda_for_ptx_isa(9, 0) == "13.0");
    CHECK(policy::cuda_for_ptx_isa(8, 8) == "12.9");
    CHECK(policy::cuda_for_ptx_isa(99, 0) == "");
    CHECK(policy::cuda_for_sm(100) == "12.8");
    CHECK(policy::cuda_for_cudart(13) == "13.0");
    CHECK(policy::runtime_requirement(13) == "nvidia-cuda-runtime>=13,<14");
    CHECK(policy::cuda_version_less("12.9", "13.0"));
    CHECK(policy::cuda_version_less("12.9", "12.10"));
    CHECK_FALSE(policy::cuda_version_less("13", "13.0"));
    CHECK(policy::variant_rules().namespaces == std::vector<std::string>{"nvidia", "abi_dependency"});
}
