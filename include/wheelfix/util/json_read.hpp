// A small JSON reader for the few JSON files wheelfix reads (a wheel's
// *.dist-info/variant.json, an index's {name}-{version}-variants.json).
//
// Contract: parse_json(text, where) returns the document as a JsonValue tree or
// throws InputError(where, one line naming the byte offset) for anything that is
// not RFC 8259 JSON. Bounded: nesting deeper than kJsonMaxDepth, or a document of
// more than kJsonMaxValues values, is refused, so a hostile file cannot drive the
// recursion or the allocations. Objects keep their keys in file order; a key given
// twice is refused (JSON leaves it undefined; a variant label given twice is a lie
// either way). \u escapes are decoded to UTF-8 (surrogate pairs joined).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelfix {

inline constexpr std::size_t kJsonMaxDepth = 64;
inline constexpr std::size_t kJsonMaxValues = 1u << 20;

struct JsonValue {
    enum class Kind { null, boolean, number, string, array, object };
    Kind kind = Kind::null;
    bool boolean = false;
    std::string text;  // a string's value, or a number as written
    std::vector<JsonValue> items;                             // array
    std::vector<std::pair<std::string, JsonValue>> members;  // object, in file order

    bool is_object() const { return kind == Kind::object; }
    bool is_array() const { return kind == Kind::array; }
    // The member named `key` of an object, or nullptr.
    const JsonValue* find(std::string_view key) const;
};

JsonValue parse_json(std::string_view text, const std::string& where);

}  // namespace wheelfix
