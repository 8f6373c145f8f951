// Library classes (policy/library_classes.hpp): the data file parsed once, names
// matched with fnmatch(3).
#include "wheelfix/policy/library_classes.hpp"

#include "data_lines.hpp"
#include "wheelfix/policy/manylinux.hpp"
#include "wheelfix/util/error.hpp"

#include <fnmatch.h>

extern const char wheelfix_library_classes[];
extern const unsigned long wheelfix_library_classes_size;

namespace wheelfix::policy {

namespace {

bool glob_matches(const std::string& glob, std::string_view name) {
    return ::fnmatch(glob.c_str(), std::string(name).c_str(), 0) == 0;
}

LibraryClassRule parse_rule(const DataLine& line, const std::string& source) {
    auto problem = [&](const std::string& text) {
        return InputError(source + ":" + std::to_string(line.number), text);
    };
    const auto& f = line.fields;
    LibraryClassRule rule;
    const std::string& kind = f[0];
    if (f.size() < 2) throw problem("'" + kind + "' needs a glob");
    rule.glob = f[1];
    if (kind == "system") {
        if (f.size() != 3) throw problem("system GLOB TAG: the oldest tag allowing it");
        rule.named = NamedClass::system;
        rule.since_tag = f[2];
        if (rule.since_tag.starts_with("musllinux_")) rule.musl = true;
        else if (!rule.since_tag.starts_with("manylinux_")) throw problem("system: '" + f[2] + "' is no manylinux_X_Y or musllinux_X_Y tag");
    } else if (kind == "driver") {
        if (f.size() != 2) throw problem("driver GLOB takes no more fields");
        rule.named = NamedClass::driver;
    } else if (kind == "python") {
        if (f.size() != 2) throw problem("python GLOB takes no more fields");
        rule.named = NamedClass::python;
    } else if (kind == "torch") {
        if (f.size() != 3) throw problem("torch GLOB DISTRIBUTION");
        rule.named = NamedClass::torch;
        rule.distribution = f[2];
    } else if (kind == "nvidia") {
        if (f.size() != 4) throw problem("nvidia GLOB CU12-DISTRIBUTION CU13-DISTRIBUTION");
        rule.named = NamedClass::nvidia;
        rule.distribution = f[2] == "-" ? "" : f[2];
        rule.distribution_cuda13 = f[3] == "-" ? "" : f[3];
    } else {
        throw problem("unknown class '" + kind + "' (system, driver, python, torch, nvidia)");
    }
    return rule;
}

}  // namespace

LibraryClasses parse_library_classes(std::string_view text, const std::string& source) {
    LibraryClasses classes;
    for_each_data_line(text, [&](const DataLine& line) { classes.rules.push_back(parse_rule(line, source)); });
    return classes;
}

const LibraryClasses& library_classes() {
    static const LibraryClasses classes = parse_library_classes(
        std::string_view(wheelfix_library_classes, wheelfix_library_classes_size), "library-classes (built in)");
    return classes;
}

NameClass classify_name(const LibraryClasses& classes, std::string_view soname, bool musl) {
    for (NamedClass named : {NamedClass::system, NamedClass::driver, NamedClass::python, NamedClass::torch, NamedClass::nvidia})
        for (const auto& rule : classes.rules) {
            if (rule.named != named) continue;
            if (named == NamedClass::system && rule.musl != musl) continue;
            if (glob_matches(rule.glob, soname)) return {named, &rule};
        }
    return {};
}

std::string distribution(const LibraryClassRule& rule, std::optional<int> cuda_major) {
    if (rule.named == NamedClass::nvidia && cuda_major.value_or(12) >= 13) return rule.distribution_cuda13;
    return rule.distribution;
}

std::string tag_allowing(std::string tag, const std::vector<std::string>& names, std::string_view arch, bool musl) {
    const std::string suffix = "_" + std::string(arch);
    for (const auto& name : names) {
        auto named = classify_name(library_classes(), name, musl);
        if (named.named != NamedClass::system || tag.empty()) continue;
        auto need = parse_platform_tag(named.rule->since_tag + suffix);
        auto have = parse_platform_tag(tag + suffix);
        if (need.kind == have.kind && std::pair(need.major, need.minor) > std::pair(have.major, have.minor))
            tag = named.rule->since_tag;
    }
    return tag;
}

bool matches_soname_glob(const std::vector<std::string>& globs, std::string_view soname) {
    for (const auto& glob : globs)
        if (glob_matches(glob, soname)) return true;
    return false;
}

}  // namespace wheelfix::policy
