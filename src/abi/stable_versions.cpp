// torch's stable C ABI version list (stable_versions.hpp has the contract).
#include "wheelfix/abi/stable_versions.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/text.hpp"

#include <algorithm>
#include <set>

extern const char wheelfix_torch_stable_versions[];
extern const unsigned long wheelfix_torch_stable_versions_size;

namespace wheelfix::abi {

namespace {

bool is_name(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
}

// "TORCH_VERSION_2_11_0" -> "2.11.0"; empty when it is not of that form.
std::string release_of(std::string_view text) {
    constexpr std::string_view kPrefix = "TORCH_VERSION_";
    if (!text.starts_with(kPrefix)) return {};
    text.remove_prefix(kPrefix.size());
    std::string release;
    for (int part = 0; part < 3; ++part) {
        const std::size_t end = part < 2 ? text.find('_') : text.size();
        if (end == std::string_view::npos) return {};
        const std::string_view digits = text.substr(0, end);
        if (digits.empty() || digits.size() > 4 ||
            !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return {};
        release += (part ? "." : "") + std::string(digits);
        text.remove_prefix(part < 2 ? end + 1 : end);
    }
    return release;
}

}  // namespace

std::vector<StableAbiVersion> parse_stable_abi_versions(std::string_view text, const std::string& origin) {
    std::vector<StableAbiVersion> versions;
    std::set<std::string, std::less<>> seen;
    std::size_t number = 0;
    while (!text.empty()) {
        const std::size_t end = std::min(text.find('\n'), text.size());
        const std::string_view line = trim(text.substr(0, end));
        text.remove_prefix(std::min(end + 1, text.size()));
        ++number;
        if (line.empty() || line.front() == '#') continue;
        const std::size_t colon = line.find(':');
        const std::string_view name = colon == std::string_view::npos ? line : trim(line.substr(0, colon));
        const std::string release =
            colon == std::string_view::npos ? std::string() : release_of(trim(line.substr(colon + 1)));
        if (!is_name(name) || release.empty())
            throw InputError(origin, "line " + std::to_string(number) +
                                         ": expected '<name>: TORCH_VERSION_<major>_<minor>_<patch>'");
        if (!seen.insert(std::string(name)).second)
            throw InputError(origin, "line " + std::to_string(number) + ": " + std::string(name) + " given twice");
        versions.push_back({std::string(name), release});
    }
    return versions;
}

const std::vector<StableAbiVersion>& stable_abi_versions() {
    static const std::vector<StableAbiVersion> versions = parse_stable_abi_versions(
        std::string_view(wheelfix_torch_stable_versions, wheelfix_torch_stable_versions_size),
        "torch_stable_versions.txt");
    return versions;
}

std::optional<std::string> stable_abi_since(std::string_view name) {
    for (const StableAbiVersion& version : stable_abi_versions())
        if (version.name == name) return version.release;
    return std::nullopt;
}

}  // namespace wheelfix::abi
