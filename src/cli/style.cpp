// Colour decisions and SGR wrapping (style.hpp has the contract).
#include "style.hpp"

#include <unistd.h>

#include <cstdlib>

namespace wheelfix::cli {

namespace {

bool no_color_requested() {
    const char* value = std::getenv("NO_COLOR");
    return value != nullptr && *value != '\0';
}

}  // namespace

bool use_colour(const GlobalOptions& global, Stream stream) {
    if (global.json || global.color == "never") return false;
    if (global.color == "always") return true;
    return ::isatty(stream == Stream::out ? STDOUT_FILENO : STDERR_FILENO) == 1 && !no_color_requested();
}

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
std::string Palette::faint(std::string_view text) const { return wrap("2", text); }

Palette palette(const GlobalOptions& global, Stream stream) { return Palette(use_colour(global, stream)); }

}  // namespace wheelfix::cli
