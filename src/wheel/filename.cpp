// Wheel file names: {distribution}-{version}(-{build})?-{python}-{abi}-{platform}(-{label})?.whl
//
// The name is split on '-' (escaping guarantees no part contains one), each part is
// checked against the characters the spec allows, the version must be PEP 440, a
// build tag must start with a digit, and the three tag parts are split on '.'
// into their compressed components. Any other shape is an InputError naming the file.
#include "wheelfix/wheel/filename.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/wheel/version.hpp"
#include "wheelfix/util/text.hpp"

#include <algorithm>
#include <cctype>
#include <span>

namespace wheelfix::wheel {

namespace {

bool is_ascii_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_run_character(char c) { return c == '-' || c == '_' || c == '.'; }

bool only(std::string_view text, bool (*allowed)(char)) {
    return !text.empty() && std::all_of(text.begin(), text.end(), allowed);
}

bool name_char(char c) { return is_ascii_alnum(c) || c == '_' || c == '.'; }  // distribution names, build tags
bool tag_char(char c) { return is_ascii_alnum(c) || c == '_'; }

// Collapses runs of -_. into `replacement`, optionally lowercasing.
std::string collapse_runs(std::string_view name, char replacement, bool lowercase) {
    std::string out;
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (is_run_character(name[i])) {
            if (i == 0 || !is_run_character(name[i - 1])) out += replacement;
            continue;
        }
        out += lowercase ? static_cast<char>(std::tolower(static_cast<unsigned char>(name[i]))) : name[i];
    }
    return out;
}

std::vector<std::string> expand_tag_set(std::string_view filename, std::string_view what, std::string_view part) {
    std::vector<std::string> tags;
    for (auto tag : split(part, '.')) {
        if (!only(tag, tag_char))
            throw InputError(std::string(filename), "invalid " + std::string(what) + " tag '" + std::string(part) + "'");
        tags.emplace_back(tag);
    }
    return tags;
}

}  // namespace

std::vector<std::string> WheelFilename::tags() const {
    std::vector<std::string> out;
    for (const auto& python : python_tags)
        for (const auto& abi : abi_tags)
            for (const auto& platform : platform_tags) out.push_back(python + "-" + abi + "-" + platform);
    return out;
}

WheelFilename parse_filename(std::string_view filename) {
    auto fail = [&](const std::string& problem) -> InputError { return InputError(std::string(filename), problem); };
    constexpr std::string_view kSuffix = ".whl";
    if (filename.size() <= kSuffix.size() || filename.substr(filename.size() - kSuffix.size()) != kSuffix)
        throw fail("not a wheel file name (must end in .whl)");
    auto parts = split(filename.substr(0, filename.size() - kSuffix.size()), '-');
    if (parts.size() < 5 || parts.size() > 7)
        throw fail("wheel file name must be name-version[-build]-python-abi-platform[-label].whl, found " +
                   std::to_string(parts.size()) + " '-'-separated parts");
    // Six parts: a build tag starts with a digit, a python tag never does.
    const bool has_build = parts.size() == 7 || (parts.size() == 6 && !parts[2].empty() && parts[2][0] >= '0' &&
                                                 parts[2][0] <= '9');
    const bool has_label = parts.size() == 7 || (parts.size() == 6 && !has_build);

    WheelFilename name;
    name.distribution = parts[0];
    name.version = parts[1];
    if (!only(name.distribution, name_char))
        throw fail("invalid distribution name '" + name.distribution + "' in file name");
    if (!Version::try_parse(name.version)) throw fail("invalid PEP 440 version '" + name.version + "' in file name");
    if (has_label) {
        name.variant_label = parts.back();
        parts.pop_back();
        if (!valid_variant_label(name.variant_label))
            throw fail("invalid variant label '" + name.variant_label + "' (must match ^[0-9a-z_.]{1,16}$)");
    }
    if (has_build) {
        name.build = parts[2];
        if (!only(name.build, name_char) || !(name.build[0] >= '0' && name.build[0] <= '9'))
            throw fail("invalid build tag '" + name.build + "' (must start with a digit)");
    }
    auto tag_parts = std::span(parts).last(3);
    name.python_tags = expand_tag_set(filename, "python", tag_parts[0]);
    // Python tags start with a letter (py3, cp310, pp39): what tells a build tag from
    // a variant label above.
    for (const auto& tag : name.python_tags)
        if (!(std::isalpha(static_cast<unsigned char>(tag[0]))))
            throw fail("invalid python tag '" + std::string(tag_parts[0]) + "'");
    name.abi_tags = expand_tag_set(filename, "abi", tag_parts[1]);
    name.platform_tags = expand_tag_set(filename, "platform", tag_parts[2]);
    return name;
}

std::string format_filename(const WheelFilename& name) {
    std::string out = escape_distribution(name.distribution) + "-" + name.version;
    if (!name.build.empty()) out += "-" + name.build;
    out += "-" + join(name.python_tags, ".") + "-" + join(name.abi_tags, ".") + "-" + join(name.platform_tags, ".");
    if (!name.variant_label.empty()) out += "-" + name.variant_label;
    return out + ".whl";
}

bool valid_variant_label(std::string_view label) {
    return !label.empty() && label.size() <= kVariantLabelMax &&
           std::all_of(label.begin(), label.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_' || c == '.';
           });
}

std::string with_variant_label(std::string_view filename, const std::string& label) {
    WheelFilename name = parse_filename(filename);
    name.variant_label = label;
    return format_filename(name);
}

std::string escape_distribution(std::string_view name) { return collapse_runs(name, '_', false); }

std::string normalize_project_name(std::string_view name) { return collapse_runs(name, '-', true); }

}  // namespace wheelfix::wheel
