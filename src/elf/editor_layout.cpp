// Editor stage 1: where the parts an edit touches lie in the input file.
//
// Contract: read_layout(elf) reads, bounds-checked through ElfBytes, what ElfFile
// does not keep: the ELF header's table offsets and entry sizes, the PT_DYNAMIC
// table's place and capacity (the smaller of PT_DYNAMIC and the SHT_DYNAMIC
// section), the DT_STRTAB table's file offset and size, which section headers
// describe .dynamic and .dynstr, and a segment appended by an earlier wheelfix
// edit (ElfFile's VersionNeed says where each vn_file lies). That segment is recognised only
// when all of these hold: it is the PT_LOAD with the highest file offset, it ends
// exactly at the end of the file and highest in memory, it starts with the
// wheelfix magic, and DT_STRTAB points inside it. A file that cannot be edited
// (no PT_DYNAMIC, DT_STRTAB outside every PT_LOAD) is an EditError.
#include "editor_internal.hpp"
#include "elf_parser.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace wheelfix::elf::editor {

namespace {

void read_header_fields(const ElfFile& elf, const ElfBytes& in, Layout& layout) {
    const HeaderTables tables = read_header_tables(in);
    layout.phoff = tables.program_headers.offset;
    layout.shoff = tables.section_headers.offset;
    layout.phentsize = tables.program_headers.entsize;
    layout.phnum_in_section_zero = tables.program_headers.count == PN_XNUM;
    layout.shentsize = tables.section_headers.entsize;
    layout.names_section = tables.shstrndx;
    if (layout.names_section == SHN_XINDEX && !elf.sections().empty()) layout.names_section = elf.sections()[0].link;
    layout.file_size = elf.bytes().size();
    layout.is_executable = elf.type() == ET_EXEC;
    const auto& phdrs = elf.program_headers();
    for (std::size_t i = 0; i < phdrs.size(); ++i) {
        if (phdrs[i].type != PT_INTERP || layout.interp_phdr) continue;
        layout.is_executable = true;
        layout.interp_phdr = i;
        const auto& sections = elf.sections();
        for (std::size_t s = 0; s < sections.size(); ++s)
            if (sections[s].type == SHT_PROGBITS && sections[s].offset == phdrs[i].offset && sections[s].size > 0)
                layout.interp_section = s;
        // a linker script may put other sections first under PT_INTERP: then the
        // ".interp" section inside it is the one that follows the path
        for (std::size_t s = 0; s < sections.size() && !layout.interp_section; ++s)
            if (sections[s].name == ".interp" && sections[s].offset >= phdrs[i].offset &&
                sections[s].offset - phdrs[i].offset < phdrs[i].filesz)
                layout.interp_section = s;
    }
}

void locate_dynamic(const ElfFile& elf, const ElfWriter& writer, Layout& layout) {
    const auto& phdrs = elf.program_headers();
    const auto dynamic = std::find_if(phdrs.begin(), phdrs.end(),
                                      [](const ProgramHeader& ph) { return ph.type == PT_DYNAMIC; });
    if (dynamic == phdrs.end())
        throw EditError("no PT_DYNAMIC segment: the dynamic section is not loaded");
    layout.dynamic_phdr = static_cast<std::size_t>(dynamic - phdrs.begin());
    layout.dynamic_offset = dynamic->offset;
    layout.dynamic_vaddr = dynamic->vaddr;
    std::uint64_t size = dynamic->filesz;
    layout.dynamic_writable = (dynamic->flags & PF_W) != 0;
    const auto& sections = elf.sections();
    for (std::size_t i = 0; i < sections.size(); ++i) {
        // By type, or by name when the type is damaged: a header left behind would
        // show readelf (which reads .dynamic by name) the old table.
        if ((sections[i].type != SHT_DYNAMIC && sections[i].name != ".dynamic") || sections[i].offset != dynamic->offset)
            continue;
        layout.dynamic_section = i;
        size = std::min(size, sections[i].size);
        layout.dynamic_writable = (sections[i].flags & SHF_WRITE) != 0;
        break;
    }
    layout.dynamic_capacity = size / writer.dynamic_entry_size();
}

void locate_strings(const ElfFile& elf, Layout& layout) {
    const std::optional<std::uint64_t> address = elf.dynamic_value(DT_STRTAB);
    if (!address) throw EditError("the dynamic section has no DT_STRTAB");
    const std::optional<std::uint64_t> offset = elf.vaddr_to_offset(*address);
    if (!offset) throw EditError("DT_STRTAB is not inside any PT_LOAD segment");
    layout.strings_vaddr = *address;
    layout.strings_offset = *offset;
    const std::uint64_t rest_of_file = layout.file_size - std::min(*offset, layout.file_size);
    const std::optional<std::uint64_t> strsz = elf.dynamic_value(DT_STRSZ);
    layout.strings_size = strsz.value_or(rest_of_file);
    layout.strings_size_known = strsz.has_value();
    reader_for(elf).range(layout.strings_offset, layout.strings_size, "dynamic string table");
    const auto& sections = elf.sections();
    for (std::size_t i = 0; i < sections.size(); ++i)
        if (sections[i].type == SHT_STRTAB && sections[i].offset == layout.strings_offset &&
            !layout.strings_section)
            layout.strings_section = i;
    // A damaged file whose .dynstr header is not where DT_STRTAB points: the header
    // .dynamic links (readelf reads the strings through it) still follows the table
    // we write, so readelf and ld.so agree afterwards.
    if (!layout.strings_section && layout.dynamic_section) {
        const std::uint32_t link = sections[*layout.dynamic_section].link;
        if (link < sections.size() && sections[link].type == SHT_STRTAB && sections[link].name == ".dynstr")
            layout.strings_section = link;
    }
}

// Sections that may name strings in .dynstr, and how the editor accounts for them.
bool is_modelled_user(std::uint32_t type) {
    return type == SHT_DYNSYM || type == SHT_DYNAMIC || type == SHT_GNU_verneed ||
           type == SHT_GNU_verdef;
}

void find_unknown_string_users(const ElfFile& elf, Layout& layout) {
    if (!layout.strings_section) return;
    for (const SectionHeader& section : elf.sections())
        if (section.link == *layout.strings_section && !is_modelled_user(section.type))
            layout.strings_have_unknown_users = true;
    if (layout.names_section == *layout.strings_section) layout.strings_have_unknown_users = true;
}

bool starts_with_magic(const ElfFile& elf, std::uint64_t offset) {
    const auto bytes = elf.bytes();
    if (offset > bytes.size() || bytes.size() - offset < kSegmentHeaderSize) return false;
    return std::memcmp(bytes.data() + offset, kSegmentMagic.data(), kSegmentMagic.size()) == 0;
}

void find_appended_segment(const ElfFile& elf, const ElfBytes& in, Layout& layout) {
    const auto& phdrs = elf.program_headers();
    std::optional<std::size_t> last;
    for (std::size_t i = 0; i < phdrs.size(); ++i)
        if (phdrs[i].type == PT_LOAD && (!last || phdrs[i].offset > phdrs[*last].offset)) last = i;
    if (!last) return;
    const ProgramHeader& ph = phdrs[*last];
    if (ph.offset + ph.filesz != layout.file_size || ph.vaddr + ph.memsz != highest_load_end(elf))
        return;
    if (!starts_with_magic(elf, ph.offset)) return;
    const std::uint64_t strings_start = ph.offset + kSegmentHeaderSize;
    if (layout.strings_offset < strings_start || layout.strings_offset >= layout.file_size) return;
    const std::uint64_t base = in.u64(ph.offset + kSegmentMagic.size(), "wheelfix segment header");
    if (base > layout.strings_size) return;
    layout.appended = AppendedSegment{*last, ph.offset, ph.vaddr, ph.filesz, base};
}

}  // namespace

std::uint64_t highest_load_end(const ElfFile& elf) {
    std::uint64_t end = 0;
    for (const ProgramHeader& ph : elf.program_headers())
        if (ph.type == PT_LOAD && ph.memsz <= std::numeric_limits<std::uint64_t>::max() - ph.vaddr)
            end = std::max(end, ph.vaddr + ph.memsz);
    return end;
}

ElfBytes reader_for(const ElfFile& elf) {
    return ElfBytes(elf.bytes(), elf.elf_class(), elf.endian());
}
ElfWriter writer_for(const ElfFile& elf) {
    return ElfWriter(elf.elf_class(), elf.endian());
}

bool is_string_tag(std::int64_t tag) {
    return tag == DT_NEEDED || tag == DT_SONAME || tag == DT_RPATH || tag == DT_RUNPATH;
}

bool Layout::in_appended(std::uint64_t offset) const {
    return appended && offset >= appended->offset && offset < appended->offset + appended->size;
}

Layout read_layout(const ElfFile& elf) {
    const ElfBytes in = reader_for(elf);
    Layout layout;
    read_header_fields(elf, in, layout);
    locate_dynamic(elf, writer_for(elf), layout);
    locate_strings(elf, layout);
    find_unknown_string_users(elf, layout);
    find_appended_segment(elf, in, layout);
    return layout;
}

}  // namespace wheelfix::elf::editor
