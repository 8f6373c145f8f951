// The writers' records (repair/variant.hpp's VariantOutcome, ...) as text for people;
// their JSON documents are report_json.hpp's. One module per output format of one
// record: this is the text.
//
// Contract: pure functions, the same record giving the same lines; nothing is
// decided or printed here.
#pragma once

#include "wheelfix/repair/variant.hpp"

#include <string>
#include <vector>

namespace wheelfix::repair {

// The variant a writer (repair, retag, shim) labelled its output as: "variant 'L'
// (variant.json schema S)" and a line per property, indented.
std::vector<std::string> variant_lines(const VariantOutcome& variant);

}  // namespace wheelfix::repair
