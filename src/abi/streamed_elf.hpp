// Keeping only the parts of an ELF file that dynamic linking needs while its bytes
// stream past once (private to src/abi; used for libraries inside torch wheels).
//
// Contract: StreamedElf(size) reserves a sparse image of the file's size; consume()
// takes the file's bytes in order, in chunks of any size, and copies into the
// image only the byte ranges it has learned it needs, learning more as they arrive:
//   ELF header            -> the program header table, the section header table,
//                            and the 64 KiB before the section header table (.shstrtab)
//   program headers       -> PT_DYNAMIC and the file range of the first PT_LOAD
//                            (where linkers place .dynsym, .dynstr, .gnu.hash, .gnu.version*;
//                            its relocations come along, and under -z noseparate-code,
//                            usual on aarch64, its .text too: the price of one pass)
//   PT_DYNAMIC            -> DT_STRTAB (DT_STRSZ bytes), and DT_SYMTAB, DT_GNU_HASH,
//                            DT_HASH, DT_VERSYM, DT_VERNEED, DT_VERDEF to the end of their
//                            PT_LOAD's file range (at most 256 MiB each)
//   section header table  -> the dynamic symbol, string, hash and version sections
// Ranges learned after their bytes went by cannot be recovered: check_kept() (after
// the last chunk) and check_symbols() (after ElfFile::parse of image()) verify that
// everything the dynamic tables occupy was kept, and otherwise throw
// ElfError("cannot be indexed in one pass: …"). Offsets and sizes read from the
// stream are clamped to the file size, so hostile headers cannot make it keep more
// than the file. kept_bytes() is the memory the image really uses (rounded to pages
// by the kernel). Not an ELF file: is_elf() is false and nothing is kept.
#pragma once

#include "symbol_index_internal.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace wheelfix::abi::detail {

// Sorted, merged half-open byte ranges.
class RangeSet {
public:
    void add(std::uint64_t begin, std::uint64_t end);
    bool covers(std::uint64_t begin, std::uint64_t end) const;
    // The parts of [begin, end) this set covers.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> intersect(std::uint64_t begin, std::uint64_t end) const;
    std::uint64_t total() const;

private:
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges_;
};

class StreamedElf {
public:
    explicit StreamedElf(std::uint64_t size);

    void consume(std::span<const std::uint8_t> chunk);
    void check_kept() const;
    void check_symbols(const elf::ElfFile& elf) const;

    bool is_elf() const { return !not_elf_; }
    std::span<const std::uint8_t> image() const { return image_.bytes(); }
    std::uint64_t kept_bytes() const { return kept_.total(); }

private:
    void keep(std::span<const std::uint8_t> chunk, std::uint64_t chunk_begin);
    void learn();
    void learn_header();
    void learn_program_headers();
    void learn_dynamic();
    void learn_sections();
    void want(std::uint64_t begin, std::uint64_t size);
    void need(std::uint64_t begin, std::uint64_t size);  // wanted and checked by finish()
    std::uint64_t read(std::uint64_t offset, unsigned width) const;
    std::uint64_t word(std::uint64_t offset) const { return read(offset, is64_ ? 8 : 4); }
    std::optional<std::uint64_t> file_offset(std::uint64_t vaddr, std::uint64_t& segment_end) const;

    std::uint64_t size_;
    SparseImage image_;
    RangeSet wanted_;
    RangeSet kept_;
    RangeSet needed_;
    std::uint64_t position_ = 0;
    bool not_elf_ = false;
    bool is64_ = true;
    bool little_ = true;
    bool header_done_ = false;
    bool program_headers_done_ = false;
    bool dynamic_done_ = false;
    bool sections_done_ = false;
    std::uint64_t phoff_ = 0, phentsize_ = 0, phnum_ = 0;
    std::uint64_t shoff_ = 0, shentsize_ = 0, shnum_ = 0, shstrndx_ = 0;
    std::vector<std::uint64_t> table_starts_;  // DT_SYMTAB & co, mapped to file offsets
    std::uint64_t dynamic_offset_ = 0, dynamic_size_ = 0;
    bool has_dynamic_ = false;
    struct Load {
        std::uint64_t offset, vaddr, filesz;
    };
    std::vector<Load> loads_;
};

}  // namespace wheelfix::abi::detail
