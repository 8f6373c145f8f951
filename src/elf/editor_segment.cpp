// Editor stage 4b: the appended PT_LOAD segment.
//
// Contract: write_with_segment lays the edit out with one loadable segment at the
// end of the file, holding in this order:
//   the wheelfix header (magic, size of the base string table) — how a later edit
//     recognises the segment and rebuilds it in place instead of stacking another;
//   the program header table, when it had to move: a fresh edit needs one more
//     program header and the table grows in place only into a PT_NULL entry;
//   .dynamic, when the entries no longer fit its slots (or it already lives here);
//   .dynstr, always (the base table, then the appended strings);
//   the interpreter path, when it does not fit PT_INTERP's old bytes.
// A segment from an earlier edit keeps its offset and address and is rewritten;
// otherwise the new one starts at the end of the file (16-byte aligned) at an
// address above every PT_LOAD's end, with p_offset == p_vaddr modulo 64 KiB and
// the largest p_align, so 4 KiB and 64 KiB page kernels map it. An executable's
// program headers must stay where a kernel computing AT_PHDR as "first segment's
// bias + e_phoff" (Linux before 5.18, qemu-user) finds them: when they move, they go
// right after the lowest PT_LOAD's file image, inside the page it already maps,
// and that PT_LOAD grows over them (header_slack: those bytes belong to nothing
// else); only without such room do they go into the appended segment, which then
// gets p_vaddr - p_offset equal to the first PT_LOAD's — unless that needs more
// than 1 MiB of padding (a large .bss): then it is placed like a library's and
// the kernel finds the table through the PT_LOAD that holds e_phoff (Linux 5.18+).
// The new PT_LOAD goes into a PT_NULL slot after the last PT_LOAD or at the end of
// the table (PT_LOADs stay in address order, earlier entries keep their indexes);
// PT_PHDR and PT_DYNAMIC follow their tables; the .dynstr and .dynamic
// section headers follow their data. The segment is writable only when it holds a
// .dynamic that was writable, so every section inside matches its flags.
#include "editor_internal.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace wheelfix::elf::editor {

namespace {

constexpr std::uint64_t kSegmentStartAlignment = 16;
constexpr std::uint64_t kSpareDynamicSlots = 4;
constexpr std::uint64_t kMaxAppendPadding = std::uint64_t(64) << 20;  // between the file's end and a new segment
// An executable whose memory image ends far past its file (a large .bss) would need
// that much zero padding for the bias rule below; past this much the segment is
// placed like a library's instead (grow by what the edit needs).
constexpr std::uint64_t kMaxBiasPadding = std::uint64_t(1) << 20;
constexpr std::uint64_t kHighestMappableAddress = std::uint64_t(1) << 56;

// What the segment holds and where, relative to its start.
struct SegmentContents {
    bool holds_phdrs = false;
    bool holds_dynamic = false;
    std::uint64_t phdrs_at = 0;
    std::uint64_t dynamic_at = 0;
    std::uint64_t dynamic_capacity = 0;
    std::uint64_t strings_at = 0;
    std::optional<std::uint64_t> interp_at;  // the interpreter path, after the strings
    std::uint64_t interp_size = 0;           // with its NUL
    std::uint64_t size = 0;
};

struct Placement {
    std::uint64_t offset = 0;
    std::uint64_t vaddr = 0;
};

// The program header table after the edit, and where each entry came from.
struct ProgramHeaders {
    std::vector<ProgramHeader> headers;
    std::vector<std::optional<std::size_t>> origin;  // index in the input table
    std::size_t segment = 0;                         // index of our PT_LOAD
};

std::optional<std::size_t> find_type(const std::vector<ProgramHeader>& headers, std::uint32_t type) {
    for (std::size_t i = 0; i < headers.size(); ++i)
        if (headers[i].type == type) return i;
    return std::nullopt;
}

std::uint64_t largest_load_alignment(const ElfFile& elf) {
    std::uint64_t alignment = 1;
    for (const ProgramHeader& ph : elf.program_headers())
        if (ph.type == PT_LOAD) alignment = std::max(alignment, ph.align);
    return alignment;
}

std::optional<std::size_t> lowest_load(const ElfFile& elf) {
    const auto& headers = elf.program_headers();
    std::optional<std::size_t> lowest;
    for (std::size_t i = 0; i < headers.size(); ++i)
        if (headers[i].type == PT_LOAD && (!lowest || headers[i].vaddr < headers[*lowest].vaddr)) lowest = i;
    return lowest;
}

// Room for the program header table right after the lowest PT_LOAD's file image,
// inside the last page that segment already maps: the bytes are in no section,
// no other segment and not the section header table; the segment has no .bss
// (p_filesz == p_memsz) and no other PT_LOAD starts below the page boundary that
// follows. The segment is then extended over the table, so the table's address is
// the first segment's bias + e_phoff: where every kernel (and qemu-user) puts
// AT_PHDR, whatever lies between the file's end and its memory image's end.
struct HeaderSlack {
    std::size_t load = 0;  // index of that PT_LOAD
    std::uint64_t offset = 0;
    std::uint64_t vaddr = 0;
};

bool file_range_is_free(const ElfFile& elf, const Layout& layout, std::size_t load, std::uint64_t from,
                        std::uint64_t to) {
    const auto overlaps = [&](std::uint64_t start, std::uint64_t size) {
        return size > 0 && start < to && from < start + size;
    };
    for (const SectionHeader& section : elf.sections())
        if (section.type != SHT_NOBITS && overlaps(section.offset, section.size)) return false;
    const auto& headers = elf.program_headers();
    for (std::size_t i = 0; i < headers.size(); ++i)
        if (i != load && overlaps(headers[i].offset, headers[i].filesz)) return false;
    return !overlaps(layout.shoff, elf.sections().size() * layout.shentsize) && to <= layout.file_size;
}

std::optional<HeaderSlack> header_slack(const ElfFile& elf, const Layout& layout, std::uint64_t table_size) {
    const auto& headers = elf.program_headers();
    const std::optional<std::size_t> lowest = lowest_load(elf);
    if (!lowest) return std::nullopt;
    const ProgramHeader& load = headers[*lowest];
    if (load.filesz != load.memsz || load.vaddr < load.offset || load.align == 0) return std::nullopt;
    const std::uint64_t word = writer_for(elf).word_size();
    const std::uint64_t offset = align_up(load.offset + load.filesz, word);
    const std::uint64_t vaddr = load.vaddr + (offset - load.offset);
    const std::uint64_t page_end = align_up(load.vaddr + load.memsz, load.align);
    if (offset < load.offset || vaddr > page_end || table_size > page_end - vaddr) return std::nullopt;
    for (std::size_t i = 0; i < headers.size(); ++i)
        if (i != *lowest && headers[i].type == PT_LOAD && headers[i].vaddr - headers[i].vaddr % load.align < vaddr + table_size)
            return std::nullopt;
    if (!file_range_is_free(elf, layout, *lowest, load.offset + load.filesz, offset + table_size)) return std::nullopt;
    return HeaderSlack{*lowest, offset, vaddr};
}

// The new PT_LOAD takes a PT_NULL slot after the last PT_LOAD, else goes at the
// end of the table (a PT_NULL before it is dropped to make room): PT_LOAD entries
// stay in ascending address order (ld.so maps from the first to the last one) and
// no entry before it changes its index.
ProgramHeaders plan_program_headers(const ElfFile& elf, const Layout& layout) {
    ProgramHeaders table{elf.program_headers(), {}, 0};
    for (std::size_t i = 0; i < table.headers.size(); ++i) table.origin.push_back(i);
    if (layout.appended) {
        table.segment = layout.appended->phdr_index;
        return table;
    }
    std::size_t after_last_load = 0;
    for (std::size_t i = 0; i < table.headers.size(); ++i)
        if (table.headers[i].type == PT_LOAD) after_last_load = i + 1;
    for (std::size_t i = after_last_load; i < table.headers.size(); ++i)
        if (table.headers[i].type == PT_NULL) {
            table.origin[i] = std::nullopt;
            table.segment = i;
            return table;
        }
    if (const auto spare = find_type(table.headers, PT_NULL)) {
        table.headers.erase(table.headers.begin() + static_cast<std::ptrdiff_t>(*spare));
        table.origin.erase(table.origin.begin() + static_cast<std::ptrdiff_t>(*spare));
    }
    table.headers.push_back(ProgramHeader{PT_LOAD, PF_R, 0, 0, 0, 0, 0, 0});
    table.origin.push_back(std::nullopt);
    table.segment = table.headers.size() - 1;
    return table;
}

bool phdrs_move(const ElfFile& elf, const Layout& layout) {
    if (layout.appended) return layout.in_appended(layout.phoff);
    return !find_type(elf.program_headers(), PT_NULL);
}

SegmentContents plan_contents(const ElfFile& elf, const Layout& layout, const DynamicPlan& plan,
                              const PlacedStrings& strings, std::size_t phnum, bool phdrs_elsewhere) {
    const ElfWriter writer = writer_for(elf);
    SegmentContents contents;
    contents.holds_phdrs = phdrs_move(elf, layout) && !phdrs_elsewhere;
    contents.holds_dynamic =
        layout.in_appended(layout.dynamic_offset) || plan.entries.size() + 1 > layout.dynamic_capacity;
    std::uint64_t at = kSegmentHeaderSize;
    if (contents.holds_phdrs) {
        contents.phdrs_at = at;
        at += phnum * layout.phentsize;
    }
    if (contents.holds_dynamic) {
        contents.dynamic_at = at = align_up(at, writer.word_size());
        contents.dynamic_capacity = plan.entries.size() + 1 + kSpareDynamicSlots;
        at += contents.dynamic_capacity * writer.dynamic_entry_size();
    }
    contents.strings_at = at;
    contents.size = at + strings.table.size();
    if (plan.segment_interpreter) {
        contents.interp_at = contents.size;
        contents.interp_size = plan.segment_interpreter->size() + 1;
        contents.size += contents.interp_size;
    }
    return contents;
}

Placement place_new_segment(const ElfFile& elf, const Layout& layout, bool moves_phdrs,
                            std::optional<std::uint64_t> page_size) {
    const std::uint64_t alignment = std::max(largest_load_alignment(elf), page_size.value_or(1));
    std::uint64_t modulus = std::max(kLargestPageSize, alignment);
    const std::uint64_t start = align_up(layout.file_size, kSegmentStartAlignment);
    const std::uint64_t end = highest_load_end(elf);
    if (moves_phdrs && layout.is_executable) {
        const std::optional<std::size_t> lowest = lowest_load(elf);
        if (!lowest) throw EditError("no PT_LOAD segment");
        const ProgramHeader& first = elf.program_headers()[*lowest];
        const std::uint64_t bias = first.vaddr - std::min(first.vaddr, first.offset);
        if (bias % modulus != 0) modulus = alignment;
        if (first.vaddr >= first.offset && bias % modulus == 0) {
            const std::uint64_t floor = align_up(end, modulus);
            const std::uint64_t offset = std::max(start, floor - std::min(floor, bias));
            if (offset - start <= kMaxBiasPadding) return {offset, offset + bias};
        }
    }
    return {start, align_up(end, modulus) + start % modulus};
}

Placement placement(const ElfFile& elf, const Layout& layout, const SegmentContents& contents,
                    std::optional<std::uint64_t> page_size) {
    const Placement place = layout.appended ? Placement{layout.appended->offset, layout.appended->vaddr}
                                            : place_new_segment(elf, layout, contents.holds_phdrs, page_size);
    const std::uint64_t limit = elf.elf_class() == Class::elf64
                                    ? std::numeric_limits<std::uint64_t>::max()
                                    : std::numeric_limits<std::uint32_t>::max();
    if (place.vaddr > limit - contents.size || place.offset > limit - contents.size ||
        (!layout.appended && place.vaddr < highest_load_end(elf)))  // alignment arithmetic wrapped
        throw EditError("no room in the address space for an appended segment");
    // No Linux address space reaches 2^56 (x86-64 5-level paging; 4-level and aarch64
    // stop at 2^47/2^48): a segment placed beyond that (a hostile p_memsz) never loads.
    if (elf.elf_class() == Class::elf64 && place.vaddr + contents.size > kHighestMappableAddress)
        throw EditError("the memory image ends beyond any address space (at " + std::to_string(place.vaddr) +
                        "): an appended segment could not be mapped");
    // An executable's new segment sits where its memory image ends; a p_memsz far
    // beyond the file (hostile, or absurd) would have us write that much padding.
    if (place.offset > layout.file_size && place.offset - layout.file_size > kMaxAppendPadding)
        throw EditError("the memory image ends far beyond the file: an appended segment would need " +
                        std::to_string(place.offset - layout.file_size) + " bytes of padding");
    return place;
}

// `ph` now describes the `size` bytes at `at` from `place`.
void point_at(ProgramHeader& ph, Placement place, std::uint64_t at, std::uint64_t size) {
    ph.offset = place.offset + at;
    ph.vaddr = ph.paddr = place.vaddr + at;
    ph.filesz = ph.memsz = size;
}

void move_table_into_slack(ProgramHeaders& table, const Layout& layout, const HeaderSlack& slack) {
    const std::uint64_t size = table.headers.size() * layout.phentsize;
    for (std::size_t i = 0; i < table.headers.size(); ++i) {
        ProgramHeader& ph = table.headers[i];
        if (table.origin[i] == slack.load) ph.filesz = ph.memsz = slack.offset + size - ph.offset;
        if (ph.type == PT_PHDR) point_at(ph, {slack.offset, slack.vaddr}, 0, size);
    }
}

void update_program_headers(ProgramHeaders& table, const Layout& layout, const SegmentContents& contents,
                            Placement place, const ElfWriter& writer, std::optional<std::uint64_t> page_size) {
    ProgramHeader& load = table.headers[table.segment];
    load.type = PT_LOAD;
    load.flags = PF_R | (contents.holds_dynamic && layout.dynamic_writable ? PF_W : 0);
    point_at(load, place, 0, contents.size);
    if (!layout.appended) load.align = page_size.value_or(0);
    for (const ProgramHeader& ph : table.headers)
        if (ph.type == PT_LOAD && &ph != &load) load.align = std::max(load.align, ph.align);
    for (ProgramHeader& ph : table.headers) {
        if (ph.type == PT_DYNAMIC && contents.holds_dynamic)
            point_at(ph, place, contents.dynamic_at, contents.dynamic_capacity * writer.dynamic_entry_size());
        if (ph.type == PT_INTERP && contents.interp_at) point_at(ph, place, *contents.interp_at, contents.interp_size);
        if (ph.type == PT_PHDR && contents.holds_phdrs)
            point_at(ph, place, contents.phdrs_at, table.headers.size() * layout.phentsize);
    }
}

bool holds_writable_section(const ElfFile& elf, const ProgramHeader& load, std::size_t ignored) {
    const auto& sections = elf.sections();
    for (std::size_t i = 0; i < sections.size(); ++i) {
        const SectionHeader& section = sections[i];
        if (i == ignored || (section.flags & SHF_ALLOC) == 0 || (section.flags & SHF_WRITE) == 0)
            continue;
        if (section.addr >= load.vaddr && section.addr - load.vaddr < load.memsz) return true;
    }
    return false;
}

bool inside(const ProgramHeader& inner, const ProgramHeader& outer) {
    return inner.vaddr >= outer.vaddr && inner.vaddr - outer.vaddr <= outer.memsz &&
           inner.memsz <= outer.memsz - (inner.vaddr - outer.vaddr);
}

// The PT_LOAD that held .dynamic before it moved keeps PF_W only while a writable
// section remains in it (eu-elflint: "loadable segment is writable but contains no
// writable sections"); a PT_GNU_RELRO inside it then protects nothing and becomes
// PT_NULL. Without section headers nothing tells, and nothing changes.
void drop_unused_write_flag(const ElfFile& elf, const Layout& layout, ProgramHeaders& table) {
    if (!layout.dynamic_section || layout.in_appended(layout.dynamic_offset)) return;
    for (std::size_t i = 0; i < table.headers.size(); ++i) {
        ProgramHeader& load = table.headers[i];
        if (i == table.segment || load.type != PT_LOAD || (load.flags & PF_W) == 0) continue;
        if (layout.dynamic_vaddr < load.vaddr || layout.dynamic_vaddr - load.vaddr >= load.memsz)
            continue;
        if (holds_writable_section(elf, load, *layout.dynamic_section)) continue;
        load.flags &= ~static_cast<std::uint32_t>(PF_W);
        for (ProgramHeader& relro : table.headers)
            if (relro.type == PT_GNU_RELRO && inside(relro, load)) relro = ProgramHeader{};
    }
}

// The table's bytes; entries longer than the standard size keep their extra bytes.
std::vector<std::uint8_t> encode_program_headers(const ElfFile& elf, const Layout& layout,
                                                 const ProgramHeaders& table) {
    const ElfWriter writer = writer_for(elf);
    std::vector<std::uint8_t> bytes(table.headers.size() * layout.phentsize, 0);
    for (std::size_t i = 0; i < table.headers.size(); ++i) {
        const std::uint64_t at = i * layout.phentsize;
        if (table.origin[i])
            std::memcpy(bytes.data() + at,
                        elf.bytes().data() + layout.phoff + *table.origin[i] * layout.phentsize,
                        layout.phentsize);
        writer.program_header(bytes, at, table.headers[i]);
    }
    return bytes;
}

void copy_into(std::vector<std::uint8_t>& segment, std::uint64_t at,
               const std::vector<std::uint8_t>& block) {
    std::copy(block.begin(), block.end(), segment.begin() + static_cast<std::ptrdiff_t>(at));
}

std::vector<std::uint8_t> encode_segment_header(const ElfWriter& writer, const PlacedStrings& strings) {
    std::vector<std::uint8_t> header(kSegmentHeaderSize, 0);
    std::memcpy(header.data(), kSegmentMagic.data(), kSegmentMagic.size());
    writer.u64(header, kSegmentMagic.size(), strings.base_size);
    return header;
}

void write_section_header(const ElfFile& elf, const Layout& layout, std::size_t index,
                          const SectionHeader& header, Overlay& overlay) {
    const ElfWriter writer = writer_for(elf);
    std::vector<std::uint8_t> bytes(writer.section_header_size());
    writer.section_header(bytes, 0, header);
    overlay.write(layout.shoff + index * layout.shentsize, std::move(bytes));
}

void write_file_header(const ElfFile& elf, const Layout& layout, std::uint64_t phoff, std::size_t phnum,
                       Overlay& overlay) {
    const ElfWriter writer = writer_for(elf);
    const std::uint64_t w = writer.word_size();
    std::vector<std::uint8_t> field(w);
    writer.word(field, 0, phoff);
    overlay.write(24 + w, std::move(field));
    if (layout.phnum_in_section_zero) {
        SectionHeader zero = elf.sections().at(0);
        zero.info = static_cast<std::uint32_t>(phnum);
        write_section_header(elf, layout, 0, zero, overlay);
        return;
    }
    if (phnum >= PN_XNUM) throw EditError("too many program headers to add one");
    std::vector<std::uint8_t> count(2);
    writer.u16(count, 0, static_cast<std::uint16_t>(phnum));
    overlay.write(32 + 3 * w, std::move(count));
}

// Moves the .dynstr (and .dynamic) section headers to the data; returns the moves.
std::vector<SectionMove> write_section_headers(const ElfFile& elf, const Layout& layout,
                                               const SegmentContents& contents, Placement place,
                                               const PlacedStrings& strings, Overlay& overlay) {
    std::vector<SectionMove> moves;
    const auto move = [&](std::size_t index, std::uint64_t at, std::uint64_t size) {
        SectionHeader header = elf.sections()[index];
        if (header.addr != place.vaddr + at)
            moves.push_back({index, header.addr, place.vaddr + at, index == layout.dynamic_section});
        header.offset = place.offset + at;
        header.addr = place.vaddr + at;
        header.size = size;
        write_section_header(elf, layout, index, header, overlay);
    };
    if (layout.strings_section) move(*layout.strings_section, contents.strings_at, strings.table.size());
    if (layout.dynamic_section && contents.holds_dynamic)
        move(*layout.dynamic_section, contents.dynamic_at,
             contents.dynamic_capacity * writer_for(elf).dynamic_entry_size());
    if (layout.interp_section && contents.interp_at)
        move(*layout.interp_section, *contents.interp_at, contents.interp_size);
    return moves;
}

std::vector<std::uint8_t> dynamic_bytes(const ElfFile& elf, const Layout& layout,
                                        const DynamicPlan& plan, const PlacedStrings& strings,
                                        const SegmentContents& contents, Placement place) {
    const StringTableAddress table{place.vaddr + contents.strings_at, strings.table.size()};
    const std::uint64_t dynamic_vaddr =
        contents.holds_dynamic ? place.vaddr + contents.dynamic_at : layout.dynamic_vaddr;
    const std::uint64_t capacity =
        contents.holds_dynamic ? contents.dynamic_capacity : layout.dynamic_capacity;
    return encode_dynamic(writer_for(elf), final_entries(elf, layout, plan, table, dynamic_vaddr),
                          capacity);
}

}  // namespace

SegmentResult write_with_segment(const ElfFile& elf, const Layout& layout, const DynamicPlan& plan,
                                 const PlacedStrings& strings, Overlay& overlay) {
    if (!layout.strings_size_known)
        throw EditError("no DT_STRSZ: the string table cannot be copied without its size");
    const ElfWriter writer = writer_for(elf);
    ProgramHeaders table = plan_program_headers(elf, layout);
    if (plan.extra_program_header) {
        if (!phdrs_move(elf, layout))
            throw EditError("the program header table cannot grow where an earlier edit left it");
        table.headers.push_back(*plan.extra_program_header);
        table.origin.push_back(std::nullopt);
    }
    std::optional<HeaderSlack> slack;
    if (!layout.appended && layout.is_executable && phdrs_move(elf, layout))
        slack = header_slack(elf, layout, table.headers.size() * layout.phentsize);
    const SegmentContents contents =
        plan_contents(elf, layout, plan, strings, table.headers.size(), slack.has_value());
    const Placement place = placement(elf, layout, contents, plan.page_size);
    update_program_headers(table, layout, contents, place, writer, plan.page_size);
    if (slack) move_table_into_slack(table, layout, *slack);
    if (contents.holds_dynamic) drop_unused_write_flag(elf, layout, table);

    std::vector<std::uint8_t> segment = encode_segment_header(writer, strings);
    segment.resize(contents.size, 0);
    copy_into(segment, contents.strings_at, strings.table);
    if (contents.interp_at)
        std::copy(plan.segment_interpreter->begin(), plan.segment_interpreter->end(),
                  segment.begin() + static_cast<std::ptrdiff_t>(*contents.interp_at));
    const std::vector<std::uint8_t> phdrs = encode_program_headers(elf, layout, table);
    const std::uint64_t phoff = contents.holds_phdrs ? place.offset + contents.phdrs_at
                                : slack                ? slack->offset
                                                       : layout.phoff;
    if (contents.holds_phdrs)
        copy_into(segment, contents.phdrs_at, phdrs);
    else
        overlay.write(phoff, phdrs);
    const std::vector<std::uint8_t> dynamic = dynamic_bytes(elf, layout, plan, strings, contents, place);
    if (contents.holds_dynamic)
        copy_into(segment, contents.dynamic_at, dynamic);
    else
        overlay.write(layout.dynamic_offset, dynamic);
    overlay.write(place.offset, std::move(segment));

    write_file_header(elf, layout, phoff, table.headers.size(), overlay);
    const std::vector<SectionMove> moves =
        write_section_headers(elf, layout, contents, place, strings, overlay);
    write_symbol_fixups(elf, moves, overlay);
    write_verneed_files(elf, plan, overlay);
    return {place.offset + contents.size, !layout.appended || contents.size > layout.appended->size};
}

}  // namespace wheelfix::elf::editor
