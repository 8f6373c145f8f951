// Text and Markdown tables (util/table.hpp has the contract).
#include "wheelfix/util/table.hpp"

#include <algorithm>

namespace wheelfix {

namespace {

// Length of the ANSI escape sequence starting at text[i] ("\x1b[...m" and other
// CSI sequences: ESC '[' parameters, then one final byte 0x40-0x7e), else 0.
std::size_t escape_length(std::string_view text, std::size_t i) {
    if (text[i] != '\x1b' || i + 1 >= text.size() || text[i + 1] != '[') return 0;
    std::size_t j = i + 2;
    while (j < text.size() && !(text[j] >= 0x40 && text[j] <= 0x7e)) ++j;
    return j < text.size() ? j + 1 - i : text.size() - i;
}

std::string pad(std::string_view cell, std::size_t width, Align alignment) {
    std::size_t visible = visible_width(cell);
    std::string padding(width > visible ? width - visible : 0, ' ');
    return alignment == Align::right ? padding + std::string(cell) : std::string(cell) + padding;
}

std::string markdown_cell(std::string_view cell) {
    std::string out;
    for (char c : strip_ansi(cell)) {
        if (c == '|') out += "\\|";
        else if (c == '\n') out += "<br>";
        else if (c != '\r') out += c;
    }
    return out;
}

void rtrim(std::string& line) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
}

}  // namespace

std::string strip_ansi(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        if (std::size_t skip = escape_length(text, i)) {
            i += skip;
            continue;
        }
        out += text[i++];
    }
    return out;
}

std::size_t visible_width(std::string_view text) {
    const std::string plain = strip_ansi(text);  // then one column per UTF-8 character
    return static_cast<std::size_t>(
        std::count_if(plain.begin(), plain.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

Table::Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}

Table& Table::align(std::size_t column, Align alignment) {
    if (alignments_.size() <= column) alignments_.resize(column + 1, Align::left);
    alignments_[column] = alignment;
    return *this;
}

Table& Table::indent(int spaces) {
    indent_ = std::max(spaces, 0);
    return *this;
}

Table& Table::add_row(std::vector<std::string> cells) {
    rows_.push_back(std::move(cells));
    return *this;
}

std::size_t Table::columns() const {
    std::size_t count = headers_.size();
    for (const auto& row : rows_) count = std::max(count, row.size());
    return count;
}

std::string Table::render_text() const {
    const std::size_t count = columns();
    std::vector<std::size_t> widths(count, 0);
    auto measure = [&](const std::vector<std::string>& row) {
        for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], visible_width(row[c]));
    };
    measure(headers_);
    for (const auto& row : rows_) measure(row);

    auto render_row = [&](const std::vector<std::string>& row) {
        std::string line(indent_, ' ');
        for (std::size_t c = 0; c < count; ++c) {
            std::string_view cell = c < row.size() ? std::string_view(row[c]) : std::string_view();
            Align alignment = c < alignments_.size() ? alignments_[c] : Align::left;
            bool last = c + 1 == count;
            line += last && alignment == Align::left ? std::string(cell) : pad(cell, widths[c], alignment);
            if (!last) line += "  ";
        }
        rtrim(line);
        return line + "\n";
    };
    std::string out;
    if (!headers_.empty()) out += render_row(headers_);
    for (const auto& row : rows_) out += render_row(row);
    return out;
}

std::string Table::render_markdown() const {
    const std::size_t count = std::max<std::size_t>(columns(), 1);
    auto render_row = [&](const std::vector<std::string>& row) {
        std::string line = "|";
        for (std::size_t c = 0; c < count; ++c) {
            std::string cell = c < row.size() ? markdown_cell(row[c]) : std::string();
            line += cell.empty() ? " |" : " " + cell + " |";
        }
        return line + "\n";
    };
    std::string out = render_row(headers_) + "|";
    for (std::size_t c = 0; c < count; ++c)
        out += c < alignments_.size() && alignments_[c] == Align::right ? "---:|" : "---|";
    out += "\n";
    for (const auto& row : rows_) out += render_row(row);
    return out;
}

}  // namespace wheelfix
