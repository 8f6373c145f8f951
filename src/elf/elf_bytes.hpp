// Bounds-checked, endian-aware reads over an ELF image (private to src/elf).
//
// Contract: ElfBytes is the only place that turns file bytes into integers. Every
// read names what it reads; a read, range or table that does not lie entirely
// inside the image throws ElfError("<what> past end of file"). Arithmetic on
// untrusted offsets/sizes/counts is overflow-checked here, so callers never add
// or multiply raw file values themselves. The byte order is the file's
// (EI_DATA), applied in one place — the idea of mold's lib/integers.h (ul32,
// ub64, ...), done as a reader instead of typed structs. Over a partial image
// (`present` set, util/byte_ranges.hpp) every read first requires its bytes to be
// present and throws BytesNotKept otherwise; range() and table() only check bounds.
#pragma once

#include <wheelfix/elf/elf_file.hpp>
#include <wheelfix/util/byte_ranges.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace wheelfix::elf {

[[noreturn]] void fail(const std::string& message);
std::string hex(std::uint64_t value);

// A byte range of the image: [offset, offset + size).
struct Extent {
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
};

class ElfBytes {
public:
    ElfBytes(std::span<const std::uint8_t> bytes, Class elf_class, Endian endian,
             const ByteRanges* present = nullptr)
        : bytes_(bytes), class_(elf_class), endian_(endian), present_(present) {}

    std::uint64_t file_size() const { return bytes_.size(); }
    bool is64() const { return class_ == Class::elf64; }
    // Size of an address/offset field: 4 for ELF32, 8 for ELF64.
    std::uint64_t word_size() const { return is64() ? 8 : 4; }

    std::uint8_t u8(std::uint64_t offset, const char* what) const;
    std::uint16_t u16(std::uint64_t offset, const char* what) const;
    std::uint32_t u32(std::uint64_t offset, const char* what) const;
    std::uint64_t u64(std::uint64_t offset, const char* what) const;
    // An address/offset/size field: u32 in ELF32, u64 in ELF64.
    std::uint64_t word(std::uint64_t offset, const char* what) const;
    // A signed word (d_tag): sign-extended from 32 bits in ELF32.
    std::int64_t sword(std::uint64_t offset, const char* what) const;
    // The first offset in [from, to), any alignment, whose word() would read a
    // value in [low, high]; nullopt when none does. Words must lie inside the
    // image and be present. One load per offset: a scan over megabytes (a far
    // read looks for PT_DYNAMIC's first tag, elf/dynamic_array.hpp).
    std::optional<std::uint64_t> find_word(std::uint64_t from, std::uint64_t to, std::uint64_t low,
                                           std::uint64_t high, const char* what) const;

    // Checks that [offset, offset + size) is inside the image.
    Extent range(std::uint64_t offset, std::uint64_t size, const char* what) const;
    // Checks that `count` entries of `entsize` bytes starting at `offset` fit
    // (the multiply and the add are overflow-checked).
    Extent table(std::uint64_t offset, std::uint64_t count, std::uint64_t entsize,
                 const char* what) const;
    // The NUL-terminated string at `offset` inside the string table `strings`.
    std::string_view string_at(Extent strings, std::uint64_t offset, const char* what) const;

    // The bytes of `extent`, all of them present.
    std::span<const std::uint8_t> span(Extent extent) const;

private:
    std::uint64_t read_uint(std::uint64_t offset, unsigned width, const char* what) const;

    std::span<const std::uint8_t> bytes_;
    Class class_;
    Endian endian_;
    const ByteRanges* present_;
};

}  // namespace wheelfix::elf
