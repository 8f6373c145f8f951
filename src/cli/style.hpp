// How the output is presented: colour for the text, and whether to use it; the
// --json listing of a command that reports its inputs in turn.
//
// Contract: use_colour(global, stream) is false with --json (and inspect's
// --format json/markdown, which never ask) and with --color never; true with
// --color always (stronger than NO_COLOR: an explicit request for this run);
// with --color auto (the default) true only when the stream is a terminal and
// NO_COLOR is unset or empty (https://no-color.org: any non-empty value turns
// colour off). palette() is the util/palette.hpp Palette for that choice.
// begin_listing(json, schema, key) opens inspect's and verify's --json document,
// {"schema": schema, key: [, one entry per input; print_listing() closes and prints it.
#pragma once

#include "commands.hpp"

#include "wheelfix/analysis/check_text.hpp"
#include "wheelfix/util/json.hpp"
#include "wheelfix/util/palette.hpp"

#include <string_view>

namespace wheelfix::cli {

enum class Stream { out, err };

bool use_colour(const GlobalOptions& global, Stream stream);

Palette palette(const GlobalOptions& global, Stream stream = Stream::out);
// How much the text says: -v and -q (-v wins).
analysis::Detail detail(const GlobalOptions& global);

void begin_listing(JsonWriter& json, std::string_view schema, std::string_view key);
void print_listing(JsonWriter& json);

}  // namespace wheelfix::cli
