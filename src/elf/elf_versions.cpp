// GNU symbol versioning: verneed, verdef and versym.
//
// Contract: each table comes from its section (SHT_GNU_verneed / _verdef / _versym,
// names through sh_link) or, without section headers, from DT_VERNEED(NUM),
// DT_VERDEF(NUM) and DT_VERSYM with names from DT_STRTAB. Record chains are walked
// by their vn_next / vd_next / vna_next / vda_next links (a zero link ends a chain,
// as in ld.so); every record must lie inside the file, and the total number of
// records is capped by what the file could hold, so hostile counts cannot loop or
// allocate without bound. A versym index >= 2 must name a verdef (vd_ndx) or a
// verneed entry (vna_other); defined symbols look in verdef first, undefined ones
// in verneed first (copy-relocated definitions carry verneed versions).
#include "elf_parser.hpp"

#include <elf.h>

namespace wheelfix::elf {

namespace {

constexpr std::uint64_t kVerneedSize = 16;
constexpr std::uint64_t kVernauxSize = 16;
constexpr std::uint64_t kVerdefSize = 20;
constexpr std::uint64_t kVerdauxSize = 8;
constexpr std::uint16_t kVersymHidden = 0x8000;  // sym@VER: not the default version
constexpr std::uint16_t kVersymIndexMask = 0x7fff;

// Fails once more records were read than a file of this size can hold.
class RecordBudget {
public:
    RecordBudget(std::uint64_t file_size, std::uint64_t record_size, const char* what)
        : remaining_(file_size / record_size), what_(what) {}
    void take() {
        if (remaining_ == 0) fail(std::string(what_) + " has more records than the file can hold");
        --remaining_;
    }

private:
    std::uint64_t remaining_;
    const char* what_;
};

std::string_view version_string(const ElfBytes& in, const StringTable& strings,
                                std::uint64_t offset, const char* what) {
    if (!strings.present) fail(std::string(what) + " without a string table");
    return in.string_at(strings.extent, offset, what);
}

// Walks one chain of version records: at most `count` records of `size` bytes from
// `at`, each linked to the next by the 4-byte offset at `next_at` inside it (zero
// ends the chain, as in ld.so); visit(offset) reads each.
template <class Visit>
void walk_chain(const ElfBytes& in, RecordBudget& budget, std::uint64_t at, std::uint64_t count,
                std::uint64_t size, std::uint64_t next_at, const char* what, const char* next_name,
                const Visit& visit) {
    for (std::uint64_t i = 0; i < count; ++i) {
        budget.take();
        in.range(at, size, what);
        visit(at);
        const std::uint32_t next = in.u32(at + next_at, next_name);
        if (next == 0) break;
        at += next;
    }
}

// Version index -> the table entry that defines it, for one symbol lookup each.
struct VersionIndex {
    std::vector<const VersionDef*> defs;
    std::vector<std::pair<const VersionNeed*, const VersionNeedAux*>> needs;

    VersionIndex(const std::vector<VersionDef>& version_defs,
                 const std::vector<VersionNeed>& version_needs) {
        for (const VersionDef& def : version_defs) {
            if (def.index >= defs.size()) defs.resize(def.index + 1u, nullptr);
            if (defs[def.index] == nullptr) defs[def.index] = &def;
        }
        for (const VersionNeed& need : version_needs)
            for (const VersionNeedAux& aux : need.versions) {
                if (aux.other >= needs.size()) needs.resize(aux.other + 1u, {nullptr, nullptr});
                if (needs[aux.other].first == nullptr) needs[aux.other] = {&need, &aux};
            }
    }

    bool set_from_def(Symbol& symbol) const {
        if (symbol.version_index >= defs.size() || defs[symbol.version_index] == nullptr)
            return false;
        const VersionDef& def = *defs[symbol.version_index];
        if (def.names.empty()) fail("verdef " + std::to_string(def.index) + " has no name");
        symbol.version = def.names.front();
        return true;
    }

    bool set_from_need(Symbol& symbol) const {
        if (symbol.version_index >= needs.size() || needs[symbol.version_index].first == nullptr)
            return false;
        symbol.version = needs[symbol.version_index].second->name;
        symbol.version_file = needs[symbol.version_index].first->file;
        return true;
    }
};

}  // namespace

void Parser::read_versions() {
    if (const auto needs = version_table(SHT_GNU_verneed, DT_VERNEED, DT_VERNEEDNUM, "DT_VERNEED"))
        read_version_needs(*needs);
    if (const auto defs = version_table(SHT_GNU_verdef, DT_VERDEF, DT_VERDEFNUM, "DT_VERDEF"))
        read_version_defs(*defs);
    if (file_.symbols_.empty()) return;
    if (const std::optional<Extent> versym = versym_table()) apply_versym(*versym);
}

std::optional<VersionTableLocation> Parser::version_table(std::uint32_t section_type,
                                                          std::int64_t offset_tag,
                                                          std::int64_t count_tag,
                                                          const char* what) const {
    const std::uint64_t dynamic_count = file_.dynamic_value(count_tag).value_or(0);
    for (const SectionHeader& section : file_.sections_) {
        if (section.type != section_type) continue;
        StringTable strings = linked_string_table(section);
        if (!strings.present) strings = dynamic_strings();
        const std::uint64_t count = section.info != 0 ? section.info : dynamic_count;
        return VersionTableLocation{section.offset, count, strings};
    }
    if (const std::optional<std::uint64_t> address = file_.dynamic_value(offset_tag))
        return VersionTableLocation{mapped_offset(*address, what), dynamic_count,
                                    dynamic_strings()};
    return std::nullopt;
}

// Elf_Verneed: vn_version u16, vn_cnt u16, vn_file u32, vn_aux u32, vn_next u32.
// Elf_Vernaux: vna_hash u32, vna_flags u16, vna_other u16, vna_name u32, vna_next u32.
void Parser::read_version_needs(const VersionTableLocation& table) {
    RecordBudget budget(in_.file_size(), kVerneedSize, "version needs table");
    walk_chain(in_, budget, table.offset, table.count, kVerneedSize, 12, "verneed entry", "vn_next",
               [&](std::uint64_t at) {
        const std::uint32_t file_name = in_.u32(at + 4, "vn_file");
        VersionNeed need{version_string(in_, table.strings, file_name, "verneed file name"), file_name, at + 4, {}};
        walk_chain(in_, budget, at + in_.u32(at + 8, "vn_aux"), in_.u16(at + 2, "vn_cnt"), kVernauxSize, 12,
                   "vernaux entry", "vna_next", [&](std::uint64_t aux_at) {
            // walk_chain checked the record is in the file: only the name's string can fail.
            need.versions.push_back({version_string(in_, table.strings, in_.u32(aux_at + 8, "vna_name"), "vernaux name"),
                                     in_.u32(aux_at, "vna_hash"), in_.u16(aux_at + 4, "vna_flags"),
                                     in_.u16(aux_at + 6, "vna_other")});
        });
        file_.version_needs_.push_back(std::move(need));
    });
}

// Elf_Verdef: vd_version u16, vd_flags u16, vd_ndx u16, vd_cnt u16, vd_hash u32,
// vd_aux u32, vd_next u32. Elf_Verdaux: vda_name u32, vda_next u32.
void Parser::read_version_defs(const VersionTableLocation& table) {
    RecordBudget budget(in_.file_size(), kVerdauxSize, "version definitions table");
    walk_chain(in_, budget, table.offset, table.count, kVerdefSize, 16, "verdef entry", "vd_next",
               [&](std::uint64_t at) {
        VersionDef def;
        def.flags = in_.u16(at + 2, "vd_flags");
        def.index = in_.u16(at + 4, "vd_ndx");
        def.hash = in_.u32(at + 8, "vd_hash");
        walk_chain(in_, budget, at + in_.u32(at + 12, "vd_aux"), in_.u16(at + 6, "vd_cnt"), kVerdauxSize, 4,
                   "verdaux entry", "vda_next", [&](std::uint64_t aux_at) {
            def.names.push_back(version_string(in_, table.strings, in_.u32(aux_at, "vda_name"), "verdaux name"));
        });
        file_.version_defs_.push_back(std::move(def));
    });
}

std::optional<Extent> Parser::versym_table() const {
    const std::uint64_t needed_size = 2 * (file_.symbols_.size() + 1);
    for (const SectionHeader& section : file_.sections_) {
        if (section.type != SHT_GNU_versym) continue;
        if (section.size < needed_size) fail("versym table is shorter than the symbol table");
        return in_.range(section.offset, needed_size, "versym table");
    }
    if (const std::optional<std::uint64_t> address = file_.dynamic_value(DT_VERSYM))
        return in_.range(mapped_offset(*address, "DT_VERSYM"), needed_size, "versym table");
    return std::nullopt;
}

void Parser::apply_versym(Extent versym) {
    const VersionIndex versions(file_.version_defs_, file_.version_needs_);
    for (std::uint64_t i = 0; i < file_.symbols_.size(); ++i) {
        Symbol& symbol = file_.symbols_[i];
        const std::uint16_t raw = in_.u16(versym.offset + 2 * (i + 1), "versym entry");
        symbol.version_index = raw & kVersymIndexMask;
        symbol.version_hidden = (raw & kVersymHidden) != 0;
        if (symbol.version_index <= VER_NDX_GLOBAL) continue;
        const bool found = symbol.defined()
                               ? versions.set_from_def(symbol) || versions.set_from_need(symbol)
                               : versions.set_from_need(symbol) || versions.set_from_def(symbol);
        if (!found)
            fail("dynamic symbol " + std::to_string(i + 1) + " has version index " +
                 std::to_string(symbol.version_index) + " with no verdef or verneed entry");
    }
}

}  // namespace wheelfix::elf
