// Editor stage 2b/4d: renamed dynamic symbols (EditRequest::rename_symbols).
//
// Contract: plan_symbol_renames reads every .dynsym entry's st_name (the table at
// DT_SYMTAB, as many entries as the reader found) and, for each whose name the map
// renames, adds a StringField (placed by editor_strings.cpp like any string; the
// old name stays, since symbol names are never released) and one change line.
// write_symbol_renames then writes, over the input's own bytes (no table moves):
// - st_name of every renamed symbol;
// - the GNU hash table (DT_GNU_HASH), same bucket count, bloom size and shift:
//   the hashed symbols (from symoffset on) are put in bucket order of the new
//   names' hashes, within a bucket in the order patchelf 0.19 gives them, then
//   bloom words, buckets and chains are recomputed. When that reorders symbols,
//   .dynsym entries, .gnu.version entries and the symbol index of every dynamic
//   relocation (DT_RELA, DT_REL, DT_JMPREL tables) follow, so relocations and
//   versions still name the same symbols. MIPS (whose GOT fixes the dynsym order)
//   is refused when a reorder would be needed;
//   A GNU hash table whose buckets are all empty (an executable exporting nothing)
//   hashes nothing and stays as it is;
// - the SysV hash table (DT_HASH), same bucket count, chains rebuilt as ld builds
//   them (each non-local symbol, in index order, becomes its bucket's head; local
//   ones, such as aarch64's section symbols, are not looked up and stay out, where
//   patchelf 0.19 hashes them too).
// Every table is located through the dynamic section and bounds-checked through
// ElfBytes; a hash table whose header does not fit the file or the symbol count is
// an EditError naming it.
#include "editor_internal.hpp"
#include "elf_layout.hpp"
#include "elf_parser.hpp"

#include <elf.h>

#include <algorithm>
#include <map>
#include <numeric>

namespace wheelfix::elf::editor {

namespace {

// The file offset of the table a dynamic entry points at, if it has one.
std::optional<std::uint64_t> table_offset(const ElfFile& elf, std::int64_t tag, const char* what) {
    const auto address = elf.dynamic_value(tag);
    if (!address) return std::nullopt;
    const auto offset = elf.vaddr_to_offset(*address);
    if (!offset) throw EditError(std::string(what) + " lies outside every loaded segment");
    return offset;
}

// .dynsym: its count includes the null symbol.
EntryTable symbol_table(const ElfFile& elf) {
    const ElfBytes in = reader_for(elf);
    EntryTable table;
    const auto offset = table_offset(elf, DT_SYMTAB, "the dynamic symbol table");
    if (!offset) throw EditError("no dynamic symbol table (DT_SYMTAB) to rename symbols in");
    table.offset = *offset;
    const std::uint64_t standard = symbol_layout(elf.elf_class() == Class::elf64).entry_size;
    table.entsize = std::max(elf.dynamic_value(DT_SYMENT).value_or(standard), standard);
    table.count = elf.dynamic_symbols().size() + 1;
    (void)in.table(table.offset, table.count, table.entsize, "dynamic symbol table");
    return table;
}

std::vector<std::uint8_t> u32_bytes(const ElfWriter& writer, const std::vector<std::uint32_t>& values) {
    std::vector<std::uint8_t> bytes(values.size() * 4);
    for (std::size_t i = 0; i < values.size(); ++i) writer.u32(bytes, i * 4, values[i]);
    return bytes;
}

// The bucket and chain arrays (32-bit words, file offsets) both kinds of hash table
// have, written back the same way. The SysV table is no more than these.
struct HashArrays {
    std::uint32_t buckets = 0;
    std::uint64_t buckets_at = 0;
    std::uint64_t chains_at = 0;

    void write(const ElfWriter& writer, const std::vector<std::uint32_t>& bucket_words,
               const std::vector<std::uint32_t>& chain_words, Overlay& overlay) const {
        overlay.write(buckets_at, u32_bytes(writer, bucket_words));
        overlay.write(chains_at, u32_bytes(writer, chain_words));
    }
};
using SysvHash = HashArrays;

// The GNU hash table's parts: its arrays, the first symbol it hashes and its bloom filter.
struct GnuHash : HashArrays {
    std::uint32_t symoffset = 0;
    std::uint32_t bloom_words = 0;
    std::uint32_t shift = 0;
    std::uint64_t bloom_at = 0;
};

std::optional<GnuHash> gnu_hash_table(const ElfFile& elf, const EntryTable& symbols) {
    const auto offset = table_offset(elf, DT_GNU_HASH, "the GNU hash table");
    if (!offset) return std::nullopt;
    const ElfBytes in = reader_for(elf);
    GnuHash hash;
    hash.buckets = in.u32(*offset, "GNU hash nbuckets");
    hash.symoffset = in.u32(*offset + 4, "GNU hash symoffset");
    hash.bloom_words = in.u32(*offset + 8, "GNU hash bloom size");
    hash.shift = in.u32(*offset + 12, "GNU hash bloom shift");
    if (hash.symoffset > symbols.count)
        throw EditError("the GNU hash table starts past the last dynamic symbol (symoffset " +
                        std::to_string(hash.symoffset) + ")");
    if (hash.symoffset < symbols.count && (hash.buckets == 0 || hash.bloom_words == 0))
        throw EditError("the GNU hash table has no buckets or no bloom filter");
    hash.bloom_at = in.table(*offset + 16, hash.bloom_words, in.word_size(), "GNU hash bloom filter").offset;
    hash.buckets_at = hash.bloom_at + std::uint64_t(hash.bloom_words) * in.word_size();
    hash.chains_at = in.table(hash.buckets_at, hash.buckets, 4, "GNU hash buckets").offset + hash.buckets * 4ull;
    // A table whose buckets are all empty hashes nothing (ld writes one, without
    // chains, for an executable that exports nothing, symoffset notwithstanding).
    bool empty = true;
    for (std::uint32_t b = 0; b < hash.buckets && empty; ++b) empty = in.u32(hash.buckets_at + 4ull * b, "GNU hash bucket") == 0;
    if (empty) return std::nullopt;
    (void)in.table(hash.chains_at, symbols.count - hash.symoffset, 4, "GNU hash chains");
    return hash;
}

std::optional<SysvHash> sysv_hash_table(const ElfFile& elf, const EntryTable& symbols) {
    const auto offset = table_offset(elf, DT_HASH, "the SysV hash table");
    if (!offset) return std::nullopt;
    const ElfBytes in = reader_for(elf);
    SysvHash hash;
    hash.buckets = in.u32(*offset, "hash nbucket");
    const std::uint32_t chains = in.u32(*offset + 4, "hash nchain");
    if (hash.buckets == 0 || chains != symbols.count)
        throw EditError("the SysV hash table (nbucket " + std::to_string(hash.buckets) + ", nchain " +
                        std::to_string(chains) + ") does not cover the " + std::to_string(symbols.count) +
                        " dynamic symbols");
    hash.buckets_at = in.table(*offset + 8, hash.buckets, 4, "hash buckets").offset;
    hash.chains_at = hash.buckets_at + hash.buckets * 4ull;
    (void)in.table(hash.chains_at, chains, 4, "hash chains");
    return hash;
}

// The dynamic relocation tables (DT_RELA, DT_REL, DT_JMPREL): each table's extent
// and entry size; overlapping tables (some linkers count .rela.plt in DT_RELASZ)
// are visited once per entry.
struct RelocationTable {
    Extent extent;
    std::uint64_t entsize = 0;
};

std::vector<RelocationTable> relocation_tables(const ElfFile& elf) {
    const ElfBytes in = reader_for(elf);
    const std::uint64_t w = in.word_size();
    struct Tags {
        std::int64_t address, size;
        bool rela;
    };
    const bool plt_rela = elf.dynamic_value(DT_PLTREL).value_or(DT_RELA) == DT_RELA;
    const Tags all[] = {{DT_RELA, DT_RELASZ, true}, {DT_REL, DT_RELSZ, false}, {DT_JMPREL, DT_PLTRELSZ, plt_rela}};
    std::vector<RelocationTable> tables;
    for (const Tags& tags : all) {
        const auto offset = table_offset(elf, tags.address, "a relocation table");
        const auto size = elf.dynamic_value(tags.size);
        if (!offset || !size) continue;
        const std::uint64_t standard = (tags.rela ? 3 : 2) * w;
        const std::uint64_t entsize =
            std::max(elf.dynamic_value(tags.rela ? DT_RELAENT : DT_RELENT).value_or(standard), standard);
        tables.push_back({in.range(*offset, *size / entsize * entsize, "relocation table"), entsize});
    }
    return tables;
}

// The symbols' names after the rename, by .dynsym index.
std::vector<std::string_view> final_names(const ElfFile& elf, const DynamicPlan& plan) {
    std::vector<std::string_view> names{""};
    for (const Symbol& symbol : elf.dynamic_symbols()) names.push_back(symbol.name);
    for (const PlannedSymbolName& renamed : plan.symbol_names) names.at(renamed.index) = renamed.string.text;
    return names;
}

bool is_identity(const std::vector<std::uint64_t>& new_index) {
    for (std::size_t i = 0; i < new_index.size(); ++i)
        if (new_index[i] != i) return false;
    return true;
}

// new_index[old] after putting the hashed symbols in bucket order (identity without
// a GNU hash table). The order within a bucket is patchelf 0.19's: std::sort by
// bucket over the symbols in index order, which is deterministic for a given
// standard library (both are built on libstdc++'s introsort), so the same input
// gives the same .dynsym as patchelf's.
std::vector<std::uint64_t> gnu_order(const std::optional<GnuHash>& hash, const std::vector<std::string_view>& names) {
    std::vector<std::uint64_t> new_index(names.size());
    std::iota(new_index.begin(), new_index.end(), 0);
    if (!hash || hash->symoffset >= names.size()) return new_index;
    struct Hashed {
        std::uint32_t bucket;
        std::uint64_t index;
    };
    std::vector<Hashed> order;
    for (std::uint64_t i = hash->symoffset; i < names.size(); ++i)
        order.push_back({gnu_hash(names[i]) % hash->buckets, i});
    std::sort(order.begin(), order.end(), [](const Hashed& a, const Hashed& b) { return a.bucket < b.bucket; });
    for (std::size_t i = 0; i < order.size(); ++i) new_index[order[i].index] = hash->symoffset + i;
    return new_index;
}

void write_gnu_hash(const ElfFile& elf, const GnuHash& hash, const std::vector<std::string_view>& names,
                    Overlay& overlay) {
    const ElfWriter writer = writer_for(elf);
    const std::uint64_t bits = writer.word_size() * 8;
    std::vector<std::uint64_t> bloom(hash.bloom_words, 0);
    std::vector<std::uint32_t> buckets(hash.buckets, 0), chains;
    for (std::uint64_t i = hash.symoffset; i < names.size(); ++i) {
        const std::uint32_t h = gnu_hash(names[i]);
        bloom[(h / bits) % hash.bloom_words] |= std::uint64_t(1) << (h % bits) | std::uint64_t(1) << ((h >> hash.shift) % bits);
        std::uint32_t& bucket = buckets[h % hash.buckets];
        if (bucket == 0) bucket = static_cast<std::uint32_t>(i);
        const bool last = i + 1 == names.size() || gnu_hash(names[i + 1]) % hash.buckets != h % hash.buckets;
        chains.push_back(last ? h | 1u : h & ~1u);
    }
    std::vector<std::uint8_t> bloom_bytes(bloom.size() * writer.word_size());
    for (std::size_t i = 0; i < bloom.size(); ++i) writer.word(bloom_bytes, i * writer.word_size(), bloom[i]);
    overlay.write(hash.bloom_at, std::move(bloom_bytes));
    hash.write(writer, buckets, chains, overlay);
}

void write_sysv_hash(const ElfFile& elf, const SysvHash& hash, const std::vector<std::string_view>& names,
                     const std::vector<bool>& local, Overlay& overlay) {
    const ElfWriter writer = writer_for(elf);
    std::vector<std::uint32_t> buckets(hash.buckets, 0), chains(names.size(), 0);
    for (std::uint64_t i = 1; i < names.size(); ++i) {
        if (local[i]) continue;
        std::uint32_t& head = buckets[sysv_hash(names[i]) % hash.buckets];
        chains[i] = head;
        head = static_cast<std::uint32_t>(i);
    }
    hash.write(writer, buckets, chains, overlay);
}

// The entries of `entsize` bytes in `table`, entry i moved to new_index[i].
std::vector<std::uint8_t> permuted(std::span<const std::uint8_t> table, std::uint64_t entsize,
                                   const std::vector<std::uint64_t>& new_index) {
    std::vector<std::uint8_t> moved(table.size());
    for (std::uint64_t i = 0; i < table.size() / entsize; ++i)
        std::copy_n(table.begin() + i * entsize, entsize, moved.begin() + new_index[i] * entsize);
    return moved;
}

// .dynsym and .gnu.version entries moved to their new indexes, st_name renamed.
void write_symbols(const ElfFile& elf, const EntryTable& table, const DynamicPlan& plan,
                   const std::vector<std::uint64_t>& new_index, Overlay& overlay) {
    const ElfBytes in = reader_for(elf);
    const ElfWriter writer = writer_for(elf);
    const auto original = in.span(in.table(table.offset, table.count, table.entsize, "dynamic symbol table"));
    std::vector<std::uint8_t> symbols(original.begin(), original.end());
    for (const PlannedSymbolName& renamed : plan.symbol_names)
        writer.u32(symbols, renamed.index * table.entsize, static_cast<std::uint32_t>(renamed.string.new_offset));
    if (is_identity(new_index)) {
        overlay.write(table.offset, std::move(symbols));
        return;
    }
    overlay.write(table.offset, permuted(symbols, table.entsize, new_index));
    if (const auto versym = table_offset(elf, DT_VERSYM, "the symbol version table"))
        overlay.write(*versym, permuted(in.span(in.table(*versym, table.count, 2, "symbol version table")), 2, new_index));
}

// Each relocation table is rewritten as one block (an overlay write per table, not
// per entry: libraries carry hundreds of thousands of relocations).
void remap_relocations(const ElfFile& elf, const std::vector<std::uint64_t>& new_index, Overlay& overlay) {
    const ElfBytes in = reader_for(elf);
    const ElfWriter writer = writer_for(elf);
    const bool is64 = writer.is64();
    const std::uint64_t w = writer.word_size();
    std::vector<std::pair<std::uint64_t, std::uint64_t>> written;  // [start, end) of blocks already rewritten
    for (const RelocationTable& table : relocation_tables(elf)) {
        const auto original = in.span(table.extent);
        std::vector<std::uint8_t> block(original.begin(), original.end());
        bool changed = false;
        for (std::uint64_t at = 0; at + table.entsize <= block.size(); at += table.entsize) {
            const std::uint64_t field = table.extent.offset + at + w;
            const bool seen = std::any_of(written.begin(), written.end(),
                                          [&](const auto& range) { return field >= range.first && field < range.second; });
            if (seen) continue;  // that table rewrote it
            const std::uint64_t info = in.word(field, "r_info");
            const std::uint64_t symbol = is64 ? info >> 32 : info >> 8;
            if (symbol >= new_index.size() || new_index[symbol] == symbol) continue;
            const std::uint64_t type = is64 ? info & 0xffffffffu : info & 0xffu;
            writer.word(block, at + w, is64 ? new_index[symbol] << 32 | type : new_index[symbol] << 8 | type);
            changed = true;
        }
        if (changed) {
            // a table overlapping one written before writes only what lies outside it
            std::uint64_t start = 0, end = block.size();
            for (const auto& [first, last] : written) {
                if (first <= table.extent.offset + start && last > table.extent.offset + start)
                    start = std::min(end, last - table.extent.offset);
                if (first < table.extent.offset + end && last >= table.extent.offset + end && first >= table.extent.offset + start)
                    end = first - table.extent.offset;
            }
            if (start < end)
                overlay.write(table.extent.offset + start,
                              std::vector<std::uint8_t>(block.begin() + static_cast<std::ptrdiff_t>(start),
                                                        block.begin() + static_cast<std::ptrdiff_t>(end)));
        }
        written.emplace_back(table.extent.offset, table.extent.offset + block.size());
    }
}

}  // namespace

void plan_symbol_renames(const ElfFile& elf, const Layout& layout, const EditRequest& request, DynamicPlan& plan) {
    if (request.rename_symbols.empty()) return;
    const std::map<std::string, std::string, std::less<>> renames(request.rename_symbols.begin(),
                                                                   request.rename_symbols.end());
    const EntryTable table = symbol_table(elf);
    const ElfBytes in = reader_for(elf);
    const Extent strings{layout.strings_offset, layout.strings_size};
    for (std::uint64_t i = 1; i < table.count; ++i) {
        const std::uint32_t name_offset = in.u32(table.at(i), "st_name");
        const std::string_view name = in.string_at(strings, name_offset, "symbol name");
        const auto renamed = renames.find(name);
        if (renamed == renames.end() || renamed->second == name) continue;
        plan.symbol_names.push_back({i, StringField{renamed->second, std::string(name), name_offset, 0}});
        plan.changes.push_back("dynamic symbol renamed: " + std::string(name) + " -> " + renamed->second);
    }
}

void write_symbol_renames(const ElfFile& elf, const DynamicPlan& plan, Overlay& overlay) {
    if (plan.symbol_names.empty()) return;
    const EntryTable table = symbol_table(elf);
    const std::optional<GnuHash> gnu = gnu_hash_table(elf, table);
    const std::optional<SysvHash> sysv = sysv_hash_table(elf, table);
    const std::vector<std::string_view> names = final_names(elf, plan);
    const std::vector<std::uint64_t> new_index = gnu_order(gnu, names);
    std::vector<std::string_view> ordered(names.size());
    for (std::size_t i = 0; i < names.size(); ++i) ordered[new_index[i]] = names[i];
    const bool reordered = !is_identity(new_index);
    if (reordered && elf.machine() == EM_MIPS)
        throw EditError("renaming these symbols would reorder .dynsym, which a MIPS GOT does not allow");
    write_symbols(elf, table, plan, new_index, overlay);
    if (reordered) remap_relocations(elf, new_index, overlay);
    if (gnu) write_gnu_hash(elf, *gnu, ordered, overlay);
    if (sysv) {
        // ld leaves local symbols (aarch64's section symbols) out of .hash: nobody looks them up
        std::vector<bool> local(names.size(), false);
        const auto& symbols = elf.dynamic_symbols();
        for (std::size_t i = 0; i < symbols.size(); ++i) local[new_index[i + 1]] = symbols[i].binding == STB_LOCAL;
        write_sysv_hash(elf, *sysv, ordered, local, overlay);
    }
}

}  // namespace wheelfix::elf::editor
