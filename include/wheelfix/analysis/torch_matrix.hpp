// Which torch releases a wheel loads against: the releases asked for
// (`--torch-release`), the matrix of per-member verdicts, and the torch
// requirement `--torch auto` derives from it.
//
// Contract:
// - select_releases(available, spec, arch): spec is "all", a PEP 440 specifier set
//   (">=2.6", ">=2.6,<2.10", "==2.9.*") matched against each release's public
//   version, or a comma-separated list of versions ("2.9.1,2.10.0"; "2.9" names
//   every 2.9.x the atlas holds). Only releases of `arch` are kept (all when it is
//   empty). An empty selection, or a listed version the atlas lacks, is an
//   InputError naming --torch-release and what the atlas has.
// - build_matrix(): rows are the members, columns the releases in the order
//   given; a cell is `ok`, `NO` with the count of what is missing, the first
//   missing symbol (demangled; else the first missing library) and its best near
//   miss, or `not covered` when a NEEDED library is one the atlas does not cover
//   (and nothing is missing). A column's verdict is the worst of its cells (NO
//   before not covered). cuda_note says when the wheel's +cuXYZ differs from the
//   CUDA build the column's entry was indexed from.
// - requirement_from(matrix, open_upper): the newest contiguous run of columns
//   that load (columns in release order); lower bound its first release; upper
//   bound the first release after it (a proven failure or a not-covered release),
//   or, when the run reaches the newest column, the next minor of that release
//   (`later_unproven`), or none at all with `open_upper` (stable C ABI wheels).
//   `contiguous` is false when another run loads too (older releases that load,
//   separated by one that does not). specifier is "torch>=2.9.0,<2.10" style.
// - stable_abi_use(imports): how the extensions use torch's stable C ABI: the
//   unmangled `aoti_torch_*` / `torch_*` C functions imported (stable) against
//   the mangled C++ symbols of torch's namespaces (cpp); `stable_only` when only
//   the first.
#pragma once

#include "wheelfix/abi/atlas.hpp"
#include "wheelfix/abi/check.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::analysis {

std::vector<abi::AtlasRelease> select_releases(const std::vector<abi::AtlasRelease>& available, std::string_view spec,
                                               std::string_view arch);

enum class Verdict { ok, no, not_covered };
std::string_view verdict_name(Verdict verdict);  // "ok", "NO", "not covered"

struct MatrixCell {
    Verdict verdict = Verdict::ok;
    std::size_t missing = 0;
    std::string first_missing;  // demangled symbol, or a library name
    std::string near_miss;      // demangled; empty when none
    std::vector<std::string> not_covered;
};

struct MatrixColumn {
    std::string torch_version;  // "2.9.1+cu128"
    std::string cuda_version;   // "12.8"
    std::string arch;
    std::string python_tag;     // the libtorch_python used; empty: the release's primary
    std::string source;         // the wheel the column was indexed from
    std::string cuda_note;      // empty when the wheel's CUDA matches or is unknown
};

struct TorchMatrix {
    std::vector<std::string> members;
    std::vector<MatrixColumn> columns;
    std::vector<std::vector<MatrixCell>> cells;  // [member][column]

    Verdict column_verdict(std::size_t column) const;
    bool loads_everywhere() const;
};

MatrixCell cell_of(const abi::ElfCheck& check);
// checks[column][member], the members in the same order in every column.
TorchMatrix build_matrix(std::vector<MatrixColumn> columns, const std::vector<std::vector<abi::ElfCheck>>& checks);
// "wheel is +cu130, atlas entry cu128 (same C++ ABI within a release)" or "".
std::string cuda_note(std::string_view wheel_local_cuda, std::string_view column_cuda_version);

struct TorchRequirement {
    bool any = false;            // some column loads
    std::string lowest;          // "2.9.0"
    std::string highest;         // newest release of the run
    std::size_t highest_column = 0;  // its column in the matrix
    std::string upper;           // "2.10": the bound written; empty: open
    bool later_unproven = false; // the run reaches the newest release asked
    bool contiguous = true;
    std::string specifier;       // "torch>=2.9.0,<2.10"
};
TorchRequirement requirement_from(const TorchMatrix& matrix, bool open_upper);

struct StableAbiUse {
    std::vector<std::string> stable;  // unmangled stable C functions imported
    std::vector<std::string> cpp;     // mangled torch C++ symbols imported
    bool uses_stable() const { return !stable.empty(); }
    bool stable_only() const { return !stable.empty() && cpp.empty(); }
};
StableAbiUse stable_abi_use(const std::vector<const abi::ElfImports*>& imports);
bool is_stable_abi_symbol(std::string_view name);

// inspect's torch range: the releases of `atlas` for `arch` against which every torch
// reference of the members (NEEDED and torch symbol names) is defined in the NEEDED
// closure, found by name alone (no near misses, nothing materialised: a few ms), and
// the requirement that gives. Members without torch references are left out; no member
// with any gives an empty matrix.
struct TorchRangeInput {
    std::string member;
    std::vector<std::string> needed;
    std::vector<std::string> torch_symbols;  // mangled C++ and stable C names
};
TorchMatrix quick_matrix(const abi::Atlas& atlas, const std::vector<TorchRangeInput>& members, std::string_view arch,
                         std::string_view python_tag);

}  // namespace wheelfix::analysis
