// METADATA / WHEEL header files and PEP 508 requirement strings.
//
// The header block is read line by line ('\n' or "\r\n"): "Name: value" starts a
// header, a line starting with space or tab continues the previous one (kept
// verbatim after a '\n', so formatting restores it), the first empty line ends the
// block and everything after it is the body, untouched. Requirements are split into
// name, extras, version specifier or URL, and marker without judging the specifier.
#include "wheelfix/wheel/metadata.hpp"

#include "wheelfix/wheel/filename.hpp"
#include "wheelfix/wheel/version.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/text.hpp"

#include <algorithm>
#include <cctype>

namespace wheelfix::wheel {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// RFC 822 field names: printable ASCII without space or ':'.
bool is_field_name(std::string_view name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c < 0x7f && c != ':'; });
}

// Writes a value so each continuation line starts with whitespace.
std::string folded(std::string_view value) {
    std::string out;
    for (std::size_t i = 0; i < value.size(); ++i) {
        out += value[i];
        if (value[i] == '\n' && (i + 1 == value.size() || !is_blank(value[i + 1]))) out += "        ";
    }
    return out;
}

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.'; }

std::vector<std::string> split_extras(std::string_view list) {
    std::vector<std::string> extras;
    while (!list.empty()) {
        auto comma = list.find(',');
        auto extra = trim(list.substr(0, comma));
        if (!extra.empty()) extras.emplace_back(extra);
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
    }
    return extras;
}

std::string_view without_parentheses(std::string_view specifier) {
    if (specifier.size() >= 2 && specifier.front() == '(' && specifier.back() == ')')
        return trim(specifier.substr(1, specifier.size() - 2));
    return specifier;
}

// In "name @ URL ; marker" the marker needs whitespace before ';' (URLs may hold ';').
std::size_t url_marker_start(std::string_view rest) {
    for (std::size_t i = 1; i < rest.size(); ++i)
        if (rest[i] == ';' && is_blank(rest[i - 1])) return i;
    return std::string_view::npos;
}

// A marker without the white space outside its quotes, every quote as '"'.
std::string folded_marker(std::string_view marker) {
    std::string out;
    char quote = 0;  // the quote a string opened with, 0 outside strings
    for (char c : marker) {
        if (quote == 0 && std::isspace(static_cast<unsigned char>(c))) continue;
        if (quote == 0 && (c == '\'' || c == '"')) quote = c;
        else if (c == quote) quote = 0;
        else {
            out += c;
            continue;
        }
        out += '"';
    }
    return out;
}

std::vector<std::string> normalized_extras(const std::vector<std::string>& extras) {
    std::vector<std::string> names;
    for (const auto& extra : extras) names.push_back(normalize_project_name(extra));
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

bool same_specifier(const std::string& a, const std::string& b) {
    const auto left = SpecifierSet::try_parse(a);
    const auto right = SpecifierSet::try_parse(b);
    return left && right ? left->same_as(*right) : a == b;
}

}  // namespace

std::optional<std::string> HeaderFile::first(std::string_view name) const {
    for (const auto& [key, value] : headers)
        if (same_header_name(key, name)) return value;
    return std::nullopt;
}

std::vector<std::string> HeaderFile::all(std::string_view name) const {
    std::vector<std::string> values;
    for (const auto& [key, value] : headers)
        if (same_header_name(key, name)) values.push_back(value);
    return values;
}

bool same_header_name(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

HeaderFile parse_headers(std::string_view text, std::string_view file_for_errors) {
    HeaderFile file;
    auto fail = [&](std::size_t line_number, const std::string& problem) {
        return InputError(std::string(file_for_errors), "line " + std::to_string(line_number) + ": " + problem);
    };
    std::size_t position = 0;
    for (std::size_t line_number = 1; position < text.size(); ++line_number) {
        auto newline = text.find('\n', position);
        auto next = newline == std::string_view::npos ? text.size() : newline + 1;
        auto line = text.substr(position, next - position);
        position = next;
        if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

        if (line.empty()) {
            file.body = std::string(text.substr(position));
            return file;
        }
        if (is_blank(line.front())) {
            if (file.headers.empty()) throw fail(line_number, "continuation line before any header");
            file.headers.back().second += "\n" + std::string(line);
            continue;
        }
        auto colon = line.find(':');
        if (colon == std::string_view::npos || !is_field_name(line.substr(0, colon)))
            throw fail(line_number, "not a 'Name: value' header line");
        auto value = line.substr(colon + 1);
        while (!value.empty() && is_blank(value.front())) value.remove_prefix(1);
        file.headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
    }
    return file;
}

std::string format_headers(const HeaderFile& file) {
    std::string out;
    for (const auto& [name, value] : file.headers) out += name + ": " + folded(value) + "\n";
    if (file.body) out += "\n" + *file.body;
    return out;
}

Requirement parse_requirement(std::string_view text) {
    Requirement requirement;
    auto rest = trim(text);
    requirement.text = std::string(rest);
    auto name_end = std::find_if_not(rest.begin(), rest.end(), is_name_char) - rest.begin();
    requirement.name = std::string(rest.substr(0, static_cast<std::size_t>(name_end)));
    rest = trim(rest.substr(static_cast<std::size_t>(name_end)));

    if (!rest.empty() && rest.front() == '[') {
        auto close = rest.find(']');
        requirement.extras = split_extras(rest.substr(1, close == std::string_view::npos ? rest.npos : close - 1));
        rest = close == std::string_view::npos ? std::string_view{} : trim(rest.substr(close + 1));
    }
    bool is_url = !rest.empty() && rest.front() == '@';
    auto semicolon = is_url ? url_marker_start(rest) : rest.find(';');
    if (semicolon != std::string_view::npos) requirement.marker = std::string(trim(rest.substr(semicolon + 1)));
    auto spec = trim(rest.substr(0, semicolon));
    if (is_url)
        requirement.url = std::string(trim(spec.substr(1)));
    else
        requirement.specifier = std::string(without_parentheses(spec));
    return requirement;
}

std::vector<std::string> requirement_summaries(const std::vector<Requirement>& requirements) {
    std::vector<std::string> lines;
    for (const auto& requirement : requirements) {
        std::string line = requirement.name + (requirement.specifier.empty() ? "" : " " + requirement.specifier);
        if (!requirement.marker.empty()) line += "; " + requirement.marker;
        lines.push_back(std::move(line));
    }
    return lines;
}

bool same_requirement(const Requirement& a, const Requirement& b) {
    return normalize_project_name(a.name) == normalize_project_name(b.name) &&
           normalized_extras(a.extras) == normalized_extras(b.extras) && a.url == b.url &&
           same_specifier(a.specifier, b.specifier) && folded_marker(a.marker) == folded_marker(b.marker);
}

std::vector<Requirement> torch_requirements(const HeaderFile& metadata) {
    std::vector<Requirement> torch;
    for (const auto& text : metadata.all("Requires-Dist")) {
        auto requirement = parse_requirement(text);
        if (normalize_project_name(requirement.name) == "torch") torch.push_back(std::move(requirement));
    }
    return torch;
}

}  // namespace wheelfix::wheel
