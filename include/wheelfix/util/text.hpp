// Small text helpers shared by modules that parse lists out of strings.
//
// Contract: split_nonempty(text, separator) gives the parts of `text` between
// separators, in order, leaving out empty ones ("a::b:" -> {"a", "b"}), the way
// ld.so reads a search path and CLI11 lists a validator's set.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wheelfix {

std::vector<std::string> split_nonempty(std::string_view text, char separator);

}  // namespace wheelfix
