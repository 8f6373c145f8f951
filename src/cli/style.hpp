// Colour for the text output, and whether to use it.
//
// Contract: use_colour(global, stream) is false with --json (and inspect's
// --format json/markdown, which never ask) and with --color never; true with
// --color always (stronger than NO_COLOR: an explicit request for this run);
// with --color auto (the default) true only when the stream is a terminal and
// NO_COLOR is unset or empty (https://no-color.org: any non-empty value turns
// colour off). A Palette wraps text in SGR sequences when enabled and returns it
// unchanged otherwise, so renderers call it unconditionally; the table renderer
// (util/table.hpp) measures coloured cells by their visible width.
#pragma once

#include "commands.hpp"

#include <string>
#include <string_view>

namespace wheelfix::cli {

enum class Stream { out, err };

bool use_colour(const GlobalOptions& global, Stream stream);

class Palette {
public:
    explicit Palette(bool enabled) : enabled_(enabled) {}

    bool enabled() const { return enabled_; }
    std::string bad(std::string_view text) const;     // bold red: what fails (NO, UNRESOLVED, LIES)
    std::string good(std::string_view text) const;    // green: what passes (yes, OK)
    std::string warn(std::string_view text) const;    // yellow: works, with a caveat (stub, weak)
    std::string strong(std::string_view text) const;  // bold: headings, file names
    std::string faint(std::string_view text) const;   // dim: secondary detail

private:
    std::string wrap(std::string_view code, std::string_view text) const;
    bool enabled_;
};

Palette palette(const GlobalOptions& global, Stream stream = Stream::out);

}  // namespace wheelfix::cli
