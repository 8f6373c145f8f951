// What a torch (or any set of shared libraries) exports: the symbol index.
//
// Contract: a SymbolIndex lists libraries with their SONAME, file name, NEEDED
// and exported dynamic symbols (name, version, default-version flag), plus the
// torch version and CUDA variant when known. It is built from
// - a torch package directory (…/site-packages/torch: lib/*.so*, version read from
//   torch/version.py — both `__version__ = '…'` and `cuda: Optional[str] = '…'`
//   forms), load_index_from_directory();
// - a torch wheel file, read in place: each library member is inflated once,
//   streaming, keeping only the byte ranges the dynamic section, string and symbol
//   tables and version tables occupy, load_index_from_wheel();
// - an index file written by save_index() (format documented in man/wheelfix.1:
//   versioned, line-oriented, gzip-compressed), load_index_file().
// load_index(path) picks by what the path is. Errors are InputErrors naming the path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace wheelfix::abi {

struct ExportedSymbol {
    std::string name;
    std::string version;       // empty when unversioned
    bool default_version = true;  // sym@@VER (false: sym@VER, hidden)
    std::uint8_t type = 0;     // STT_*
};

struct LibraryExports {
    std::string file_name;     // "libc10_cuda.so"
    std::string soname;        // may be empty
    std::vector<std::string> needed;
    std::vector<ExportedSymbol> symbols;  // sorted by name
};

struct SymbolIndex {
    std::string source;        // the path it was made from
    std::string torch_version; // "2.10.0+cu130", empty when unknown
    std::string cuda_version;  // "13.0", empty when unknown / CPU
    std::vector<LibraryExports> libraries;

    const LibraryExports* find_library(std::string_view soname_or_file) const;
};

SymbolIndex load_index(const std::filesystem::path& path);
SymbolIndex load_index_from_directory(const std::filesystem::path& torch_dir);
SymbolIndex load_index_from_wheel(const std::filesystem::path& torch_wheel);
SymbolIndex load_index_file(const std::filesystem::path& index_file);
void save_index(const SymbolIndex& index, const std::filesystem::path& destination);  // atomic

}  // namespace wheelfix::abi
