// GNU property notes (gnu_property.hpp has the contract). The walk is ld.so's
// (_dl_process_pt_gnu_property): a note header of three u32, the name and the
// descriptor each padded to the area's alignment, properties of (u32 type, u32
// datasz, data padded to the word size) inside the descriptor. Every step checks
// what is left of its area first; all reads go through ElfBytes.
#include "elf_bytes.hpp"

#include "wheelfix/elf/gnu_property.hpp"

#include <elf.h>

#include <string_view>

namespace wheelfix::elf {

namespace {

constexpr std::uint64_t kNoteHeader = 12;  // n_namesz, n_descsz, n_type

// [offset, offset + size) must fit in the `left` bytes from offset 0 of the area.
void require_room(std::uint64_t offset, std::uint64_t size, std::uint64_t area_size, const char* what) {
    if (offset > area_size || size > area_size - offset) fail(std::string(what) + " runs past its note area");
}

void read_properties(const ElfBytes& in, std::span<const std::uint8_t> area, std::uint64_t begin, std::uint64_t end,
                     std::vector<GnuProperty>& out) {
    const std::uint64_t pad = in.word_size();
    for (std::uint64_t at = begin; at < end;) {
        require_room(at, 8, end, "GNU property header");
        GnuProperty property;
        property.type = in.u32(at, "GNU property type");
        const std::uint32_t size = in.u32(at + 4, "GNU property size");
        require_room(at + 8, size, end, "GNU property data");
        property.data = area.subspan(static_cast<std::size_t>(at + 8), size);
        if (size == 4) property.u32 = in.u32(at + 8, "GNU property data");
        out.push_back(property);
        at += 8 + align_up(size, pad);  // size < 2^32: no overflow
    }
}

bool owned_by_gnu(std::span<const std::uint8_t> name) {
    return name.size() == 4 && std::string_view(reinterpret_cast<const char*>(name.data()), 4) == std::string_view("GNU\0", 4);
}

// The areas to read: PT_GNU_PROPERTY, else .note.gnu.property sections, else PT_NOTE.
std::vector<std::pair<std::span<const std::uint8_t>, std::uint64_t>> note_areas(const ElfFile& elf) {
    std::vector<std::pair<std::span<const std::uint8_t>, std::uint64_t>> areas;
    auto segment = [&](const ProgramHeader& header) {
        const ElfBytes in(elf.bytes(), elf.elf_class(), elf.endian(), elf.present());
        return in.span(in.range(header.offset, header.filesz, "note segment"));
    };
    for (const auto& header : elf.program_headers())
        if (header.type == PT_GNU_PROPERTY) return {{segment(header), header.align}};
    for (const auto& section : elf.sections())
        if (section.type == SHT_NOTE && section.name == ".note.gnu.property")
            areas.emplace_back(elf.section_bytes(section), section.addralign);
    if (!areas.empty()) return areas;
    for (const auto& header : elf.program_headers())
        if (header.type == PT_NOTE) areas.emplace_back(segment(header), header.align);
    return areas;
}

}  // namespace

std::vector<GnuProperty> parse_gnu_properties(std::span<const std::uint8_t> area, Class elf_class, Endian endian,
                                              std::uint64_t align) {
    align = align == 8 ? 8 : 4;
    const ElfBytes in(area, elf_class, endian);
    std::vector<GnuProperty> properties;
    const std::uint64_t size = area.size();
    for (std::uint64_t at = 0; at + kNoteHeader <= size;) {
        const std::uint32_t name_size = in.u32(at, "note name size");
        const std::uint32_t desc_size = in.u32(at + 4, "note descriptor size");
        const std::uint32_t type = in.u32(at + 8, "note type");
        const std::uint64_t name_at = at + kNoteHeader;
        require_room(name_at, name_size, size, "note name");
        const std::uint64_t desc_at = align_up(name_at + name_size, align);
        require_room(desc_at, desc_size, size, "note descriptor");
        if (type == NT_GNU_PROPERTY_TYPE_0 && owned_by_gnu(area.subspan(static_cast<std::size_t>(name_at), name_size)))
            read_properties(in, area, desc_at, desc_at + desc_size, properties);
        at = align_up(desc_at + desc_size, align);
    }
    return properties;
}

std::vector<GnuProperty> gnu_properties(const ElfFile& elf) {
    std::vector<GnuProperty> properties;
    for (const auto& [area, align] : note_areas(elf)) {
        auto found = parse_gnu_properties(area, elf.elf_class(), elf.endian(), align);
        properties.insert(properties.end(), found.begin(), found.end());
    }
    return properties;
}

std::uint32_t x86_isa_needed(const ElfFile& elf) {
    if (elf.machine() != EM_X86_64 && elf.machine() != EM_386) return 0;
    std::uint32_t bits = 0;
    for (const auto& property : gnu_properties(elf))
        if (property.type == kGnuPropertyX86IsaNeeded) bits |= property.u32;
    return bits;
}

int x86_64_level(std::uint32_t isa_bits) {
    for (int level = 4; level >= 2; --level)
        if (isa_bits & (1u << (level - 1))) return level;
    return isa_bits & 1u ? 1 : 0;
}

}  // namespace wheelfix::elf
