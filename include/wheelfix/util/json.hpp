// A small streaming JSON writer for `--json` output.
//
// Contract: calls must nest correctly (object/array begin/end, key before every
// value inside an object); strings are escaped per RFC 8259 (bytes that are not
// valid UTF-8 are written as \u00XX of the byte so the output stays valid JSON).
// Output is indented with two spaces; key order is the order of the calls, so
// the documents are stable for pipelines and for byte-comparison in tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix {

class JsonWriter {
public:
    JsonWriter() = default;

    JsonWriter& begin_object();
    JsonWriter& end_object();
    JsonWriter& begin_array();
    JsonWriter& end_array();
    JsonWriter& key(std::string_view name);

    JsonWriter& value(std::string_view text);
    JsonWriter& value(const char* text) { return value(std::string_view(text)); }
    JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
    JsonWriter& value(std::int64_t number);
    JsonWriter& value(std::uint64_t number);
    JsonWriter& value(int number) { return value(static_cast<std::int64_t>(number)); }
    JsonWriter& value(unsigned number) { return value(static_cast<std::uint64_t>(number)); }
    JsonWriter& value(bool flag);
    JsonWriter& null();

    // key + value in one call; an empty optional writes null.
    template <typename T>
    JsonWriter& field(std::string_view name, const T& v) {
        key(name);
        return value(v);
    }
    template <typename T>
    JsonWriter& field(std::string_view name, const std::optional<T>& v) {
        key(name);
        return v ? value(*v) : null();
    }
    // key + array of strings.
    JsonWriter& string_array(std::string_view name, const std::vector<std::string>& items);

    // The finished document, with a trailing newline.
    std::string str() const { return out_ + "\n"; }

private:
    void before_value();
    void newline_indent();
    JsonWriter& open(char bracket);
    JsonWriter& close(char bracket);

    std::string out_;
    std::vector<bool> has_items_;  // one per open container
    bool after_key_ = false;
};

std::string json_escape(std::string_view text);

}  // namespace wheelfix
