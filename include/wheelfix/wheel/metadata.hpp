// RFC 822-style metadata files: METADATA and WHEEL.
//
// Contract: parse_headers() reads "Name: value" lines up to the first empty line,
// keeping order and repeats (Requires-Dist appears many times) and folding
// continuation lines (starting with space or tab) into the previous value with
// '\n'; everything after the blank line is the body, kept byte for byte. Lines that
// are neither a header nor a continuation are an InputError. Header names compare
// case-insensitively. format_headers() writes the same shape back; a file parsed
// and formatted unchanged is byte-identical when it used '\n' line ends.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelfix::wheel {

struct HeaderFile {
    std::vector<std::pair<std::string, std::string>> headers;
    std::optional<std::string> body;  // text after the blank line, if there was one

    std::optional<std::string> first(std::string_view name) const;
    std::vector<std::string> all(std::string_view name) const;
};

HeaderFile parse_headers(std::string_view text, std::string_view file_for_errors);
bool same_header_name(std::string_view a, std::string_view b);
std::string format_headers(const HeaderFile& file);

// A Requires-Dist value split into its parts: "torch (>=2.9) ; extra == 'x'".
// same_requirement(): whether two ask for the same thing: the names as PEP 503
// normalises them, the same extras (any order, normalised), the same URL, specifiers
// with the same clauses (SpecifierSet::same_as; compared as written when one cannot be
// read) and markers equal but for white space outside quotes and the quote style.
struct Requirement {
    std::string name;        // as written
    std::string specifier;   // ">=2.9,<2.10" (parentheses removed), may be empty
    std::string marker;      // after ';', trimmed, may be empty
    std::vector<std::string> extras;  // "torch[cuda, x]" -> {"cuda", "x"}
    std::string url;         // "name @ URL" form (then specifier is empty)
    std::string text;        // the whole value as written, trimmed: what a writer adds to METADATA
};
Requirement parse_requirement(std::string_view text);
bool same_requirement(const Requirement& a, const Requirement& b);
// Requirements as reports show them, one each: "torch >=2.9,<2.10; extra == 'gpu'"
// (name, specifier without parentheses, marker; extras and a URL left out).
std::vector<std::string> requirement_summaries(const std::vector<Requirement>& requirements);
// METADATA's Requires-Dist entries on torch (any case/spelling of the name).
std::vector<Requirement> torch_requirements(const HeaderFile& metadata);

}  // namespace wheelfix::wheel
