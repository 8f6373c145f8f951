// Colour decisions and the --json listing (style.hpp has the contract).
#include "style.hpp"

#include <fmt/format.h>
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

Palette palette(const GlobalOptions& global, Stream stream) { return Palette(use_colour(global, stream)); }

analysis::Detail detail(const GlobalOptions& global) {
    if (global.verbose) return analysis::Detail::verbose;
    return global.quiet ? analysis::Detail::quiet : analysis::Detail::normal;
}

void begin_listing(JsonWriter& json, std::string_view schema, std::string_view key) {
    json.begin_object().field("schema", schema).key(key).begin_array();
}

void print_listing(JsonWriter& json) {
    json.end_array().end_object();
    fmt::print("{}", json.str());
}

}  // namespace wheelfix::cli
