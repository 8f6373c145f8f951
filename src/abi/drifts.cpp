// The drift knowledge base: parsing the "key: value" block format and the
// embedded src/abi/data/torch_drifts.txt (drifts.hpp has the contract).
#include "wheelfix/abi/drifts.hpp"

#include "wheelfix/abi/data_blocks.hpp"

#include "wheelfix/util/error.hpp"

#include <array>

extern const char wheelfix_torch_drifts[];
extern const unsigned long wheelfix_torch_drifts_size;

namespace wheelfix::abi {

namespace {

constexpr std::array<std::string_view, 7> kKeys{"symbol", "successor", "library", "since", "source", "verified", "note"};
constexpr std::array kRequired{0, 1, 3, 4};  // symbol, successor, since, source

Drift drift_of(const DataBlock& block) {
    for (std::size_t key : kRequired) block.require(key, kKeys[key]);
    Drift drift{block[0], block[1], block[2], block[3], block[4], block[5], block[6]};
    if (!drift.symbol.starts_with("_Z") || !drift.successor.starts_with("_Z"))
        block.problem("symbol and successor must be mangled C++ names (_Z...)");
    return drift;
}

}  // namespace

std::vector<Drift> parse_drifts(std::string_view text, const std::string& origin) {
    std::vector<Drift> drifts;
    for_each_block(text, origin, kKeys, [&](const DataBlock& block) { drifts.push_back(drift_of(block)); });
    return drifts;
}

const std::vector<Drift>& known_drifts() {
    static const std::vector<Drift> drifts =
        parse_drifts(std::string_view(wheelfix_torch_drifts, wheelfix_torch_drifts_size), "torch_drifts.txt");
    return drifts;
}

std::vector<const Drift*> drifts_for(std::string_view symbol) {
    std::vector<const Drift*> matches;
    for (const Drift& drift : known_drifts())
        if (drift.symbol == symbol) matches.push_back(&drift);
    return matches;
}

const Drift* known_drift(std::string_view symbol, std::string_view successor) {
    for (const Drift* drift : drifts_for(symbol))
        if (drift->successor == successor) return drift;
    return nullptr;
}

}  // namespace wheelfix::abi
