// Endian-aware writes of ELF integers and records (private to src/elf).
//
// Contract: ElfWriter is the writing twin of ElfBytes: it puts integers into a
// byte buffer in the file's byte order and class (a "word" is 4 bytes in ELF32,
// 8 in ELF64) and encodes the records the editor rewrites — program headers,
// section headers and dynamic entries — in their standard layouts. A write that
// does not fit inside the buffer is a programming error (std::out_of_range), never
// a silent overrun.
#pragma once

#include <wheelfix/elf/elf_file.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace wheelfix::elf {

class ElfWriter {
public:
    ElfWriter(Class elf_class, Endian endian) : class_(elf_class), endian_(endian) {}

    bool is64() const { return class_ == Class::elf64; }
    std::uint64_t word_size() const { return is64() ? 8 : 4; }
    std::uint64_t program_header_size() const { return is64() ? 56 : 32; }
    std::uint64_t section_header_size() const { return is64() ? 64 : 40; }
    std::uint64_t dynamic_entry_size() const { return 2 * word_size(); }

    void u16(std::span<std::uint8_t> out, std::uint64_t at, std::uint16_t value) const;
    void u32(std::span<std::uint8_t> out, std::uint64_t at, std::uint32_t value) const;
    void u64(std::span<std::uint8_t> out, std::uint64_t at, std::uint64_t value) const;
    // An address/offset/size field: u32 in ELF32 (the value must fit), u64 in ELF64.
    void word(std::span<std::uint8_t> out, std::uint64_t at, std::uint64_t value) const;

    void program_header(std::span<std::uint8_t> out, std::uint64_t at, const ProgramHeader& ph) const;
    void section_header(std::span<std::uint8_t> out, std::uint64_t at, const SectionHeader& sh) const;
    void dynamic_entry(std::span<std::uint8_t> out, std::uint64_t at, const DynamicEntry& entry) const;

private:
    void put(std::span<std::uint8_t> out, std::uint64_t at, unsigned width, std::uint64_t value) const;

    Class class_;
    Endian endian_;
};

}  // namespace wheelfix::elf
