// SGR wrapping (palette.hpp has the contract).
#include "wheelfix/util/palette.hpp"

namespace wheelfix {

std::string Palette::wrap(std::string_view code, std::string_view text) const {
    if (!enabled_ || text.empty()) return std::string(text);
    std::string out = "\x1b[";
    out.append(code).append("m").append(text).append("\x1b[0m");
    return out;
}

std::string Palette::bad(std::string_view text) const { return wrap("1;31", text); }
std::string Palette::good(std::string_view text) const { return wrap("32", text); }
std::string Palette::warn(std::string_view text) const { return wrap("33", text); }
std::string Palette::strong(std::string_view text) const { return wrap("1", text); }

}  // namespace wheelfix
