// What a torch (or any set of shared libraries) exports: the symbol index.
//
// Contract: a SymbolIndex lists libraries with their SONAME, file name, NEEDED
// and exported dynamic symbols (name, version, default-version flag), plus the
// torch version and CUDA variant when known. It is built from
// - a torch package directory (…/site-packages/torch: lib/*.so*, the version from
//   torch/version.py), load_index_from_directory();
// - a torch wheel file, read in place, load_index_from_wheel();
// - an index file written by save_index() (format documented in man/wheelfix.1:
//   versioned, line-oriented, gzip-compressed), load_index_file().
// load_index(path) picks by what the path is. Errors are InputErrors naming the path.
//
// IndexOptions narrows what is read: `library_globs` (fnmatch on file names, e.g.
// "libc10*.so") keeps only matching libraries (with `with_dependencies`, plus their
// NEEDED closure within the same source); `roots` keeps only the libraries
// reachable from those names (file name or SONAME) through NEEDED, breadth-first,
// so `check` against a 1 GB torch wheel inflates only what the extension's
// dependency closure holds. A wheel library member is inflated once, streaming,
// keeping only its dynamic tables (elf/streamed_elf.hpp has what is kept and when a
// range is read again); WheelReadStats reports what that cost.
//
// Limits (memory bounded by design, within 512 MiB): an index holds at most
// kMaxIndexSymbols exported symbols whose names and versions take at most
// kMaxIndexText bytes, whatever it is built from; an index file is at most
// kMaxIndexText bytes, compressed and inflated. Past a limit the source is refused
// (InputError naming it and the library that crossed it), so `index` never writes
// an index that `check` cannot read back. The bundled torch 2.10 index: 112 k
// symbols, 12.8 MB of text.
#pragma once

#include "wheelfix/elf/elf_file.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string_view>
#include <string>
#include <vector>

namespace wheelfix::abi {

struct ExportedSymbol {
    std::string name;
    std::string version;       // empty when unversioned
    bool default_version = true;  // sym@@VER (false: sym@VER, hidden)
    std::uint8_t type = 0;     // STT_*
};

// One version the library needs from another file (DT_VERNEED): "libc.so.6" "GLIBC_2.17".
struct VersionRequirement {
    std::string file;
    std::string version;
    auto operator<=>(const VersionRequirement&) const = default;
};

struct LibraryExports {
    std::string file_name;     // "libc10_cuda.so"
    std::string soname;        // may be empty
    std::vector<std::string> needed;
    std::vector<ExportedSymbol> symbols;  // sorted by name
    std::vector<std::string> version_definitions;     // DT_VERDEF names, not the file's own (base) name
    std::vector<VersionRequirement> version_needs;    // DT_VERNEED, sorted: the glibc/CXXABI floor
};

struct SymbolIndex {
    std::string source;        // the path it was made from
    std::string torch_version; // "2.10.0+cu130", empty when unknown
    std::string cuda_version;  // "13.0", empty when unknown / CPU
    std::string source_sha256; // hex SHA-256 of the wheel it was made from, when made from a wheel
    std::vector<LibraryExports> libraries;
    std::vector<std::string> notes;  // what the loader skipped and why (a dangling link in torch/lib)
    // Libraries this torch ships that the index does not cover (an atlas release without
    // the asked CPython tag's libtorch_python): check reports them "not covered", never missing.
    std::vector<std::string> not_covered;
    // An index file: a selection of a torch's libraries (`index --libs`, as the files of
    // data/torch-index hold seven), so a torch library it lacks is not covered, never missing.
    bool partial = false;

    const LibraryExports* find_library(std::string_view soname_or_file) const;
    // The label `check` prints for this torch: the version, else the source path.
    std::string label() const;
};

// The definitions of `name` in `library` (several when versioned), or empty.
std::span<const ExportedSymbol> find_symbol(const LibraryExports& library, std::string_view name);

// One parsed library as an index entry: SONAME, NEEDED and the dynamic symbols
// ld.so can bind to (defined; global, weak or unique; default or protected
// visibility; not VER_NDX_LOCAL), sorted by name then version.
LibraryExports exports_of(std::string file_name, const elf::ElfFile& elf);

// The exports one question needs, so an index can be made of them alone
// (Atlas::select): those named one of `names` (any version), and those whose name
// holds one of `tokens` anywhere, each a mangled source name ("4size": a length, then
// that many characters), as near misses are found (abi/check.hpp, consulted_by()).
struct SymbolSelection {
    std::vector<std::string> names;
    std::vector<std::string> tokens;
};

inline constexpr std::uint64_t kMaxIndexSymbols = 1'000'000;
inline constexpr std::uint64_t kMaxIndexText = 96ull << 20;

struct IndexOptions {
    std::vector<std::string> library_globs;  // empty: every library
    std::vector<std::string> roots;          // empty: no reachability filter
    // With globs: the matching libraries become roots, so what they need from the
    // same torch is indexed too and the index stays complete for resolution.
    bool with_dependencies = false;
    // load_index_from_wheel: also fill source_sha256 with the wheel file's SHA-256,
    // hashed beside the libraries' reads (on the thread budget), not after them.
    bool hash_wheel = false;
};

struct MemberRead {
    std::string member;       // "torch/lib/libtorch_cuda.so"
    std::uint64_t size = 0;   // inflated size
    std::uint64_t kept = 0;   // bytes kept while it streamed past
};

struct WheelReadStats {
    std::vector<MemberRead> members;  // in the order the index took them, each read once
    std::uint64_t bytes_inflated() const;
    std::uint64_t bytes_kept() const;
    const MemberRead* largest_kept() const;  // the memory peak: one member per reading thread
};

SymbolIndex load_index(const std::filesystem::path& path, const IndexOptions& options = {});
// Refuses, as load_index would, a path that is not a directory, a wheel or an index,
// reading only its first bytes: commands call it before slow work that precedes the
// load (check reads its inputs first, to know which libraries to load).
void require_index_source(const std::filesystem::path& path);
SymbolIndex load_index_from_directory(const std::filesystem::path& torch_dir, const IndexOptions& options = {});
SymbolIndex load_index_from_wheel(const std::filesystem::path& torch_wheel, const IndexOptions& options = {},
                                  WheelReadStats* stats = nullptr);
SymbolIndex load_index_file(const std::filesystem::path& index_file, const IndexOptions& options = {});
// Atomic; an existing destination is replaced only when `overwrite` (the check is part of the rename).
void save_index(const SymbolIndex& index, const std::filesystem::path& destination, bool overwrite = false);

}  // namespace wheelfix::abi
