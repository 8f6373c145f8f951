// The dynamic symbol table.
//
// Contract: the SHT_DYNSYM section is used when the file has one (its size gives
// the count, its sh_link the string table); a file with two is refused (readelf
// refuses it too, and an editor adjusting symbols would write into the other), and
// so is one whose linked string table is not DT_STRTAB/DT_STRSZ's (ld.so reads the
// names there; an editor rebuilding that table would leave the other's names out). Without it, DT_SYMTAB is mapped through
// the PT_LOAD segments and sized the way a loader-side tool must: nchain of DT_HASH,
// else the highest symbol reachable through DT_GNU_HASH (the last bucket's chain
// walked to its end bit), else DT_MIPS_SYMTABNO on MIPS. The whole table must lie
// inside the file before a single entry is read, which also caps the count (and
// the allocation) by the file size. Index 0, the null symbol, is not returned.
#include "elf_layout.hpp"
#include "elf_parser.hpp"

#include <elf.h>

#include <algorithm>

namespace wheelfix::elf {

namespace {

// DT_HASH words are 32-bit everywhere except on 64-bit s390 and Alpha.
bool hash_words_are_64bit(std::uint16_t machine, bool is64) {
    return is64 && (machine == EM_S390 || machine == EM_ALPHA);
}

}  // namespace

std::uint32_t gnu_hash(std::string_view name) {
    std::uint32_t h = 5381;
    for (unsigned char c : name) h = h * 33 + c;
    return h;
}

std::uint32_t sysv_hash(std::string_view name) {
    std::uint32_t h = 0;
    for (unsigned char c : name) {
        h = (h << 4) + c;
        const std::uint32_t high = h & 0xf0000000u;
        if (high != 0) h ^= high >> 24;
        h &= ~high;
    }
    return h;
}

void Parser::read_dynamic_symbols() {
    std::optional<SymbolTableLocation> table = symbol_table_from_sections();
    if (!table) table = symbol_table_from_dynamic();
    if (!table || table->count <= 1) return;
    in_.table(table->offset, table->count, table->entsize, "dynamic symbol table");
    if (table->count > kMaxDynamicSymbols)
        fail("dynamic symbol table of " + std::to_string(table->count) + " entries, over wheelfix's limit of " +
             std::to_string(kMaxDynamicSymbols));
    file_.symbols_.reserve(table->count - 1);
    for (std::uint64_t index = 1; index < table->count; ++index)
        file_.symbols_.push_back(read_symbol(*table, index));
}

// The names of the dynamic symbols are where ld.so reads them: a linked string
// table other than DT_STRTAB/DT_STRSZ's makes readers and ld.so disagree.
void Parser::require_dynamic_strings(const StringTable& linked) const {
    if (!linked.present || !file_.dynamic_value(DT_STRTAB)) return;
    if (linked.extent.offset != file_.dynstr_offset_ || linked.extent.size != file_.dynstr_size_)
        fail("the dynamic symbols' string table (offset " + hex(linked.extent.offset) + ", " +
             std::to_string(linked.extent.size) + " bytes) is not DT_STRTAB's (offset " + hex(file_.dynstr_offset_) +
             ", " + std::to_string(file_.dynstr_size_) + " bytes)");
}

std::optional<SymbolTableLocation> Parser::symbol_table_from_sections() const {
    const auto dynsym_count = std::count_if(file_.sections_.begin(), file_.sections_.end(),
                                            [](const SectionHeader& section) { return section.type == SHT_DYNSYM; });
    if (dynsym_count > 1) fail(std::to_string(dynsym_count) + " SHT_DYNSYM sections (one dynamic symbol table at most)");
    for (const SectionHeader& section : file_.sections_) {
        if (section.type != SHT_DYNSYM) continue;
        const std::uint64_t standard = symbol_layout(in_.is64()).entry_size;
        const std::uint64_t entsize = section.entsize != 0 ? section.entsize : standard;
        if (entsize < standard)
            fail("SHT_DYNSYM sh_entsize " + std::to_string(entsize) + " is too small");
        StringTable strings = linked_string_table(section);
        if (strings.present) require_bounded_strings(strings.extent.size, "dynamic symbol names");
        if (!strings.present) strings = dynamic_strings();
        require_dynamic_strings(strings);
        return SymbolTableLocation{{section.offset, entsize, section.size / entsize}, strings};
    }
    return std::nullopt;
}

std::optional<SymbolTableLocation> Parser::symbol_table_from_dynamic() const {
    const std::optional<std::uint64_t> address = file_.dynamic_value(DT_SYMTAB);
    if (!address) return std::nullopt;
    const std::uint64_t standard = symbol_layout(in_.is64()).entry_size;
    const std::uint64_t entsize = file_.dynamic_value(DT_SYMENT).value_or(standard);
    if (entsize < standard)
        fail("DT_SYMENT " + std::to_string(entsize) + " is too small");
    const std::uint64_t offset = mapped_offset(*address, "DT_SYMTAB");
    return SymbolTableLocation{{offset, entsize, symbol_count_from_dynamic()}, dynamic_strings()};
}

std::uint64_t Parser::symbol_count_from_dynamic() const {
    if (const std::optional<std::uint64_t> hash = file_.dynamic_value(DT_HASH))
        return symbol_count_from_hash(mapped_offset(*hash, "DT_HASH"));
    if (const std::optional<std::uint64_t> gnu_hash = file_.dynamic_value(DT_GNU_HASH))
        return symbol_count_from_gnu_hash(mapped_offset(*gnu_hash, "DT_GNU_HASH"));
    if (file_.machine_ == EM_MIPS)
        if (const std::optional<std::uint64_t> count = file_.dynamic_value(DT_MIPS_SYMTABNO))
            return *count;
    fail("DT_SYMTAB without DT_HASH or DT_GNU_HASH to size it");
}

// DT_HASH: nbucket, nchain, buckets, chains; nchain is the symbol count.
std::uint64_t Parser::symbol_count_from_hash(std::uint64_t offset) const {
    if (hash_words_are_64bit(file_.machine_, in_.is64()))
        return in_.u64(offset + 8, "DT_HASH nchain");
    return in_.u32(offset + 4, "DT_HASH nchain");
}

// DT_GNU_HASH: nbuckets, symoffset, bloom_size, bloom_shift, bloom words, buckets,
// then one chain word per hashed symbol; bit 0 set marks the end of a chain.
std::uint64_t Parser::symbol_count_from_gnu_hash(std::uint64_t offset) const {
    const std::uint32_t nbuckets = in_.u32(offset, "DT_GNU_HASH nbuckets");
    const std::uint32_t symoffset = in_.u32(offset + 4, "DT_GNU_HASH symoffset");
    const std::uint32_t bloom_size = in_.u32(offset + 8, "DT_GNU_HASH bloom size");
    const Extent bloom =
        in_.table(offset + 16, bloom_size, in_.word_size(), "DT_GNU_HASH bloom filter");
    const Extent buckets = in_.table(bloom.offset + bloom.size, nbuckets, 4, "DT_GNU_HASH buckets");
    std::uint64_t highest = 0;
    for (std::uint64_t i = 0; i < nbuckets; ++i)
        highest =
            std::max<std::uint64_t>(highest, in_.u32(buckets.offset + 4 * i, "DT_GNU_HASH bucket"));
    if (highest == 0) return symoffset;  // no hashed symbols
    if (highest < symoffset) fail("DT_GNU_HASH bucket points below symoffset");
    const std::uint64_t chains = buckets.offset + buckets.size;
    for (std::uint64_t index = highest;; ++index) {
        const std::uint64_t at = chains + (index - symoffset) * 4;
        if (in_.u32(at, "DT_GNU_HASH chain") & 1) return index + 1;
    }
}

Symbol Parser::read_symbol(const SymbolTableLocation& table, std::uint64_t index) const {
    const std::uint64_t at = table.at(index);
    Symbol symbol;
    const SymbolLayout layout = symbol_layout(in_.is64());
    const std::uint32_t name_offset = in_.u32(at, "st_name");
    const std::uint8_t info = in_.u8(at + layout.info, "st_info");
    const std::uint8_t other = in_.u8(at + layout.other, "st_other");
    symbol.section_index = in_.u16(at + layout.shndx, "st_shndx");
    symbol.value = in_.word(at + layout.value, "st_value");
    symbol.size = in_.word(at + layout.size, "st_size");
    symbol.type = info & 0xf;
    symbol.binding = info >> 4;
    symbol.visibility = other & 0x3;
    if (name_offset != 0) {
        if (!table.strings.present) fail("dynamic symbols without a string table");
        symbol.name = in_.string_at(table.strings.extent, name_offset, "symbol name");
    }
    return symbol;
}

}  // namespace wheelfix::elf
