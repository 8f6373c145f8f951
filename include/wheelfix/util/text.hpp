// Small text helpers shared by modules that parse lists out of strings.
//
// Contract: split(text, separator) gives every part of `text` between separators,
// in order, empty ones included ("a::b:" -> {"a", "", "b", ""}; "" -> {""}), the way
// ld.so reads an RPATH entry list and a compressed tag set is spelled.
// split_nonempty(text, separator) gives the parts of `text` between
// separators, in order, leaving out empty ones ("a::b:" -> {"a", "b"}), the way
// ld.so reads a search path and CLI11 lists a validator's set. join(items,
// separator) is its inverse for lists that hold no empty parts: the items with the
// separator between each two ("a", "b" + ", " -> "a, b"); join(numbers, separator) the
// same for numbers in decimal ({2, 10} + "." -> "2.10"). edit_distance(a, b) is
// the optimal string alignment distance: insertions, deletions, substitutions and
// transpositions of adjacent characters, each costing one, no substring edited twice
// ("retag", "ertag" -> 1). human_size(bytes) is a size for people, in binary
// units: "812 B", "812.0 KiB", "541.2 MiB", "1.25 GiB". base_name(path) is what
// follows the last '/' ("torch/lib/libc10.so" -> "libc10.so"; no '/': the path).
// trim(text) is `text` without the ASCII white space (space, \t, \n, \v, \f, \r) at
// either end; ascii_lower(text) is `text` with A-Z lowered and every other byte kept.
// all_digits(text): `text` is one or more of 0-9. after_origin(entry): what follows a
// leading `$ORIGIN` or `${ORIGIN}` in a search path entry; nullopt when it starts with neither.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix {

std::vector<std::string> split(std::string_view text, char separator);
std::vector<std::string> split_nonempty(std::string_view text, char separator);
std::string join(const std::vector<std::string>& items, std::string_view separator);
std::string join(const std::vector<std::uint64_t>& numbers, std::string_view separator);
std::size_t edit_distance(const std::string& a, const std::string& b);
std::string human_size(std::uint64_t bytes);
std::string base_name(std::string_view path);
std::string_view trim(std::string_view text);
std::string ascii_lower(std::string_view text);
bool all_digits(std::string_view text);
std::optional<std::string_view> after_origin(std::string_view entry);

}  // namespace wheelfix
