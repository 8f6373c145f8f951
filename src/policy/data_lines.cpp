// for_each_data_line: split a policy data file into records.
#include "data_lines.hpp"

#include "wheelfix/util/text.hpp"

namespace wheelfix::policy {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::vector<std::string> split_fields(std::string_view text) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    while (start < text.size()) {
        while (start < text.size() && is_blank(text[start])) ++start;
        std::size_t end = start;
        while (end < text.size() && !is_blank(text[end])) ++end;
        if (end > start) fields.emplace_back(text.substr(start, end - start));
        start = end;
    }
    return fields;
}

}  // namespace

void for_each_data_line(std::string_view text, const std::function<void(const DataLine&)>& visit) {
    int number = 0;
    while (!text.empty()) {
        auto newline = text.find('\n');
        std::string_view raw = text.substr(0, newline);
        text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
        ++number;
        std::string_view content = trim(raw.substr(0, raw.find('#')));
        if (content.empty()) continue;
        DataLine line;
        line.number = number;
        line.fields = split_fields(content);
        line.rest_after_first = std::string(trim(content.substr(line.fields.front().size())));
        visit(line);
    }
}

}  // namespace wheelfix::policy
