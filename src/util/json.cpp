#include "wheelfix/util/json.hpp"

#include <fmt/format.h>

namespace wheelfix {

namespace {
// Length of the valid UTF-8 sequence starting at text[i], or 0 if invalid.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
    auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    unsigned char lead = byte(i);
    std::size_t len = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > text.size()) return 0;
    for (std::size_t k = 1; k < len; ++k)
        if ((byte(i + k) & 0xC0) != 0x80) return 0;
    return len;
}
}  // namespace

std::string json_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 2);
    for (std::size_t i = 0; i < text.size();) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        switch (c) {
            case '"': out += "\\\""; ++i; continue;
            case '\\': out += "\\\\"; ++i; continue;
            case '\n': out += "\\n"; ++i; continue;
            case '\r': out += "\\r"; ++i; continue;
            case '\t': out += "\\t"; ++i; continue;
            default: break;
        }
        const std::size_t len = c < 0x20 ? 0 : utf8_sequence_length(text, i);
        if (len == 0) {  // a control character, or a stray byte: the document stays valid
            out += fmt::format("\\u{:04x}", c);
            ++i;
            continue;
        }
        out.append(text.substr(i, len));
        i += len;
    }
    return out;
}

void JsonWriter::newline_indent() {
    out_ += '\n';
    out_.append(has_items_.size() * 2, ' ');
}

void JsonWriter::before_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!has_items_.empty()) {
        if (has_items_.back()) out_ += ',';
        has_items_.back() = true;
        newline_indent();
    }
}

JsonWriter& JsonWriter::open(char bracket) {
    before_value();
    out_ += bracket;
    has_items_.push_back(false);
    return *this;
}

JsonWriter& JsonWriter::begin_object() { return open('{'); }

JsonWriter& JsonWriter::close(char bracket) {
    bool had_items = has_items_.back();
    has_items_.pop_back();
    if (had_items) newline_indent();
    out_ += bracket;
    return *this;
}

JsonWriter& JsonWriter::end_object() { return close('}'); }

JsonWriter& JsonWriter::begin_array() { return open('['); }

JsonWriter& JsonWriter::end_array() { return close(']'); }

JsonWriter& JsonWriter::key(std::string_view name) {
    before_value();
    out_ += '"';
    out_ += json_escape(name);
    out_ += "\": ";
    after_key_ = true;
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
    before_value();
    out_ += '"';
    out_ += json_escape(text);
    out_ += '"';
    return *this;
}

JsonWriter& JsonWriter::value(std::int64_t number) {
    before_value();
    out_ += std::to_string(number);
    return *this;
}

JsonWriter& JsonWriter::value(std::uint64_t number) {
    before_value();
    out_ += std::to_string(number);
    return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
    before_value();
    out_ += flag ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::null() {
    before_value();
    out_ += "null";
    return *this;
}

JsonWriter& JsonWriter::string_array(std::string_view name, const std::vector<std::string>& items) {
    key(name);
    begin_array();
    for (const auto& item : items) value(item);
    return end_array();
}

}  // namespace wheelfix
