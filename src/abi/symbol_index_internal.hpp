// Pieces shared by the symbol index loaders (private to src/abi).
//
// Contract:
// - parse_version_py() reads torch/version.py: `__version__ = '…'` and the CUDA
//   variant in either form torch has written (`cuda = '12.8'`,
//   `cuda: Optional[str] = '13.0'`); None or a missing line gives "".
// - read_libraries() applies IndexOptions to a list of candidate libraries that are
//   read only on demand: glob filter first, then, with roots, a breadth-first walk
//   through NEEDED by file name or SONAME, reading each candidate at most once.
#pragma once

#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/elf/elf_file.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <optional>
#include <string_view>
#include <vector>

namespace wheelfix::abi::detail {

struct TorchVersion {
    std::string version;
    std::string cuda;
};
TorchVersion parse_version_py(std::string_view text);

bool looks_like_library(std::string_view file_name);
bool matches_any_glob(std::string_view file_name, const std::vector<std::string>& globs);
// A file's size, 0 when it cannot be had: the weight of reading it (the order in
// which threads that share the work take it).
std::uint64_t file_size_or_zero(const std::filesystem::path& path);

struct Candidate {
    std::string file_name;
    std::function<LibraryExports()> read;
    // Set when `read` may run on several threads at once (for different candidates):
    // the work it costs (a member's inflated size, a file's size), for the order.
    std::optional<std::uint64_t> weight = std::nullopt;
};
// `source` (the directory, wheel or file read) is what a refusal names: past the
// index limits (symbol_index.hpp) it is an InputError naming the library too.
// Without roots, when every candidate has a weight, they are read concurrently on
// the thread budget (util/parallel_tasks.hpp) and taken in their order, so the
// result and the refusal are the serial ones; once the libraries read so far pass
// the limits in any order, no more are started (memory stays bounded), and the
// ones the ordered pass still needs are read then. With roots, the walk reads each
// frontier (the candidates its queue names) ahead on the thread budget and takes
// them from there in its own order: the same libraries, order and refusals.
// `beside` (optional) is one more piece of work with its weight, run among the
// candidates' reads when they are read concurrently, else after them.
struct SideTask {
    std::function<void()> run;
    std::uint64_t weight = 0;
};
std::vector<LibraryExports> read_libraries(const std::vector<Candidate>& candidates, const IndexOptions& options,
                                           const std::string& source, const SideTask* beside = nullptr);

// Keeps only what IndexOptions allows of an index already in memory (index files).
void apply_options(SymbolIndex& index, const IndexOptions& options, const std::string& source);

// The text fields of index files and atlases: bytes <= 0x20, '%', '@' and 0x7f are
// written %XX (upper-case hex); unescape() is nullopt on a malformed %XX.
std::string escape(std::string_view text);
std::optional<std::string> unescape(std::string_view text);
// A symbol's key in both: the escaped name, then @@version (default) or @version.
std::string symbol_key(const ExportedSymbol& symbol);

// gzip at level 9 with no name and no time in the header (the same text gives the
// same bytes; zlib, not the build's codec, so shipped files never depend on it), and
// its inverse, bounded: more than `max_size` inflated bytes, damaged or truncated
// data is an InputError naming `where` and saying "<what>" (e.g. "symbol index").
std::string gzip(std::string_view text);
std::string gunzip(std::string_view compressed, const std::string& where, std::uint64_t max_size, std::string_view what);

}  // namespace wheelfix::abi::detail
