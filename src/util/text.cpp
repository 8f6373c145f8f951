// Text helpers (text.hpp has the contract).
#include "wheelfix/util/text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace wheelfix {

std::vector<std::string> split(std::string_view text, char separator) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find(separator, start);
        if (end == std::string_view::npos) end = text.size();
        parts.emplace_back(text.substr(start, end - start));
        start = end + 1;
    }
    return parts;
}

std::vector<std::string> split_nonempty(std::string_view text, char separator) {
    std::vector<std::string> parts = split(text, separator);
    std::erase_if(parts, [](const std::string& part) { return part.empty(); });
    return parts;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
    return fmt::format("{}", fmt::join(items, separator));
}

std::string join(const std::vector<std::uint64_t>& numbers, std::string_view separator) {
    return fmt::format("{}", fmt::join(numbers, separator));
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

std::string human_size(std::uint64_t bytes) {
    if (bytes < 1024) return fmt::format("{} B", bytes);
    if (bytes < 1024 * 1024) return fmt::format("{:.1f} KiB", bytes / 1024.0);
    if (bytes < std::uint64_t(1024) * 1024 * 1024) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024));
    return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024));
}

std::string base_name(std::string_view path) {
    const auto slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string_view trim(std::string_view text) {
    constexpr std::string_view kSpace = " \t\n\v\f\r";
    const auto first = text.find_first_not_of(kSpace);
    if (first == std::string_view::npos) return {};
    return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

std::string ascii_lower(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

bool all_digits(std::string_view text) {
    return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

std::optional<std::string_view> after_origin(std::string_view entry) {
    for (std::string_view token : {"$ORIGIN", "${ORIGIN}"})
        if (entry.starts_with(token)) return entry.substr(token.size());
    return std::nullopt;
}

}  // namespace wheelfix
