// The appended-parameter rules: the "key: value" block format of
// src/abi/data/torch_appended.txt (appended.hpp has the contract).
#include "wheelfix/abi/appended.hpp"

#include "wheelfix/abi/data_blocks.hpp"

#include "wheelfix/util/error.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

extern const char wheelfix_torch_appended[];
extern const unsigned long wheelfix_torch_appended_size;

namespace wheelfix::abi {

namespace {

constexpr std::array<std::string_view, 6> kKeys{"successor", "parameter", "value", "why", "source", "note"};

std::optional<std::uint64_t> number(std::string_view text) {
    std::uint64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::optional<std::uint16_t> register_value(std::string_view text) {
    if (text == "true") return 1;
    if (text == "false" || text == "null") return 0;
    auto value = number(text);
    if (!value || *value > 0xffff) return std::nullopt;
    return static_cast<std::uint16_t>(*value);
}

AppendedRule rule_of(const DataBlock& block, const std::vector<AppendedRule>& earlier_rules) {
    for (std::size_t i = 0; i + 1 < kKeys.size(); ++i) block.require(i, kKeys[i]);  // all but the note
    AppendedRule rule;
    rule.successor = block[0];
    if (!rule.successor.starts_with("_Z")) block.problem("successor must be a mangled C++ name (_Z...)");
    auto parameter = number(block[1]);
    if (!parameter || *parameter == 0 || *parameter > 64) block.problem("parameter must be a position from 1");
    rule.parameter = static_cast<std::size_t>(*parameter);
    auto value = register_value(block[2]);
    if (!value) block.problem("value must be 0..65535, true, false or null");
    rule.value = *value;
    rule.spelling = block[2];
    rule.why = block[3];
    rule.source = block[4];
    rule.note = block[5];
    for (const auto& earlier : earlier_rules)
        if (earlier.successor == rule.successor && earlier.parameter == rule.parameter)
            block.problem("a second rule for parameter " + block[1] + " of " + rule.successor);
    return rule;
}

}  // namespace

std::vector<AppendedRule> parse_appended_rules(std::string_view text, const std::string& origin) {
    std::vector<AppendedRule> rules;
    for_each_block(text, origin, kKeys, [&](const DataBlock& block) { rules.push_back(rule_of(block, rules)); });
    return rules;
}

const std::vector<AppendedRule>& appended_rules() {
    static const std::vector<AppendedRule> rules =
        parse_appended_rules(std::string_view(wheelfix_torch_appended, wheelfix_torch_appended_size), "torch_appended.txt");
    return rules;
}

const AppendedRule* appended_rule(std::string_view successor, std::size_t parameter) {
    for (const auto& rule : appended_rules())
        if (rule.successor == successor && rule.parameter == parameter) return &rule;
    return nullptr;
}

}  // namespace wheelfix::abi
