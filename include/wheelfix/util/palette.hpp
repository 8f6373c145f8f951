// Colour for text meant for people: SGR sequences around the words that fail, pass
// or head a block.
//
// Contract: a Palette wraps text in SGR sequences when enabled and returns it
// unchanged otherwise (and an empty text unchanged either way), so renderers call it
// unconditionally; the table renderer (table.hpp) measures coloured cells by their
// visible width. Whether to enable it (--color, NO_COLOR, a terminal) is the CLI's
// choice (cli/style.hpp), never a renderer's.
#pragma once

#include <string>
#include <string_view>

namespace wheelfix {

class Palette {
public:
    explicit Palette(bool enabled) : enabled_(enabled) {}

    bool enabled() const { return enabled_; }
    std::string bad(std::string_view text) const;     // bold red: what fails (NO, UNRESOLVED, LIES)
    std::string good(std::string_view text) const;    // green: what passes (yes, OK)
    std::string warn(std::string_view text) const;    // yellow: works, with a caveat (stub, weak)
    std::string strong(std::string_view text) const;  // bold: headings, file names

private:
    std::string wrap(std::string_view code, std::string_view text) const;
    bool enabled_;
};

}  // namespace wheelfix
