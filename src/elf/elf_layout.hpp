// Record layouts shared by the readers (elf_headers.cpp, elf_symbols.cpp) and the
// writers (elf_writer.cpp, the editor's stages), so that they cannot disagree on
// where a field lies (private to src/elf).
//
// Contract: offsets are the System V gABI's, from the record's start. A program
// header's p_type is a 4-byte field at 0 in both classes; p_flags is a 4-byte
// field that ELF64 puts right after p_type and ELF32 after p_memsz; every other
// field is a word (4 bytes in ELF32, 8 in ELF64) at its class's offset. A
// symbol's st_name is a 4-byte field at 0 in both classes.
#pragma once

#include <wheelfix/elf/elf_file.hpp>

#include <array>
#include <cstdint>

namespace wheelfix::elf {

struct ProgramHeaderWord {
    std::uint64_t ProgramHeader::*field;
    unsigned at32;
    unsigned at64;
    const char* name;
};

inline constexpr unsigned program_header_flags_at(bool is64) { return is64 ? 4 : 24; }

inline constexpr std::array<ProgramHeaderWord, 6> kProgramHeaderWords{{
    {&ProgramHeader::offset, 4, 8, "p_offset"},
    {&ProgramHeader::vaddr, 8, 16, "p_vaddr"},
    {&ProgramHeader::paddr, 12, 24, "p_paddr"},
    {&ProgramHeader::filesz, 16, 32, "p_filesz"},
    {&ProgramHeader::memsz, 20, 40, "p_memsz"},
    {&ProgramHeader::align, 28, 48, "p_align"},
}};

// A symbol table entry: its standard size and where st_value and st_size (words),
// st_info, st_other (bytes) and st_shndx (2 bytes) lie.
struct SymbolLayout {
    unsigned entry_size, value, size, info, other, shndx;
};
inline constexpr SymbolLayout symbol_layout(bool is64) {
    return is64 ? SymbolLayout{24, 8, 16, 4, 5, 6} : SymbolLayout{16, 4, 8, 12, 13, 14};
}

}  // namespace wheelfix::elf
