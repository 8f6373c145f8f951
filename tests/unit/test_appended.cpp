// Unit tests: the appended-parameter rules (abi/appended.hpp). Every embedded rule
// parses and names a parameter its successor really appends to a known drift's or
// a torch function's older form; the rules the issue is about say what they must
// (MessageLogger's exit_on_fatal is true); malformed rule text is refused naming
// the line.
#include "wheelfix/abi/appended.hpp"
#include "wheelfix/abi/signature.hpp"
#include "wheelfix/util/error.hpp"

#include <doctest/doctest.h>

using namespace wheelfix;

TEST_CASE("appended rules: every embedded rule names an appended parameter of its successor") {
    const auto& rules = abi::appended_rules();
    REQUIRE(rules.size() >= 4);
    for (const auto& rule : rules) {
        INFO(rule.successor);
        auto signature = abi::parse_signature(rule.successor);
        REQUIRE(signature.has_value());
        CHECK(rule.parameter >= 1);
        CHECK(rule.parameter <= signature->params.size());
        const auto klass = signature->params[rule.parameter - 1].klass;
        CHECK((klass == abi::ParamClass::boolean || klass == abi::ParamClass::integer || klass == abi::ParamClass::pointer));
        CHECK_FALSE(rule.why.empty());
        CHECK_FALSE(rule.source.empty());
    }
}

TEST_CASE("appended rules: MessageLogger's exit_on_fatal is true, SetDevice's force is false") {
    for (const char* constructor : {"_ZN3c1013MessageLoggerC1EPKciib", "_ZN3c1013MessageLoggerC2EPKciib"}) {
        const auto* rule = abi::appended_rule(constructor, 4);
        REQUIRE(rule != nullptr);
        CHECK(rule->value == 1);
        CHECK(rule->spelling == "true");
    }
    const auto* force = abi::appended_rule("_ZN3c104cuda9SetDeviceEab", 2);
    REQUIRE(force != nullptr);
    CHECK(force->value == 0);
    CHECK(abi::appended_rule("_ZN3c104cuda9SetDeviceEab", 1) == nullptr);  // not appended: no rule
    CHECK(abi::appended_rule("_ZN3c104cuda21wheelfix_fixture_growEib", 2) == nullptr);
}

TEST_CASE("appended rules: malformed text is refused with its line") {
    auto refused = [](const std::string& text) {
        try {
            abi::parse_appended_rules(text, "rules.txt");
        } catch (const InputError& error) {
            return std::string(error.what());
        }
        return std::string();
    };
    const std::string good = "successor: _Z1fib\nparameter: 2\nvalue: true\nwhy: w\nsource: s\n";
    CHECK(abi::parse_appended_rules(good, "rules.txt").size() == 1);
    CHECK(refused("successor: _Z1fib\nparameter: 2\nvalue: true\nwhy: w\n").find("lacks 'source'") != std::string::npos);
    CHECK(refused("successor: f\nparameter: 2\nvalue: 1\nwhy: w\nsource: s\n").find("mangled") != std::string::npos);
    CHECK(refused("successor: _Z1fib\nparameter: 0\nvalue: 1\nwhy: w\nsource: s\n").find("position") != std::string::npos);
    CHECK(refused("successor: _Z1fib\nparameter: 2\nvalue: 70000\nwhy: w\nsource: s\n").find("0..65535") != std::string::npos);
    CHECK(refused("successor: _Z1fib\nparameter: 2\nvalue: maybe\nwhy: w\nsource: s\n").find("line 5") != std::string::npos);
    CHECK(refused(good + "\n" + good).find("a second rule") != std::string::npos);
    CHECK(refused("colour: red\n").find("unknown key") != std::string::npos);
}
