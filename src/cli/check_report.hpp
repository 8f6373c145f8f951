// `wheelfix check`'s report: per torch, the members' resolution and the misses
// grouped across members, and its two renderings (text for people, JSON with
// schema "wheelfix.check/1").
//
// Contract: build_torch_result() groups the ElfChecks of one torch: unresolved
// symbols by (name, version) with the members needing each, sorted by demangled
// name; missing libraries by name. A torch "loads" when nothing is missing.
// render_check_text() prints, per torch, a table of the members' counts (all with
// -v, the ones with misses otherwise, none with -q), each miss with the members needing it and its near
// misses with their classification (and the known drift when the knowledge base
// has one), then the matrix "loads against: 2.9.0+cu130 yes, 2.10.0+cu130 NO (1 missing)".
// matrix_text() is that last line alone (retag --torch auto prints it).
// write_check_json() writes the same content; keys are only ever added within
// schema version 1.
#pragma once

#include "commands.hpp"
#include "style.hpp"

#include "wheelfix/abi/check.hpp"
#include "wheelfix/util/json.hpp"

#include <functional>

#include <string>
#include <vector>

namespace wheelfix::cli {

struct GroupedSymbol {
    abi::Unresolved symbol;
    std::vector<std::string> needed_by;
};

struct GroupedLibrary {
    std::string name;
    std::vector<std::string> needed_by;
};

struct TorchResult {
    std::string source;
    std::string label;  // torch version, else the source
    std::string torch_version;
    std::string cuda_version;
    std::vector<abi::ElfCheck> members;
    std::vector<GroupedSymbol> unresolved;
    std::vector<GroupedLibrary> missing_libraries;

    std::size_t missing() const { return unresolved.size() + missing_libraries.size(); }
    bool loads() const { return missing() == 0; }
};

struct CheckReport {
    std::string input;
    std::vector<TorchResult> torches;

    bool loads_everywhere() const;
};

TorchResult build_torch_result(const abi::SymbolIndex& index, std::vector<abi::ElfCheck> members);
std::string render_check_text(const CheckReport& report, const GlobalOptions& global);
std::string matrix_text(const CheckReport& report, const Palette& colour = Palette(false));
// `extra` writes further keys of the document (the release matrix).
std::string write_check_json(const CheckReport& report, const std::function<void(JsonWriter&)>& extra = {});

}  // namespace wheelfix::cli
