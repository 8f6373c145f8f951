// Recursive descent over RFC 8259, depth and value count bounded (json_read.hpp).
#include "wheelfix/util/json_read.hpp"

#include "wheelfix/util/error.hpp"

#include <algorithm>

namespace wheelfix {

namespace {

class JsonTextReader {
public:
    JsonTextReader(std::string_view text, const std::string& where) : text_(text), where_(where) {}

    JsonValue document() {
        JsonValue value = parse(0);
        skip_space();
        if (at_ != text_.size()) fail("text after the JSON value");
        return value;
    }

private:
    [[noreturn]] void fail(const std::string& problem) const {
        throw InputError(where_, "invalid JSON at byte " + std::to_string(at_) + ": " + problem);
    }

    void skip_space() {
        while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r'))
            ++at_;
    }

    char peek() {
        skip_space();
        if (at_ >= text_.size()) fail("unexpected end");
        return text_[at_];
    }

    void expect(char c) {
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++at_;
    }

    void literal(std::string_view word) {
        if (text_.substr(at_, word.size()) != word) fail("unknown literal");
        at_ += word.size();
    }

    JsonValue parse(std::size_t depth) {
        if (depth > kJsonMaxDepth) fail("nested deeper than " + std::to_string(kJsonMaxDepth));
        if (++values_ > kJsonMaxValues) fail("more than " + std::to_string(kJsonMaxValues) + " values");
        JsonValue value;
        const char c = peek();
        if (c == '{') {
            value.kind = JsonValue::Kind::object;
            ++at_;
            if (peek() == '}') { ++at_; return value; }
            while (true) {
                if (peek() != '"') fail("expected a key");
                std::string key = string();
                if (value.find(key)) fail("key '" + key + "' given twice");
                expect(':');
                value.members.emplace_back(std::move(key), parse(depth + 1));
                if (peek() == ',') { ++at_; continue; }
                expect('}');
                return value;
            }
        }
        if (c == '[') {
            value.kind = JsonValue::Kind::array;
            ++at_;
            if (peek() == ']') { ++at_; return value; }
            while (true) {
                value.items.push_back(parse(depth + 1));
                if (peek() == ',') { ++at_; continue; }
                expect(']');
                return value;
            }
        }
        if (c == '"') {
            value.kind = JsonValue::Kind::string;
            value.text = string();
            return value;
        }
        if (c == 't') { literal("true"); value.kind = JsonValue::Kind::boolean; value.boolean = true; return value; }
        if (c == 'f') { literal("false"); value.kind = JsonValue::Kind::boolean; return value; }
        if (c == 'n') { literal("null"); return value; }
        if (c == '-' || (c >= '0' && c <= '9')) {
            value.kind = JsonValue::Kind::number;
            const std::size_t start = at_;
            while (at_ < text_.size() && std::string_view("+-.eE0123456789").find(text_[at_]) != std::string_view::npos) ++at_;
            value.text = std::string(text_.substr(start, at_ - start));
            return value;
        }
        fail("unexpected character");
    }

    unsigned hex4() {
        if (at_ + 4 > text_.size()) fail("short \\u escape");
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
            const char h = text_[at_++];
            code <<= 4;
            if (h >= '0' && h <= '9') code |= unsigned(h - '0');
            else if (h >= 'a' && h <= 'f') code |= unsigned(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') code |= unsigned(h - 'A' + 10);
            else fail("bad \\u escape");
        }
        return code;
    }

    static void utf8(std::string& out, unsigned code) {
        if (code < 0x80) out += char(code);
        else if (code < 0x800) { out += char(0xC0 | (code >> 6)); out += char(0x80 | (code & 0x3F)); }
        else if (code < 0x10000) {
            out += char(0xE0 | (code >> 12)); out += char(0x80 | ((code >> 6) & 0x3F)); out += char(0x80 | (code & 0x3F));
        } else {
            out += char(0xF0 | (code >> 18)); out += char(0x80 | ((code >> 12) & 0x3F));
            out += char(0x80 | ((code >> 6) & 0x3F)); out += char(0x80 | (code & 0x3F));
        }
    }

    std::string string() {
        ++at_;  // the opening quote
        std::string out;
        while (true) {
            if (at_ >= text_.size()) fail("unterminated string");
            const char c = text_[at_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c != '\\') { out += c; continue; }
            if (at_ >= text_.size()) fail("unterminated escape");
            const char e = text_[at_++];
            switch (e) {
                case '"': case '\\': case '/': out += e; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    unsigned code = hex4();
                    if (code >= 0xD800 && code < 0xDC00 && text_.substr(at_, 2) == "\\u") {
                        at_ += 2;
                        const unsigned low = hex4();
                        if (low < 0xDC00 || low >= 0xE000) fail("unpaired surrogate");
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                    }
                    utf8(out, code);
                    break;
                }
                default: fail("unknown escape");
            }
        }
    }

    std::string_view text_;
    const std::string& where_;
    std::size_t at_ = 0;
    std::size_t values_ = 0;
};

}  // namespace

const JsonValue* JsonValue::find(std::string_view key) const {
    auto it = std::find_if(members.begin(), members.end(), [&](const auto& member) { return member.first == key; });
    return it == members.end() ? nullptr : &it->second;
}

JsonValue parse_json(std::string_view text, const std::string& where) { return JsonTextReader(text, where).document(); }

}  // namespace wheelfix
