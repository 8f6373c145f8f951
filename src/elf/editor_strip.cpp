// Editor stage 6: the strip (EditRequest::strip_symbols, `repair --strip`).
//
// Contract: strip_symbols(elf, plan) extends `plan` (the dynamic stages' edits of
// `elf`) so that the file it makes also lacks .symtab, .strtab, every
// .debug*/.zdebug* section and a SHT_SYMTAB_SHNDX, as `strip --strip-all`
// (auditwheel --strip) leaves it. It never builds that file: its bytes are read
// through the plan's edits from the original (a partial image's missing ranges are
// fetched: BytesNotKept). It cannot corrupt an edited file the way binutils strip
// does one whose appended segment follows the section headers (patchelf #505/#507):
// a byte a program header maps moves only as part of its whole block, by a multiple
// of the block's alignment (and of 64 KiB for a PT_LOAD, so p_offset == p_vaddr
// modulo the page holds on 64 KiB kernels), its program headers following it. Only
// the region from the first dropped section (or the section header table) on is
// rewritten: the kept sections there packed in file order at their alignment, then
// the section header table without the dropped entries (sh_link and sh_info
// renumbered; e_shnum/e_shstrndx, or section 0's extended fields, too), then each
// block at the first place congruent to its old one (what a block cannot give back
// stays as zeros before it). A section header table a segment maps (patchelf's
// layout) stays where it is, unread, and the new one goes outside the segments.
// Dynamic symbols' st_shndx are renumbered when an allocated section follows a
// dropped one. Before the region only the ELF header and the program headers
// change, so a member's deflate stream is spliced around them and the tail.
// Refused (EditError): a dropped section a segment maps, a dynamic symbol defined in
// a dropped section, overlapping sections in the region. A file without those
// sections is left as the plan makes it.
#include "editor_internal.hpp"
#include "elf_layout.hpp"
#include "elf_parser.hpp"
#include "wheelfix/util/byte_edit.hpp"

#include <elf.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace wheelfix::elf::editor {

namespace {

// The file the dynamic plan makes, read without building it.
class EditedView {
public:
    EditedView(const ElfFile& elf, const EditPlan& plan) : elf_(elf), plan_(plan) {}
    std::uint64_t size() const { return plan_.new_size; }

    std::vector<std::uint8_t> read(std::uint64_t offset, std::uint64_t size) const {
        if (offset > this->size() || size > this->size() - offset)
            throw EditError("the edited file ends before offset " + std::to_string(offset + size));
        std::vector<std::uint8_t> out;
        out.reserve(size);
        const std::uint64_t end = offset + size;
        std::uint64_t in = 0, at = 0;  // the original's offset and the edited file's, in step
        auto take_original = [&](std::uint64_t count) {
            const std::uint64_t from = std::max(at, offset), to = std::min(at + count, end);
            if (from < to) {
                auto bytes = elf_.bytes_at(in + (from - at), to - from);
                if (bytes.size() != to - from) throw EditError("the edited file reads past the original's end");
                out.insert(out.end(), bytes.begin(), bytes.end());
            }
        };
        for (const ByteEdit& edit : plan_.edits) {
            if (at >= end) break;
            take_original(edit.offset - in);
            at += edit.offset - in;
            const std::uint64_t from = std::max(at, offset), to = std::min<std::uint64_t>(at + edit.bytes.size(), end);
            if (from < to) out.insert(out.end(), edit.bytes.begin() + static_cast<std::ptrdiff_t>(from - at),
                                      edit.bytes.begin() + static_cast<std::ptrdiff_t>(to - at));
            at += edit.bytes.size();
            in = edit.offset + edit.length;
        }
        if (at < end) take_original(elf_.bytes().size() - in);
        out.resize(size, 0);  // a plan cut to new_size or zero-extended past the original
        return out;
    }

private:
    const ElfFile& elf_;
    const EditPlan& plan_;
};

bool stripped_name(std::string_view name) {
    return name == ".strtab" || name.starts_with(".debug") || name.starts_with(".zdebug");
}

// A byte range a program header maps (or the ELF header, or the program header
// table), with the modulus its file offset keeps when it moves.
struct Mapped {
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
    std::uint64_t modulus = 1;
};

std::vector<Mapped> mapped_blocks(std::vector<Mapped> ranges) {
    std::sort(ranges.begin(), ranges.end(), [](const Mapped& a, const Mapped& b) { return a.begin < b.begin; });
    std::vector<Mapped> blocks;
    for (const Mapped& range : ranges) {
        if (!blocks.empty() && range.begin < blocks.back().end) {
            blocks.back().end = std::max(blocks.back().end, range.end);
            blocks.back().modulus = std::max(blocks.back().modulus, range.modulus);
        } else {
            blocks.push_back(range);
        }
    }
    return blocks;
}

struct StripHeaders : HeaderTables {  // extended numbering applied
    bool extended_shnum = false, extended_shstrndx = false;
    std::vector<ProgramHeader> phdrs;
    std::vector<SectionHeader> sections;
};

StripHeaders read_strip_headers(const ElfFile& elf, const EditedView& view) {
    const bool is64 = elf.elf_class() == Class::elf64;
    StripHeaders h;
    const auto header = view.read(0, is64 ? 64 : 52);
    const ElfBytes in(header, elf.elf_class(), elf.endian());
    static_cast<HeaderTables&>(h) = read_header_tables(in);
    if (h.section_headers.offset == 0) return h;
    if (h.section_headers.entsize < (is64 ? 64u : 40u)) throw EditError("e_shentsize is too small to strip");
    auto decode_section = [&](std::span<const std::uint8_t> bytes, std::uint64_t at) {
        return read_section_header(ElfBytes(bytes, elf.elf_class(), elf.endian()), at);
    };
    const SectionHeader zero = decode_section(view.read(h.section_headers.offset, h.section_headers.entsize), 0);
    if (h.section_headers.count == 0) h.section_headers.count = zero.size, h.extended_shnum = true;
    if (h.shstrndx == SHN_XINDEX) h.shstrndx = zero.link, h.extended_shstrndx = true;
    if (h.program_headers.count == PN_XNUM) h.program_headers.count = zero.info;
    if (h.section_headers.count != elf.sections().size())
        throw EditError("the section headers changed under the edit: not stripped");
    const auto table = view.read(h.section_headers.offset, h.section_headers.size());
    for (std::uint64_t i = 0; i < h.section_headers.count; ++i) {
        h.sections.push_back(decode_section(table, i * h.section_headers.entsize));
        h.sections.back().name = elf.sections()[i].name;
    }
    const auto phdrs = view.read(h.program_headers.offset, h.program_headers.size());
    const ElfBytes p(phdrs, elf.elf_class(), elf.endian());
    for (std::uint64_t i = 0; i < h.program_headers.count; ++i)
        h.phdrs.push_back(read_program_header(p, i * h.program_headers.entsize));
    return h;
}

// The sections dropped: by index, true when dropped.
std::vector<bool> sections_to_drop(const StripHeaders& h) {
    std::vector<bool> drop(h.sections.size(), false);
    for (std::size_t i = 1; i < h.sections.size(); ++i) {
        const SectionHeader& s = h.sections[i];
        if ((s.flags & SHF_ALLOC) || i == h.shstrndx) continue;
        drop[i] = s.type == SHT_SYMTAB || s.type == SHT_SYMTAB_SHNDX || stripped_name(s.name);
    }
    // A kept section linking to a dropped one keeps it (a .rela.debug* of a
    // relocatable file would, had it been kept; none in a linked file).
    for (bool changed = true; changed;) {
        changed = false;
        for (std::size_t i = 1; i < h.sections.size(); ++i) {
            const std::uint32_t link = h.sections[i].link;
            if (!drop[i] && link < drop.size() && drop[link] && h.sections[link].type != SHT_SYMTAB) {
                drop[link] = false;
                changed = true;
            }
        }
    }
    return drop;
}

}  // namespace

void strip_symbols(const ElfFile& elf, EditPlan& plan) {
    const EditedView view(elf, plan);
    const StripHeaders h = read_strip_headers(elf, view);
    if (h.sections.empty()) return;
    const std::vector<bool> drop = sections_to_drop(h);
    std::size_t first_dropped = drop.size();
    for (std::size_t i = 0; i < drop.size(); ++i)
        if (drop[i] && first_dropped == drop.size()) first_dropped = i;
    if (first_dropped == drop.size()) return;

    const ElfWriter out = writer_for(elf);
    const std::uint64_t word = out.word_size();
    std::vector<Mapped> ranges{{0, out.is64() ? 64u : 52u, 1}};
    if (h.program_headers.count) ranges.push_back({h.program_headers.offset, h.program_headers.end(), 1});
    for (const ProgramHeader& ph : h.phdrs)
        if (ph.filesz)
            ranges.push_back({ph.offset, ph.offset + ph.filesz,
                              ph.type == PT_LOAD ? std::max<std::uint64_t>({ph.align, kLargestPageSize, 1})
                                                 : std::max<std::uint64_t>(ph.align, 1)});
    const std::vector<Mapped> blocks = mapped_blocks(std::move(ranges));
    auto block_of = [&](std::uint64_t begin, std::uint64_t end) -> const Mapped* {
        for (const Mapped& block : blocks)
            if (begin < block.end && block.begin < end) return &block;
        return nullptr;
    };
    // patchelf maps the section header table in the segment it appends; that copy
    // stays (nothing reads it) and the new table is written outside the segments.
    const bool table_mapped = block_of(h.section_headers.offset, h.section_headers.end()) != nullptr;

    // The rewritten region starts at the first dropped section's bytes (or the table).
    std::uint64_t from = table_mapped ? view.size() : h.section_headers.offset;
    std::uint64_t dropped_bytes = 0;
    std::size_t dropped_count = 0;
    for (std::size_t i = 0; i < drop.size(); ++i) {
        const SectionHeader& s = h.sections[i];
        if (!drop[i]) continue;
        ++dropped_count;
        if (s.type == SHT_NOBITS || s.size == 0) continue;
        if (block_of(s.offset, s.offset + s.size))
            throw EditError("cannot strip: a segment maps " + std::string(s.name));
        from = std::min(from, s.offset);
        dropped_bytes += s.size;
    }
    // A kept section straddling that start moves with the region.
    for (std::size_t i = 1; i < drop.size(); ++i) {
        const SectionHeader& s = h.sections[i];
        if (!drop[i] && s.type != SHT_NOBITS && s.offset < from && s.offset + s.size > from &&
            !block_of(s.offset, s.offset + s.size))
            from = s.offset;
    }
    if (const Mapped* straddling = block_of(from, from + 1); straddling && straddling->begin < from)
        throw EditError("cannot strip: a segment maps bytes where the sections to drop begin");

    // The new region: the kept sections packed in file order, the section header
    // table, then the mapped blocks, each at the first place congruent to its old
    // one (the file only shrinks by whole moduli; what a block cannot give back
    // stays as zeros before it).
    struct Item {
        std::uint64_t old_offset;
        std::uint64_t size;
        std::uint64_t modulus;  // a block's; a section's alignment otherwise
        std::uint64_t new_offset = 0;
    };
    std::vector<Item> sections, moved_blocks;
    for (std::size_t i = 1; i < drop.size(); ++i) {
        const SectionHeader& s = h.sections[i];
        if (drop[i] || s.type == SHT_NOBITS || s.size == 0 || s.offset < from || block_of(s.offset, s.offset + s.size))
            continue;
        sections.push_back({s.offset, s.size, std::max<std::uint64_t>(s.addralign, 1)});
    }
    for (const Mapped& block : blocks)
        if (block.begin >= from) moved_blocks.push_back({block.begin, block.end - block.begin, block.modulus});
    std::sort(sections.begin(), sections.end(), [](const Item& a, const Item& b) { return a.old_offset < b.old_offset; });
    std::vector<std::uint8_t> tail;
    std::uint64_t cursor = from;
    auto place = [&](Item& item, std::uint64_t at) {
        item.new_offset = at;
        tail.resize(at - from, 0);
        const auto bytes = view.read(item.old_offset, item.size);
        tail.insert(tail.end(), bytes.begin(), bytes.end());
        cursor = at + item.size;
    };
    for (Item& section : sections) place(section, align_up(cursor, section.modulus));
    const std::uint64_t new_shoff = align_up(cursor, word);
    std::uint64_t kept_count = 0;
    for (bool dropped : drop) kept_count += dropped ? 0 : 1;
    cursor = new_shoff + kept_count * out.section_header_size();
    for (Item& block : moved_blocks)
        place(block, cursor + (block.old_offset + block.modulus - cursor % block.modulus) % block.modulus);
    // Where an old offset lands: before `from` unchanged; inside a moved block or
    // at a kept section with it; anything else (an empty section) at the table.
    auto new_offset = [&](std::uint64_t old) -> std::uint64_t {
        if (old < from) return old;
        for (const Item& block : moved_blocks)
            if (old >= block.old_offset && old <= block.old_offset + block.size) return old - block.old_offset + block.new_offset;
        for (const Item& section : sections)
            if (old == section.old_offset) return section.new_offset;
        return new_shoff;
    };

    // The section header table, without the dropped entries.
    std::vector<std::uint32_t> index(drop.size(), 0);
    std::uint32_t kept = 0;
    for (std::size_t i = 0; i < drop.size(); ++i)
        if (!drop[i]) index[i] = kept++;
    auto renumber = [&](std::uint32_t old) -> std::uint32_t { return old < drop.size() && !drop[old] ? index[old] : 0; };
    const std::uint64_t entry_size = out.section_header_size();
    std::vector<std::uint8_t> table(kept * entry_size, 0);
    for (std::size_t i = 0; i < drop.size(); ++i) {
        if (drop[i]) continue;
        SectionHeader s = h.sections[i];
        if (i == 0) {
            if (h.extended_shnum) s.size = kept;
            if (h.extended_shstrndx) s.link = index[h.shstrndx];
        } else {
            s.offset = new_offset(s.offset);
            if (s.link) s.link = renumber(s.link);
            if (s.type == SHT_REL || s.type == SHT_RELA || (s.flags & SHF_INFO_LINK)) s.info = renumber(s.info);
        }
        out.section_header(table, index[i] * entry_size, s);
    }
    tail.resize(std::max<std::uint64_t>(tail.size(), new_shoff - from + table.size()), 0);
    std::copy(table.begin(), table.end(), tail.begin() + static_cast<std::ptrdiff_t>(new_shoff - from));

    // The ELF header and the program headers, patched where they lie: before
    // `from` as edits of their own bytes, after it inside the tail.
    std::map<std::uint64_t, std::vector<std::uint8_t>> patches;  // offset in the edited file -> bytes
    auto patch_word = [&](std::uint64_t at, std::uint64_t value) {
        std::vector<std::uint8_t> bytes(word);
        out.word(bytes, 0, value);
        patches[at] = std::move(bytes);
    };
    auto patch_u16 = [&](std::uint64_t at, std::uint16_t value) {
        std::vector<std::uint8_t> bytes(2);
        out.u16(bytes, 0, value);
        patches[at] = std::move(bytes);
    };
    // Dynamic symbols name their section by number: renumbered where an allocated
    // section follows a dropped one (patchelf appends moved sections' headers).
    for (const SectionHeader& table_section : h.sections) {
        if (table_section.type != SHT_DYNSYM || table_section.entsize == 0) continue;
        std::vector<std::uint8_t> symbols = view.read(table_section.offset, table_section.size);
        const ElfBytes in(symbols, elf.elf_class(), elf.endian());
        bool renumbered = false;
        for (std::uint64_t at = symbol_layout(out.is64()).shndx; at + 2 <= symbols.size(); at += table_section.entsize) {
            const std::uint16_t old_index = in.u16(at, "st_shndx");
            if (old_index == SHN_UNDEF || old_index >= SHN_LORESERVE) continue;
            if (old_index >= drop.size() || drop[old_index])
                throw EditError("cannot strip: a dynamic symbol is defined in a section to drop");
            if (index[old_index] == old_index) continue;
            out.u16(symbols, at, static_cast<std::uint16_t>(index[old_index]));
            renumbered = true;
        }
        if (renumbered) patches[new_offset(table_section.offset)] = std::move(symbols);
    }
    const std::uint64_t new_phoff = new_offset(h.program_headers.offset);
    patch_word(24 + word, new_phoff);
    patch_word(24 + 2 * word, new_shoff);
    if (!h.extended_shnum) patch_u16(36 + 3 * word, static_cast<std::uint16_t>(kept));
    if (!h.extended_shstrndx) patch_u16(38 + 3 * word, static_cast<std::uint16_t>(index[h.shstrndx]));
    for (std::uint64_t i = 0; i < h.phdrs.size(); ++i)
        patch_word(new_phoff + i * h.program_headers.entsize + (out.is64() ? 8 : 4), new_offset(h.phdrs[i].offset));

    // The plan's own edits before the region stay (length for length, they keep
    // offsets); from the first that does not, everything is the tail.
    std::uint64_t start = from;
    for (const ByteEdit& edit : plan.edits)
        if (edit.bytes.size() != edit.length || edit.offset + edit.length > from) {
            start = std::min(start, edit.offset);
            break;
        }
    std::vector<std::uint8_t> rewritten = view.read(start, from - start);
    rewritten.insert(rewritten.end(), tail.begin(), tail.end());
    ByteEdits edits;
    for (const ByteEdit& edit : plan.edits)
        if (edit.offset + edit.length <= start) edits.push_back(edit);
    for (auto& [at, bytes] : patches) {
        if (at >= start) {
            std::copy(bytes.begin(), bytes.end(), rewritten.begin() + static_cast<std::ptrdiff_t>(at - start));
            continue;
        }
        std::vector<std::uint8_t> here = view.read(at, bytes.size());
        if (here != bytes) edits.push_back({at, bytes.size(), std::move(bytes)});
    }
    edits.push_back({start, elf.bytes().size() - start, std::move(rewritten)});
    // Header patches over bytes the plan already edits: one edit of the edited bytes.
    std::sort(edits.begin(), edits.end(), [](const ByteEdit& a, const ByteEdit& b) { return a.offset < b.offset; });
    ByteEdits merged;
    for (ByteEdit& edit : edits) {
        if (!merged.empty() && edit.offset < merged.back().offset + merged.back().length) {
            ByteEdit& last = merged.back();
            if (last.bytes.size() != last.length || edit.bytes.size() != edit.length)
                throw EditError("cannot strip: the headers to rewrite overlap the region that moves");
            const std::uint64_t end = std::max(last.offset + last.length, edit.offset + edit.length);
            std::vector<std::uint8_t> bytes = view.read(last.offset, end - last.offset);
            for (const ByteEdit* piece : {&last, &edit})
                std::copy(piece->bytes.begin(), piece->bytes.end(), bytes.begin() + static_cast<std::ptrdiff_t>(piece->offset - last.offset));
            last = {last.offset, end - last.offset, std::move(bytes)};
            continue;
        }
        merged.push_back(std::move(edit));
    }
    normalize_edits(merged);
    for (const ByteEdit& edit : merged)
        if (edit.offset < start && edit.bytes.size() != edit.length)
            throw EditError("cannot strip: the headers to rewrite overlap the region that moves");
    plan.edits = std::move(merged);
    plan.new_size = start + (plan.edits.empty() ? 0 : plan.edits.back().bytes.size());
    plan.changes.push_back("strip " + std::to_string(dropped_count) + " symbol and debug sections (" +
                           std::to_string(dropped_bytes) + " bytes)");
}

}  // namespace wheelfix::elf::editor
