// The check pipeline: will a wheel's extensions load against each torch? What
// `check` runs and `retag --torch auto` reuses; the commands only render it.
//
// Contract:
// - Targets: the extensions of a wheel (or one ELF file), each reduced to its
//   imports (abi::ElfImports) and what ld.so searches with (elf_report.hpp
//   analyze_search; torch_releases.hpp judges what its own search path reaches),
//   and the input's own libraries as a search scope. A member is kept when it is
//   named like a shared library, is ELF and has a dynamic section; an invalid ELF is
//   an InputError naming wheel and member. read_targets() reads a wheel's library
//   members only as far as their loader views need (wheel/member_reader.hpp; on the
//   threads the budget spares, the targets and any error the serial ones), or one
//   ELF file, and refuses an input with nothing to check unless refuse_empty is
//   false (check of several inputs: a pure-python wheel in dist/ is not an error).
//   needed_roots() names what the targets need, for abi::IndexOptions::roots.
// - load_torch(path, options, stats) loads one `--torch PATH`: a torch directory,
//   a torch wheel (stats, when given, says what was inflated and kept) or an index
//   file (abi/symbol_index.hpp).
// - check_against() resolves every target against one torch (abi/check.hpp), the
//   wheel's own libraries in scope, and groups the result:
//   unresolved symbols by (name, version) with the members needing each, sorted by
//   demangled name; missing libraries by name. A torch "loads" when nothing is
//   missing. A memo (abi::SignatureMemo) kept across the torches one wheel is
//   checked against parses each name once.
// - TorchLoader reads one torch path (the caller's, so it can report what it read).
#pragma once

#include "wheelfix/abi/check.hpp"
#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/analysis/elf_report.hpp"
#include "wheelfix/wheel/version.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <utility>

namespace wheelfix::analysis {

struct Target {
    std::string member;
    abi::ElfImports imports;
    ElfReport linkage;  // how ld.so searches for its NEEDED (analyze_search): RPATH, RUNPATH, class
};

struct Targets {
    std::vector<Target> elves;
    abi::SymbolIndex bundled;  // the input's own libraries
};

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
    // NEEDED libraries the torch's index does not cover (abi::SymbolIndex::not_covered,
    // partial): nothing is known of them, so the torch does not "load", nor is anything missing.
    std::vector<GroupedLibrary> not_covered;
    bool partial = false;  // an index file: what it lacks is "the index is partial", not "missing"
    // Why nothing is known of a not-covered library: "the index is partial: no libX" for an
    // index file (a selection of a torch's libraries), else "the index does not cover it".
    std::string uncovered_reason(const std::string& library) const;
    // What the install lacks beside the symbols ("member: needs nvidia-cuda-runtime-cu12 beside
    // torch (…)"), judged against an atlas release (torch_releases.hpp); empty otherwise.
    std::vector<std::string> install_notes;
    // Why the torch verdict does not admit this release although the above hold (an atlas
    // release a C++-ABI extension was not built for: torch_verdict.hpp why_not_admitted).
    std::string not_admitted;

    std::size_t missing() const { return unresolved.size() + missing_libraries.size(); }
    // Every symbol resolves, the install brings what the members need and the verdict
    // admits the release: not a load test.
    bool loads() const { return missing() == 0 && install_notes.empty() && not_covered.empty() &&
                                  not_admitted.empty(); }
};

struct CheckReport {
    std::string input;
    std::vector<TorchResult> torches;

    bool loads_everywhere() const;
    // The torches, in order, as runs that miss the same symbols (name and version) and
    // libraries and are not admitted for the same reason: {first, last} index of each run.
    std::vector<std::pair<std::size_t, std::size_t>> same_miss_runs() const;
    // The label of the first torch after torches[from] that does not miss `symbol`
    // (by name): where a missing symbol first resolves; "" when no later one does.
    std::string first_resolving(std::size_t from, const std::string& symbol) const;
};

Targets read_targets(const std::string& path, bool refuse_empty = true);
std::vector<std::string> needed_roots(const Targets& targets);
std::vector<std::string> needed_roots(const std::vector<Targets>& inputs);  // of all, sorted, once each

abi::SymbolIndex load_torch(const std::string& path, const abi::IndexOptions& options,
                            abi::WheelReadStats* stats = nullptr);

TorchResult check_against(const Targets& targets, const abi::SymbolIndex& index, abi::SignatureMemo* memo = nullptr);

using TorchLoader = std::function<abi::SymbolIndex(const std::string& path, const abi::IndexOptions& options)>;

}  // namespace wheelfix::analysis
