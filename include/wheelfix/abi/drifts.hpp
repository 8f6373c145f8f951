// Known torch ABI drifts: which symbol a newer torch exports in place of one that
// extensions built against an older torch import, with where that is documented.
//
// Contract: known_drifts() parses src/abi/data/torch_drifts.txt, embedded into the
// binary at build time (cmake wheelfix_embed), once: abi/data_blocks.hpp's blocks
// (the file's top documents them), required keys symbol, successor, since, source.
// parse_drifts() reads that format from any text, throwing data_blocks' errors and
// InputError(origin, "line N: …") for a symbol that is not a mangled C++ name (_Z…).
// drifts_for(symbol) lists the embedded entries for one mangled symbol, in file
// order; known_drift(symbol, successor) is the first naming that successor, or nullptr.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::abi {

struct Drift {
    std::string symbol;     // mangled, as older builds import it
    std::string successor;  // mangled, what the newer torch exports instead
    std::string library;    // the torch library exporting the successor
    std::string since;      // "2.10.0", "<=2.8.0" or "unreleased"
    std::string source;     // header and what changed
    std::string verified;   // which real wheels were checked
    std::string note;
};

const std::vector<Drift>& known_drifts();
std::vector<const Drift*> drifts_for(std::string_view symbol);
const Drift* known_drift(std::string_view symbol, std::string_view successor);
std::vector<Drift> parse_drifts(std::string_view text, const std::string& origin);

}  // namespace wheelfix::abi
