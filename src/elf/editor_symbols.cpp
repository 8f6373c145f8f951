// Editor stage 4c: symbols that name a moved section follow it.
//
// Contract: when .dynstr or .dynamic moves into the appended segment, every symbol
// of .symtab and .dynsym defined in that section (its STT_SECTION symbol, and
// _DYNAMIC) gets st_value shifted by the section's move, so the symbol still lies
// inside its section (eu-elflint checks both, and _DYNAMIC against PT_DYNAMIC).
// An absolute _DYNAMIC (SHN_ABS, some linkers emit it so) at the old .dynamic
// address follows .dynamic too. No other symbol changes.
#include "editor_internal.hpp"
#include "elf_layout.hpp"

#include <elf.h>

#include <algorithm>

namespace wheelfix::elf::editor {

namespace {

// The symbol's name, when its table links to a string table that holds it.
std::string_view symbol_name(const ElfFile& elf, const SectionHeader& table, std::uint64_t at) {
    if (table.link == 0 || table.link >= elf.sections().size()) return {};
    const SectionHeader& strings = elf.sections()[table.link];
    const ElfBytes in = reader_for(elf);
    const std::uint32_t offset = in.u32(at, "st_name");
    if (strings.type != SHT_STRTAB || offset >= strings.size) return {};
    return in.string_at({strings.offset, strings.size}, offset, "symbol name");
}

bool follows_move(const ElfFile& elf, const SectionHeader& table, std::uint64_t at, std::uint16_t shndx,
                  std::uint64_t value, const SectionMove& move) {
    if (shndx == move.index && shndx < SHN_LORESERVE) return true;
    return move.is_dynamic && shndx == SHN_ABS && value == move.old_addr &&
           symbol_name(elf, table, at) == "_DYNAMIC";
}

void shift_symbols_in(const ElfFile& elf, const SectionHeader& table,
                      const std::vector<SectionMove>& moves, Overlay& overlay) {
    const ElfBytes in = reader_for(elf);
    const ElfWriter writer = writer_for(elf);
    const SymbolLayout fields = symbol_layout(writer.is64());
    const std::uint64_t entsize = std::max<std::uint64_t>(table.entsize, fields.entry_size);
    const Extent symbols = in.range(table.offset, table.size / entsize * entsize, "symbol table");
    for (std::uint64_t at = symbols.offset; at < symbols.offset + symbols.size; at += entsize) {
        const std::uint16_t shndx = in.u16(at + fields.shndx, "st_shndx");
        const std::uint64_t value = in.word(at + fields.value, "st_value");
        for (const SectionMove& move : moves) {
            if (!follows_move(elf, table, at, shndx, value, move)) continue;
            std::vector<std::uint8_t> field(writer.word_size());
            const std::uint64_t shifted = value + move.new_addr - move.old_addr;
            writer.word(field, 0, writer.is64() ? shifted : shifted & 0xffffffffu);
            overlay.write(at + fields.value, std::move(field));
        }
    }
}

}  // namespace

void write_symbol_fixups(const ElfFile& elf, const std::vector<SectionMove>& moves, Overlay& overlay) {
    if (moves.empty()) return;
    for (const SectionHeader& section : elf.sections())
        if (section.type == SHT_SYMTAB || section.type == SHT_DYNSYM)
            shift_symbols_in(elf, section, moves, overlay);
}

}  // namespace wheelfix::elf::editor
