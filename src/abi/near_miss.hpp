// Near misses: what an index exports under the same qualified function name as an
// unresolved symbol (private to src/abi; check.hpp has the contract).
//
// Contract: near_misses(mangled, version, index) returns every export of `index`
// whose parse_signature() qualified name equals the symbol's and whose mangled
// name differs, classified by classify(symbol, export), plus exports with the very
// name under another version; forwardable ones first, then fewer appended
// parameters, then by library and name. Candidates are found by the mangled
// source name of the function's last name component ("29c10_cuda_check_implementation"),
// so only those are parsed; operators have no such token and get no near misses.
#pragma once

#include "wheelfix/abi/check.hpp"

#include <optional>
#include <string>
#include <vector>

namespace wheelfix::abi::detail {

// The candidate token of a symbol's signature ("29c10_cuda_check_implementation"): an
// export can be a near miss only when its mangled name holds it; nullopt when the last
// component is no identifier (operators), and then there are no near misses.
std::optional<std::string> candidate_token(const Signature& wanted);

std::vector<NearMiss> near_misses(const std::string& mangled, const std::string& version, const SymbolIndex& index,
                                  SignatureMemo& memo);

// The last component of a qualified name without template arguments:
// "at::Tensor::item<float>" -> "item", "c10::Scalar::~Scalar" -> "Scalar".
std::string last_component(std::string_view qualified_name);

}  // namespace wheelfix::abi::detail
