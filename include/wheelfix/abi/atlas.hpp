// The torch atlas: many torch releases' symbol indexes in one deduplicated file.
//
// Contract: an Atlas holds entries (one per indexed torch wheel: torch version,
// CUDA variant, arch, CPython ABI tag, the wheel's file name and SHA-256) and
// library nodes (one per library of an entry: file name, SONAME, NEEDED, the
// versions it defines and needs). Each exported symbol (name, version, default
// flag, type) is stored once, with the set of library nodes defining it; identical
// sets are stored once. Releases (AtlasRelease: one build of a torch release) group
// the entries of one (torch version, CUDA version, arch): every library but
// libtorch_python is the same across a build's CPython tags, so only the build's
// primary entry (the one with the most libraries; ties: the first in order) keeps
// them, and the others keep only libtorch_python*. An atlas holds as many builds of
// one release as were indexed (2.6.0+cu124 and 2.6.0+cu126, or two "2.6.0" of CUDA
// 12.4 and 12.6): each is a release of its own, and the analysis picks one per wheel
// (analysis/torch_releases.hpp).
//
// build() makes an atlas from per-wheel SymbolIndexes (index files written by
// `wheelfix index`), ordered by release number, torch version, CUDA version, arch,
// tag and wheel name, so the same inputs give the same atlas in any order; save()
// writes it gzip-compressed with no time or name in the header: the same atlas gives
// the same bytes. load() reads it back (refusing another format version, damaged
// data, counts or ids out of range: InputError naming the file). The symbol lines
// (nearly all of the file) are parsed only when a question needs every name:
// materialising a release, saving, counting; until then the inflated text is kept
// and select() reads it in place; damage in them is reported when they are first
// read. index_for() materialises one release as a SymbolIndex that check_imports()
// takes, only as far as the roots' NEEDED closure reaches, with libtorch_python
// taken from the wheel of the asked CPython tag: when the release has no entry for
// that tag, `not_covered` names it and the index lacks it. select() picks, in one
// pass, the symbols a SymbolSelection keeps; index_for() given that Subset holds
// every library the release reaches but only those symbols, so checking one wheel
// against many releases decodes each of them once. A Subset belongs to the atlas
// that made it (another's is a logic_error). entry_index() gives back everything one
// entry holds, so an atlas plus one more index rebuilds into a bigger atlas.
//
// File format, version 1 (gzip-compressed text, one record per line):
//   wheelfix-torch-atlas 1
//   entries N      then N lines: <torch version> <cuda|-> <arch|-> <tag|-> <wheel> <sha256|->
//   libraries N    then N node lines: L <entry> <file name> <soname|->, each followed by
//                  its `n <needed>`, `d <verdef>` and `r <file> <version>` lines
//   sets N         then N lines of node ids, ascending, each written as the
//                  difference to the one before (the first as itself)
//   symbols N      then N lines: <shared prefix> <type> <set> <rest of key>; the key is
//                  the name (bytes <= 0x20, %, @, 0x7f written %XX) then @@version or
//                  @version when versioned; keys are sorted; <shared prefix> counts the
//                  bytes shared with the key before (front coding)
//   end
#pragma once

#include "wheelfix/abi/symbol_index.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::abi {

struct AtlasEntry {
    std::string torch_version;  // "2.9.1+cu128"
    std::string cuda_version;   // "12.8", empty for a CPU build or when unknown
    std::string arch;           // "x86_64", "aarch64"; empty when unknown
    std::string python_tag;     // CPython ABI tag of the wheel: "cp312", "cp313t"; empty when unknown
    std::string wheel;          // the file name it was indexed from
    std::string sha256;         // of that wheel, hex; empty when unknown

};

struct AtlasLibrary {
    std::uint32_t entry = 0;
    std::string file_name;
    std::string soname;
    std::vector<std::string> needed;
    std::vector<std::string> version_definitions;
    std::vector<VersionRequirement> version_needs;
};

// One column of the matrix: one build of a torch release (torch version, CUDA version,
// arch), with the CPython tags it has.
struct AtlasRelease {
    std::string torch_version;
    std::string cuda_version;
    std::string arch;
    std::vector<std::string> python_tags;  // sorted
    std::uint32_t primary_entry = 0;
};

class AtlasInputs;

class Atlas {
public:
    class Subset;

    static Atlas build(const std::vector<SymbolIndex>& indexes);
    static Atlas build(const AtlasInputs& inputs);
    static Atlas load(const std::filesystem::path& path);
    static Atlas parse(std::string_view gzip_bytes, const std::string& where);
    void save(const std::filesystem::path& destination) const;  // atomic

    // The atlas bundled with wheelfix (data/torch-atlas.gz, compiled in); empty when none was.
    static const Atlas& bundled();
    // True when the file at `path` starts like an atlas (gzip or text).
    static bool is_atlas_file(const std::filesystem::path& path);

    const std::vector<AtlasEntry>& entries() const { return entries_; }
    const std::vector<AtlasLibrary>& libraries() const { return libraries_; }
    std::size_t symbol_count() const { return symbols().size(); }
    std::size_t set_count() const { return set_offsets_.empty() ? 0 : set_offsets_.size() - 1; }
    bool empty() const { return entries_.empty(); }

    // Sorted by release number, then torch version, CUDA version and arch.
    std::vector<AtlasRelease> releases() const;
    // `python_tag` empty: the primary entry's libtorch_python.
    SymbolIndex index_for(const AtlasRelease& release, std::string_view python_tag,
                          const IndexOptions& options = {}, const Subset* subset = nullptr) const;
    Subset select(const SymbolSelection& selection) const;
    SymbolIndex entry_index(std::uint32_t entry) const;

private:
    struct SymbolRecord {
        std::uint32_t key_offset = 0;  // into keys_
        std::uint32_t key_length = 0;
        std::uint32_t set = 0;
        std::uint8_t type = 0;
    };

    std::vector<AtlasEntry> entries_;
    std::vector<AtlasLibrary> libraries_;
    std::vector<std::uint32_t> set_offsets_;  // set i: set_members_[set_offsets_[i] .. set_offsets_[i+1])
    std::vector<std::uint32_t> set_members_;
    // The symbol lines, parsed on first need (symbols()); until then `pending_` holds the text.
    struct PendingSymbols {
        std::string text;          // the inflated atlas
        std::size_t at = 0;        // where its symbol lines start
        std::size_t line = 0;      // the line number before them (messages)
        std::uint32_t count = 0;
        std::string where;
        std::mutex parsing;
        bool parsed = false;
    };
    mutable std::string keys_;
    mutable std::vector<SymbolRecord> symbols_;
    mutable std::unique_ptr<PendingSymbols> pending_;

    const std::vector<SymbolRecord>& symbols() const;

    std::vector<std::uint32_t> nodes_for(const AtlasRelease& release, std::string_view python_tag,
                                         std::vector<std::string>& not_covered) const;
    // The nodes' libraries with the records' symbols, labelled with `source`'s versions and wheel.
    SymbolIndex materialise(const std::vector<std::uint32_t>& nodes, const std::vector<SymbolRecord>& records,
                            std::string_view keys, const AtlasEntry& source) const;
};

// The symbols of one atlas a selection keeps (Atlas::select), for index_for().
class Atlas::Subset {
public:
    std::size_t size() const { return records_.size(); }

private:
    friend class Atlas;
    const Atlas* atlas_ = nullptr;
    std::string keys_;
    std::vector<SymbolRecord> records_;
};

// The indexes an atlas is built from, collected one at a time: an index that cannot be
// its release's primary entry (another of the same torch version and arch has more
// libraries, or as many and comes first) keeps only libtorch_python* at once, as
// build() would, so assembling many CPython tags of a release holds its other
// libraries once (build(inputs) gives the atlas build(all indexes) gives).
class AtlasInputs {
public:
    void add(SymbolIndex index);
    std::size_t size() const { return indexes_.size(); }

private:
    friend class Atlas;
    std::vector<SymbolIndex> indexes_;
    std::vector<std::size_t> library_counts_;  // before pruning: what picks the primary
};

// "torch-2.9.1-cp312-cp312-manylinux_2_28_x86_64.whl" -> arch "x86_64", tag "cp312".
void tags_from_wheel_name(std::string_view wheel, std::string& arch, std::string& python_tag);
// Release numbers compared numerically ("2.10.0" after "2.9.1"); the local label last.
bool torch_version_less(std::string_view a, std::string_view b);
bool is_torch_python_library(std::string_view file_name);

}  // namespace wheelfix::abi
