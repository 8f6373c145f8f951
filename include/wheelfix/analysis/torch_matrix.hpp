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
//   given; a cell is `ok` (every symbol resolves, the CUDA runtime and CPython
//   match), `NO` with the count of what is missing (every unresolved symbol and
//   missing library, the count every output uses), the first missing symbol
//   (demangled; else the first missing library) and its best near miss, `runtime`
//   when the symbols resolve but the install lacks what the member needs
//   (`runtime_note`: "needs nvidia-cuda-runtime-cu12 beside torch 2.11.0"), `not
//   admitted` when the symbols resolve and the install matches but the torch verdict
//   does not admit the release (both set by check_releases, torch_releases.hpp), or
//   `not covered` when a NEEDED library is one the atlas does not cover (and nothing
//   is missing). A column's verdict is the worst of its cells (NO, then runtime, then
//   not admitted, then not covered).
// - The requirement (TorchRequirement) is torch_verdict()'s (torch_verdict.hpp).
// - stable_abi_use(imports): how the extensions use torch's stable C ABI: the
//   unmangled `aoti_torch_*` / `torch_*` C functions imported (stable) against
//   the mangled C++ symbols of torch's namespaces and libtorch_python's THP*
//   functions (cpp); `stable_only` when only the first.
#pragma once

#include "wheelfix/abi/atlas.hpp"
#include "wheelfix/abi/check.hpp"
#include "wheelfix/wheel/version.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::analysis {

std::vector<abi::AtlasRelease> select_releases(const std::vector<abi::AtlasRelease>& available, std::string_view spec,
                                               std::string_view arch);

// A torch version's public part: "2.9.1+cu128" -> "2.9.1".
std::string public_version(std::string_view torch_version);

enum class Verdict { ok, no, runtime, not_admitted, not_covered };
// "ok", "NO", "runtime", "not admitted", "not covered"
std::string_view verdict_name(Verdict verdict);

struct MatrixCell {
    Verdict verdict = Verdict::ok;
    std::size_t missing = 0;
    std::string first_missing;  // demangled symbol, or a library name
    std::string near_miss;      // demangled; empty when none
    std::vector<std::string> not_covered;
    // runtime: what must be installed beside torch; not_admitted: why the verdict does not
    // admit the release although the symbols resolve (torch_verdict.hpp why_not_admitted)
    std::string runtime_note;
};

struct MatrixColumn {
    std::string torch_version;  // "2.9.1+cu128"
    std::string cuda_version;   // "12.8"
    std::string arch;
    std::string python_tag;     // the libtorch_python used; empty: the release's primary
    std::string source;         // the wheel the column was indexed from
    std::string cuda_note;      // why this build, when it is not the wheel's own (torch_releases.hpp)
    std::string build;          // "cu126", "cpu": the build the column's verdict comes from
    std::vector<std::string> builds;  // every build of the release the atlases hold
};

struct TorchMatrix {
    std::vector<std::string> members;
    std::vector<MatrixColumn> columns;
    std::vector<std::vector<MatrixCell>> cells;  // [member][column]
    // Per column, what the wheel misses: each unresolved symbol and missing library once,
    // however many members need it (TorchResult::missing(): `check --torch`'s count too).
    std::vector<std::size_t> wheel_missing;

    Verdict column_verdict(std::size_t column) const;
    // The column as one cell for the wheel: its verdict, what the wheel misses
    // (wheel_missing, else the sum of the cells'), and for a runtime column the
    // runtime a member needs (a runtime cell's first_missing).
    MatrixCell column_summary(std::size_t column) const;
    bool loads_everywhere() const;
    // Every distinct miss of the cells that are not ok, in first-seen order (members
    // in row order, then columns): the member, the cell's verdict, what it misses
    // (first_missing; the runtime note for a runtime cell), its near miss, and the
    // columns where that same miss holds, ascending.
    struct Miss {
        std::string member;
        Verdict verdict = Verdict::ok;
        std::string what;
        std::string near_miss;
        std::vector<std::size_t> columns;
    };
    std::vector<Miss> misses() const;
};

// Ascending column indexes as runs of adjacent ones: {first, last} each ({0,1,2,5} ->
// {0,2}, {5,5}).
std::vector<std::pair<std::size_t, std::size_t>> adjacent_runs(const std::vector<std::size_t>& columns);

MatrixCell cell_of(const abi::ElfCheck& check);
// checks[column][member], the members in the same order in every column.
TorchMatrix build_matrix(std::vector<MatrixColumn> columns, const std::vector<std::vector<abi::ElfCheck>>& checks);
// "verdict from the cu124 build; builds of one release can export different symbols" when
// the wheel names another CUDA build than the column's, else "".
std::string cuda_note(std::string_view wheel_local_cuda, std::string_view column_cuda_version);

struct TorchRequirement {
    bool any = false;            // some column is admitted: `pin` holds
    std::string kind;            // "c++", "stable", "none" (no torch symbol)
    std::string lowest;          // "2.9.0"
    std::string highest;         // newest release of the run
    std::size_t highest_column = 0;  // its column in the matrix
    std::string upper;           // "2.10": the bound written; empty: open
    bool later_unproven = false; // the run reaches the newest release asked
    bool contiguous = true;
    bool symbol_level_only = false;  // --pin range: widened to every release whose symbols resolve
    std::string built_for;       // the minor a C++ extension is pinned to ("2.9.1"), empty otherwise
    std::string built_for_source;
    std::string stable_floor;    // the newest release torch's stable ABI version list states for a
    std::string stable_floor_function;  // stable function it imports (that function); empty: none listed
    std::string author;          // the author's range (empty: none)
    std::optional<wheel::SpecifierSet> pin;  // the pin, intersected with the author's
    std::string specifier;       // "torch>=2.9.0,<2.10" (pin's text)
    std::string finding;         // !any: why no release is admitted
};

struct StableAbiUse {
    std::vector<std::string> stable;  // unmangled stable C functions imported
    std::vector<std::string> cpp;     // mangled torch C++ symbols imported
    bool uses_stable() const { return !stable.empty(); }
    bool stable_only() const { return !stable.empty() && cpp.empty(); }
};
StableAbiUse stable_abi_use(const std::vector<const abi::ElfImports*>& imports);
// Whether the member NEEDs one of torch's libraries.
bool links_torch(const abi::ElfImports& imports);

}  // namespace wheelfix::analysis
