// The parser behind ElfFile::parse (private to src/elf).
//
// Contract: Parser fills an ElfFile in stages, each in its own file:
//   elf_headers.cpp   ELF header, program headers, section headers and their names
//   elf_dynamic.cpp   the dynamic table (PT_DYNAMIC, else SHT_DYNAMIC) and its strings
//   elf_symbols.cpp   the dynamic symbol table (SHT_DYNSYM, else DT_SYMTAB sized by
//                     DT_HASH / DT_GNU_HASH)
//   elf_versions.cpp  verneed / verdef / versym, and each symbol's version
// Every stage reads through ElfBytes, so every value taken from the file is
// bounds-checked before use; a stage that finds nothing to read leaves its part
// of the ElfFile empty.
#pragma once

#include "elf_bytes.hpp"

#include <wheelfix/elf/elf_file.hpp>

#include <cstdint>
#include <optional>
#include <span>

namespace wheelfix::elf {

// A table of fixed-size entries in the file: the program and section header tables
// (as the ELF header locates them), the dynamic symbol table.
struct EntryTable {
    std::uint64_t offset = 0;
    std::uint64_t entsize = 0;
    std::uint64_t count = 0;

    std::uint64_t at(std::uint64_t index) const { return offset + index * entsize; }
    std::uint64_t size() const { return count * entsize; }
    std::uint64_t end() const { return at(count); }
};

// The header tables the ELF header locates, its fields as stored (extended numbering,
// kept in section header 0, not applied), read by read_header_tables() for the parser
// and for the strip stage alike.
struct HeaderTables {
    EntryTable program_headers;  // e_phoff, e_phentsize, e_phnum
    EntryTable section_headers;  // e_shoff, e_shentsize, e_shnum
    std::uint64_t shstrndx = 0;  // e_shstrndx
};
HeaderTables read_header_tables(const ElfBytes& in);

// Where a symbol or version table lives and which string table its names use.
struct StringTable {
    Extent extent;
    bool present = false;
};

struct SymbolTableLocation : EntryTable {  // count includes the null symbol at index 0
    StringTable strings;
};

struct VersionTableLocation {
    std::uint64_t offset = 0;
    std::uint64_t count = 0;  // number of verneed / verdef records
    StringTable strings;
};

// One section or program header record at `offset` of `in` (the gABI layout of the file's class).
SectionHeader read_section_header(const ElfBytes& in, std::uint64_t offset);
ProgramHeader read_program_header(const ElfBytes& in, std::uint64_t offset);

class Parser {
public:
    Parser(std::span<const std::uint8_t> bytes, const ByteRanges* present);
    // ElfFile::parse_as_loader: the section header table is not read.
    Parser& without_sections() {
        without_sections_ = true;
        return *this;
    }
    ElfFile run();
    // ElfFile::parse_headers: the ELF header and the program headers, nothing more.
    ElfFile run_headers();

private:
    // elf_headers.cpp
    void read_identification();
    void read_file_header();
    void read_program_headers();
    void read_section_headers();
    void name_sections();
    void check_file_extents() const;
    SectionHeader section_zero() const;
    // `table`'s entries are at least `minimum` bytes (else "<entsize> N is too small") and
    // its first `count` lie in the file.
    void require_table(const EntryTable& table, std::uint64_t count, std::uint64_t minimum, const char* entsize,
                       const char* what) const;

    // elf_dynamic.cpp
    void read_dynamic();
    std::optional<Extent> locate_dynamic_table() const;
    void read_dynamic_entries(Extent table);
    void locate_dynamic_strings();
    void check_dynamic_strings() const;
    void require_bounded_strings(std::uint64_t size, const char* what) const;  // kMaxDynamicStrings
    const SectionHeader* dynamic_section_header() const;

    // elf_symbols.cpp
    void read_dynamic_symbols();
    void require_dynamic_strings(const StringTable& linked) const;
    std::optional<SymbolTableLocation> symbol_table_from_sections() const;
    std::optional<SymbolTableLocation> symbol_table_from_dynamic() const;
    std::uint64_t symbol_count_from_dynamic() const;
    std::uint64_t symbol_count_from_hash(std::uint64_t offset) const;
    std::uint64_t symbol_count_from_gnu_hash(std::uint64_t offset) const;
    Symbol read_symbol(const SymbolTableLocation& table, std::uint64_t index) const;

    // elf_versions.cpp
    void read_versions();
    std::optional<VersionTableLocation> version_table(std::uint32_t section_type,
                                                      std::int64_t offset_tag,
                                                      std::int64_t count_tag,
                                                      const char* what) const;
    void read_version_needs(const VersionTableLocation& table);
    void read_version_defs(const VersionTableLocation& table);
    std::optional<Extent> versym_table() const;
    void apply_versym(Extent versym);

    // shared helpers
    std::uint64_t mapped_offset(std::uint64_t vaddr, const char* what) const;
    StringTable linked_string_table(const SectionHeader& section) const;
    StringTable dynamic_strings() const;

    ElfBytes in_;
    const ByteRanges* present_;
    ElfFile file_;
    HeaderTables tables_;
    bool without_sections_ = false;
};

}  // namespace wheelfix::elf
