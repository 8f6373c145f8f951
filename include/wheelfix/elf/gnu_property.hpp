// GNU property notes: what the linker records about the code of a file
// (NT_GNU_PROPERTY_TYPE_0, owner "GNU", in .note.gnu.property / PT_GNU_PROPERTY),
// such as the x86-64 ISA level the code needs (GNU_PROPERTY_X86_ISA_1_NEEDED,
// written by `gcc -march=x86-64-v3 -mneeded` or `-Wl,-z,x86-64-v3`).
//
// Contract:
// - parse_gnu_properties(area, class, endian, align) reads one note area (the bytes
//   of a note section or segment; `align` is its alignment, 8 or 4) and returns the
//   properties of every NT_GNU_PROPERTY_TYPE_0 note owned by "GNU" in it, in order.
//   Notes of other owners or types are skipped. Every size read from the area
//   (n_namesz, n_descsz, pr_datasz) is checked against what is left of it before it
//   is used; a note or property that does not fit is an ElfError naming it. Name and
//   descriptor are padded to `align` (4 when it is not 8, as ld.so does), property
//   data to 8 bytes in ELF64 and 4 in ELF32 (the gABI's rule for property arrays).
// - gnu_properties(elf) finds the area the way ld.so does: the PT_GNU_PROPERTY
//   segment when there is one; else every SHT_NOTE section named
//   .note.gnu.property (what auditwheel and readelf read); else every PT_NOTE
//   segment. A partial image (elf_file.hpp) throws BytesNotKept for a note area it lacks.
// - x86_isa_needed(elf) is the GNU_PROPERTY_X86_ISA_1_NEEDED bits of the file, ORed
//   over every such property (0 when it has none); x86_64_level(bits) is the highest
//   x86-64 micro-architecture level those bits name: 4, 3, 2, 1 for the baseline
//   alone, 0 for none.
#pragma once

#include "wheelfix/elf/elf_file.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace wheelfix::elf {

inline constexpr std::uint32_t kGnuPropertyX86IsaNeeded = 0xc0008002;  // GNU_PROPERTY_X86_ISA_1_NEEDED

struct GnuProperty {
    std::uint32_t type = 0;
    std::span<const std::uint8_t> data;  // pr_datasz bytes, inside the area
    // The data as the 4-byte integer most properties are (file byte order); 0 when
    // the data is not 4 bytes long.
    std::uint32_t u32 = 0;
};

std::vector<GnuProperty> parse_gnu_properties(std::span<const std::uint8_t> area, Class elf_class, Endian endian,
                                              std::uint64_t align);
std::vector<GnuProperty> gnu_properties(const ElfFile& elf);

std::uint32_t x86_isa_needed(const ElfFile& elf);
int x86_64_level(std::uint32_t isa_bits);

}  // namespace wheelfix::elf
