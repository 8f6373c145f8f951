// The appended-parameter rules: the "key: value" block format of
// src/abi/data/torch_appended.txt (appended.hpp has the contract).
#include "wheelfix/abi/appended.hpp"

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

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
    return text;
}

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

class RuleParser {
public:
    RuleParser(std::string_view text, const std::string& origin) : text_(text), origin_(origin) {}

    std::vector<AppendedRule> run() {
        while (!text_.empty()) {
            const std::size_t end = text_.find('\n');
            const std::string_view line = trim(text_.substr(0, end));
            text_.remove_prefix(end == std::string_view::npos ? text_.size() : end + 1);
            ++line_number_;
            if (line.starts_with("#")) continue;
            if (line.empty()) close_block();
            else add_field(line);
        }
        close_block();
        return std::move(rules_);
    }

private:
    [[noreturn]] void problem(const std::string& what) const {
        throw InputError(origin_, "line " + std::to_string(line_number_) + ": " + what);
    }

    void add_field(std::string_view line) {
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) problem("expected 'key: value'");
        const std::string_view key = trim(line.substr(0, colon));
        const std::string_view value = trim(line.substr(colon + 1));
        std::size_t index = 0;
        while (index < kKeys.size() && kKeys[index] != key) ++index;
        if (index == kKeys.size()) problem("unknown key '" + std::string(key) + "'");
        if (!fields_[index].empty()) problem("'" + std::string(key) + "' given twice in one entry");
        if (value.empty()) problem("empty '" + std::string(key) + "'");
        fields_[index] = std::string(value);
    }

    void close_block() {
        if (std::all_of(fields_.begin(), fields_.end(), [](const std::string& field) { return field.empty(); })) return;
        for (std::size_t i = 0; i + 1 < kKeys.size(); ++i)
            if (fields_[i].empty()) problem("entry ending here lacks '" + std::string(kKeys[i]) + "'");
        AppendedRule rule;
        rule.successor = fields_[0];
        if (!rule.successor.starts_with("_Z")) problem("successor must be a mangled C++ name (_Z...)");
        auto parameter = number(fields_[1]);
        if (!parameter || *parameter == 0 || *parameter > 64) problem("parameter must be a position from 1");
        rule.parameter = static_cast<std::size_t>(*parameter);
        auto value = register_value(fields_[2]);
        if (!value) problem("value must be 0..65535, true, false or null");
        rule.value = *value;
        rule.spelling = fields_[2];
        rule.why = fields_[3];
        rule.source = fields_[4];
        rule.note = fields_[5];
        for (const auto& earlier : rules_)
            if (earlier.successor == rule.successor && earlier.parameter == rule.parameter)
                problem("a second rule for parameter " + fields_[1] + " of " + rule.successor);
        rules_.push_back(std::move(rule));
        fields_ = {};
    }

    std::string_view text_;
    const std::string& origin_;
    std::size_t line_number_ = 0;
    std::array<std::string, kKeys.size()> fields_;
    std::vector<AppendedRule> rules_;
};

}  // namespace

std::vector<AppendedRule> parse_appended_rules(std::string_view text, const std::string& origin) {
    return RuleParser(text, origin).run();
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
