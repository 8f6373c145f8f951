// RECORD as Python's csv module reads and writes it.
//
// A small state machine over the text: a field is either bare (up to ',' or the
// line end) or quoted ('"' ... '"', with "" for a quote and raw line breaks
// allowed inside); rows end at '\n', "\r\n" or '\r'. Blank lines are skipped.
// Each row is then checked for the three RECORD fields. Writing quotes a field
// only when it holds ',', '"' or a line break, and ends rows with '\n', as the
// wheel tools do.
#include "wheelfix/wheel/record.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/sha256.hpp"

#include <algorithm>

namespace wheelfix::wheel {

namespace {

class CsvReader {
public:
    CsvReader(std::string_view text, std::string_view file) : text_(text), file_(file) {}

    bool at_end() const { return pos_ >= text_.size(); }
    std::size_t line() const { return line_; }

    // The next row's fields; the cursor ends after the row's line break.
    std::vector<std::string> next_row() {
        row_line_ = line_;
        std::vector<std::string> fields;
        while (true) {
            fields.push_back(peek() == '"' ? quoted_field() : bare_field());
            if (at_end()) return fields;
            char c = text_[pos_++];
            if (c == ',') continue;
            if (c == '\r' && peek() == '\n') ++pos_;
            ++line_;
            return fields;
        }
    }

    InputError error(const std::string& problem) const {
        return InputError(std::string(file_), "line " + std::to_string(row_line_) + ": " + problem);
    }

private:
    static bool ends_field(char c) { return c == ',' || c == '\n' || c == '\r'; }
    char peek() const { return at_end() ? '\0' : text_[pos_]; }

    std::string bare_field() {
        auto start = pos_;
        while (!at_end() && !ends_field(text_[pos_])) ++pos_;
        return std::string(text_.substr(start, pos_ - start));
    }

    std::string quoted_field() {
        std::string field;
        ++pos_;  // opening quote
        while (true) {
            if (at_end()) throw error("unterminated quoted field");
            char c = text_[pos_++];
            if (c == '"' && peek() == '"') {
                field += '"';
                ++pos_;
            } else if (c == '"') {
                break;
            } else {
                if (c == '\n' || (c == '\r' && peek() != '\n')) ++line_;
                field += c;
            }
        }
        if (!at_end() && !ends_field(peek())) throw error("unexpected text after a closing quote");
        return field;
    }

    std::string_view text_;
    std::string_view file_;
    std::size_t pos_ = 0;
    std::size_t line_ = 1;
    std::size_t row_line_ = 1;
};

std::optional<std::uint64_t> parse_decimal(std::string_view text) {
    if (text.empty() || text.size() > 19 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    std::uint64_t value = 0;
    for (char c : text) value = value * 10 + static_cast<std::uint64_t>(c - '0');
    return value;
}

RecordEntry entry_from_row(const std::vector<std::string>& fields, const CsvReader& reader) {
    if (fields.size() != 3)
        throw reader.error("expected 3 fields (path,hash,size), found " + std::to_string(fields.size()));
    RecordEntry entry;
    entry.path = fields[0];
    if (entry.path.empty()) throw reader.error("empty path");
    if (const auto& hash = fields[1]; !hash.empty()) {
        auto equals = hash.find('=');
        if (equals == std::string::npos || equals == 0 || equals + 1 == hash.size())
            throw reader.error("malformed hash '" + hash + "' (expected algorithm=value)");
        entry.hash_algorithm = hash.substr(0, equals);
        entry.hash_value = hash.substr(equals + 1);
    }
    if (const auto& size = fields[2]; !size.empty()) {
        entry.size = parse_decimal(size);
        if (!entry.size) throw reader.error("malformed size '" + size + "'");
    }
    return entry;
}

std::string csv_field(std::string_view field) {
    if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
    std::string out = "\"";
    for (char c : field) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

}  // namespace

std::vector<RecordEntry> parse_record(std::string_view text, std::string_view file_for_errors) {
    std::vector<RecordEntry> entries;
    CsvReader reader(text, file_for_errors);
    while (!reader.at_end()) {
        auto start_line = reader.line();
        auto fields = reader.next_row();
        if (fields.size() == 1 && fields[0].empty()) continue;  // blank line
        auto entry = entry_from_row(fields, reader);
        entry.line = start_line;
        entries.push_back(std::move(entry));
    }
    return entries;
}

std::string format_record(const std::vector<RecordEntry>& entries) {
    std::string out;
    for (const auto& entry : entries) {
        std::string hash = entry.hash_algorithm.empty() ? "" : entry.hash_algorithm + "=" + entry.hash_value;
        std::string size = entry.size ? std::to_string(*entry.size) : "";
        out += csv_field(entry.path) + "," + csv_field(hash) + "," + size + "\n";
    }
    return out;
}

bool hash_is_strong(std::string_view algorithm) {
    return algorithm == "sha256" || algorithm == "sha384" || algorithm == "sha512";
}

std::string record_hash_sha256(std::string_view bytes) {
    auto digest = sha256(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
    return "sha256=" + urlsafe_b64_nopad(digest);
}

}  // namespace wheelfix::wheel
