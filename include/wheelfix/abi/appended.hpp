// Appended-parameter rules: what a shim forwarder passes for each parameter a newer
// torch function appends to the one extensions call, and why (a forwarder keeps
// the old behaviour, so no value is guessed: docs/decisions.md, "The torch ABI").
//
// Contract: appended_rules() parses src/abi/data/torch_appended.txt, embedded at
// build time, once; parse_appended_rules() reads the same format from any text and
// throws InputError(origin, "line N: …") for an unknown, duplicate or missing key,
// a successor that is not a mangled C++ name, a parameter that is not a number
// from 1, a value that is not 0..65535, true, false or null, or two rules for one
// parameter. appended_rule(successor, parameter) is the embedded rule for one
// appended parameter (1-based position in the successor's explicit parameters),
// or nullptr: then there is no rule, and the caller must not forward.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::abi {

struct AppendedRule {
    std::string successor;   // mangled
    std::size_t parameter = 0;  // 1-based, explicit parameters only
    std::uint16_t value = 0;
    std::string spelling;    // the value as written: "true", "null", "3"
    std::string why;
    std::string source;
    std::string note;
};

const std::vector<AppendedRule>& appended_rules();
const AppendedRule* appended_rule(std::string_view successor, std::size_t parameter);
std::vector<AppendedRule> parse_appended_rules(std::string_view text, const std::string& origin);

}  // namespace wheelfix::abi
