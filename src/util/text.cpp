// Text helpers (text.hpp has the contract).
#include "wheelfix/util/text.hpp"

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
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += separator;
        out += items[i];
    }
    return out;
}

}  // namespace wheelfix
