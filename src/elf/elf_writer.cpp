// Endian-aware ELF integer and record writes (see elf_writer.hpp).
//
// Contract: the record layouts are the System V gABI ones, field for field the
// inverse of what elf_headers.cpp and elf_dynamic.cpp read.
#include "elf_writer.hpp"

#include "elf_layout.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace wheelfix::elf {

void ElfWriter::put(std::span<std::uint8_t> out, std::uint64_t at, unsigned width,
                    std::uint64_t value) const {
    if (at > out.size() || width > out.size() - at)
        throw std::out_of_range("ELF write of " + std::to_string(width) + " bytes at " +
                                std::to_string(at) + " outside a buffer of " +
                                std::to_string(out.size()));
    for (unsigned i = 0; i < width; ++i) {
        const unsigned shift = 8 * (endian_ == Endian::little ? i : width - 1 - i);
        out[at + i] = static_cast<std::uint8_t>(value >> shift);
    }
}

void ElfWriter::u16(std::span<std::uint8_t> out, std::uint64_t at, std::uint16_t value) const {
    put(out, at, 2, value);
}

void ElfWriter::u32(std::span<std::uint8_t> out, std::uint64_t at, std::uint32_t value) const {
    put(out, at, 4, value);
}

void ElfWriter::u64(std::span<std::uint8_t> out, std::uint64_t at, std::uint64_t value) const {
    put(out, at, 8, value);
}

void ElfWriter::word(std::span<std::uint8_t> out, std::uint64_t at, std::uint64_t value) const {
    if (is64()) return u64(out, at, value);
    if (value > std::numeric_limits<std::uint32_t>::max())
        throw std::out_of_range("ELF32 word value " + std::to_string(value) + " does not fit");
    u32(out, at, static_cast<std::uint32_t>(value));
}

void ElfWriter::program_header(std::span<std::uint8_t> out, std::uint64_t at,
                               const ProgramHeader& ph) const {
    u32(out, at, ph.type);
    u32(out, at + program_header_flags_at(is64()), ph.flags);
    for (const ProgramHeaderWord& field : kProgramHeaderWords)
        word(out, at + (is64() ? field.at64 : field.at32), ph.*field.field);
}

void ElfWriter::section_header(std::span<std::uint8_t> out, std::uint64_t at,
                               const SectionHeader& sh) const {
    const std::uint64_t w = word_size();
    u32(out, at, sh.name_offset);
    u32(out, at + 4, sh.type);
    word(out, at + 8, sh.flags);
    word(out, at + 8 + w, sh.addr);
    word(out, at + 8 + 2 * w, sh.offset);
    word(out, at + 8 + 3 * w, sh.size);
    u32(out, at + 8 + 4 * w, sh.link);
    u32(out, at + 12 + 4 * w, sh.info);
    word(out, at + 16 + 4 * w, sh.addralign);
    word(out, at + 16 + 5 * w, sh.entsize);
}

void ElfWriter::dynamic_entry(std::span<std::uint8_t> out, std::uint64_t at,
                              const DynamicEntry& entry) const {
    // d_tag is signed; ELF32 keeps its low 32 bits (sign-extended when read back).
    word(out, at,
         is64() ? static_cast<std::uint64_t>(entry.tag) : static_cast<std::uint32_t>(entry.tag));
    word(out, at + word_size(), entry.value);
}

}  // namespace wheelfix::elf
