// Tables for people: aligned plain text for the terminal, GitHub-flavoured
// Markdown for CI job summaries.
//
// Contract:
// - A Table has optional headers (none: no header line in text; Markdown always
//   needs one, so it gets empty header cells) and rows of cells; a short row is
//   padded with empty cells.
// - render_text(): every column but the last is padded to its widest cell, two
//   spaces between columns, `indent` spaces before every line, right-aligned
//   columns padded on the left, no trailing blanks, one '\n' per line. Widths are
//   visible widths: ANSI escape sequences (colour) count zero, a UTF-8 character
//   one column, so coloured cells line up.
// - render_markdown(): "| a | b |" lines with the "|---|---:|" separator (":"
//   for right-aligned columns); '|' in a cell is written "\|", a newline "<br>",
//   ANSI escape sequences are dropped. Cells are written as given otherwise (a
//   caller wanting code spans adds the backticks).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix {

enum class Align { left, right };

class Table {
public:
    explicit Table(std::vector<std::string> headers = {});

    Table& align(std::size_t column, Align alignment);
    Table& indent(int spaces);
    Table& add_row(std::vector<std::string> cells);

    bool empty() const { return rows_.empty(); }
    std::size_t columns() const;
    std::string render_text() const;
    std::string render_markdown() const;

private:
    std::vector<std::string> headers_;
    std::vector<std::vector<std::string>> rows_;
    std::vector<Align> alignments_;
    int indent_ = 0;
};

// Columns `text` takes on a terminal: ANSI escape sequences excluded, one per
// UTF-8 character (continuation bytes are not counted).
std::size_t visible_width(std::string_view text);
// `text` without its ANSI escape sequences.
std::string strip_ansi(std::string_view text);

}  // namespace wheelfix
