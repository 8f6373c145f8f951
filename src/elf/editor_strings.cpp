// Editor stage 3: where every string of the edited dynamic table goes.
//
// Contract: place_strings(elf, layout, plan) gives every StringField that needs a
// place (a changed or new one; after an earlier wheelfix edit also every one in
// the appended tail, which is rebuilt from scratch so repeated edits do not pile
// up dead strings) its offset in the new .dynstr, preferring in this order:
// 1. an identical NUL-terminated string already in the table, the tail of a longer
//    one included (what the linker's tail merging does);
// 2. a released slot: the NUL-delimited run that held a string a changed field
//    used to reference, when no live reference points anywhere into that run. Live
//    references are the dynamic symbols' names, verneed/verdef names, unchanged
//    fields, and the value of every dynamic entry with a tag not known to hold
//    something else. A run shared with a symbol name (the RPATH being the tail of
//    a symbol) is therefore never written. The smallest slot that fits is used and
//    the rest of it zeroed; released slots left unused are zeroed too, so the old
//    value does not linger. No slot is released when a section the editor does not
//    model links to .dynstr.
// 3. the end of the table, which then grows (PlacedStrings::grew()).
// Searches for an existing string scan the table; past 16 of them (a rename of
// thousands of symbols) an index of string tails answers instead, with the same
// first-occurrence result.
// The base table is the input's .dynstr, or after an earlier wheelfix edit its
// original part (the size the segment header records).
#include "editor_internal.hpp"

#include <elf.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <unordered_map>

namespace wheelfix::elf::editor {

namespace {

// Dynamic tags whose value is known not to be a string offset.
constexpr std::array kNonStringTags{
    DT_PLTRELSZ,      DT_PLTGOT,        DT_HASH,           DT_STRTAB,
    DT_SYMTAB,        DT_RELA,          DT_RELASZ,         DT_RELAENT,
    DT_STRSZ,         DT_SYMENT,        DT_INIT,           DT_FINI,
    DT_SYMBOLIC,      DT_REL,           DT_RELSZ,          DT_RELENT,
    DT_PLTREL,        DT_DEBUG,         DT_TEXTREL,        DT_JMPREL,
    DT_BIND_NOW,      DT_INIT_ARRAY,    DT_FINI_ARRAY,     DT_INIT_ARRAYSZ,
    DT_FINI_ARRAYSZ,  DT_FLAGS,         DT_PREINIT_ARRAY,  DT_PREINIT_ARRAYSZ,
    DT_SYMTAB_SHNDX,  DT_RELRSZ,        DT_RELR,           DT_RELRENT,
    DT_GNU_HASH,      DT_VERSYM,        DT_RELACOUNT,      DT_RELCOUNT,
    DT_FLAGS_1,       DT_VERDEF,        DT_VERDEFNUM,      DT_VERNEED,
    DT_VERNEEDNUM,    DT_GNU_PRELINKED, DT_CHECKSUM,       DT_GNU_LIBLIST,
    DT_GNU_LIBLISTSZ, DT_GNU_CONFLICT,  DT_GNU_CONFLICTSZ, DT_PLTPADSZ,
    DT_MOVEENT,       DT_MOVESZ,        DT_POSFLAG_1,      DT_SYMINSZ,
    DT_SYMINENT,      DT_SYMINFO,       DT_MOVETAB,        DT_TLSDESC_PLT,
    DT_TLSDESC_GOT};

bool is_non_string_tag(std::int64_t tag) {
    return std::find(kNonStringTags.begin(), kNonStringTags.end(), tag) != kNonStringTags.end();
}

// Offsets into the table that something outside the editor's fields refers to.
class FixedReferences {
public:
    FixedReferences(const ElfFile& elf, const Layout& layout)
        : table_(elf.bytes().data() + layout.strings_offset), size_(layout.strings_size) {
        for (const Symbol& symbol : elf.dynamic_symbols()) add(symbol.name);
        for (const VersionNeed& need : elf.version_needs())
            for (const VersionNeedAux& aux : need.versions) add(aux.name);
        for (const VersionDef& def : elf.version_defs())
            for (std::string_view name : def.names) add(name);
        for (const DynamicEntry& entry : elf.dynamic())
            if (!is_string_tag(entry.tag) && !is_non_string_tag(entry.tag) && entry.value < size_)
                offsets_.push_back(entry.value);
    }
    const std::vector<std::uint64_t>& offsets() const { return offsets_; }

private:
    // Names are views into the image; those inside the table are references to it.
    void add(std::string_view name) {
        const auto* start = reinterpret_cast<const std::uint8_t*>(name.data());
        if (start == nullptr || start < table_ || start >= table_ + size_) return;
        offsets_.push_back(static_cast<std::uint64_t>(start - table_));
    }
    const std::uint8_t* table_;
    std::uint64_t size_;
    std::vector<std::uint64_t> offsets_;
};

// Where strings of at least kKey characters end in a table, by their last kKey
// characters: finds the first NUL-terminated occurrence of a string (a whole run or
// the tail of one) without scanning the table, for requests that place thousands of
// strings (--rename-dynamic-symbols). The base table's index is a sorted vector (16
// bytes a string); the appended strings', which grows as strings are placed, a hash.
class TailIndex {
public:
    static constexpr std::size_t kKey = 8;

    static std::optional<std::uint64_t> key_of(const std::uint8_t* end) {  // the kKey bytes before end
        if (std::find(end - kKey, end, std::uint8_t{0}) != end) return std::nullopt;
        std::uint64_t key = 0;
        std::memcpy(&key, end - kKey, kKey);
        return key;
    }
    static std::uint64_t key_of(std::string_view text) {  // text.size() >= kKey, no NUL
        return *key_of(reinterpret_cast<const std::uint8_t*>(text.data() + text.size()));
    }
    static bool ends_at(const std::vector<std::uint8_t>& table, std::uint64_t nul, std::string_view text) {
        return nul >= text.size() && std::memcmp(table.data() + nul - text.size(), text.data(), text.size()) == 0;
    }

    void build(const std::vector<std::uint8_t>& table) {
        entries_.clear();
        for (std::uint64_t at = kKey; at < table.size(); ++at)
            if (table[at] == 0)
                if (const auto key = key_of(table.data() + at)) entries_.push_back({*key, at});
        std::sort(entries_.begin(), entries_.end());
    }

    // The smallest start of `text` followed by a NUL in `table` (text.size() >= kKey).
    std::optional<std::uint64_t> find(const std::vector<std::uint8_t>& table, std::string_view text) const {
        const std::uint64_t key = key_of(text);
        for (auto it = std::lower_bound(entries_.begin(), entries_.end(), Entry{key, 0});
             it != entries_.end() && it->key == key; ++it)
            if (ends_at(table, it->nul, text)) return it->nul - text.size();
        return std::nullopt;
    }

private:
    struct Entry {
        std::uint64_t key;
        std::uint64_t nul;
        bool operator<(const Entry& other) const { return key != other.key ? key < other.key : nul < other.nul; }
    };
    std::vector<Entry> entries_;
};

class StringTablePlanner {
public:
    StringTablePlanner(std::span<const std::uint8_t> base, std::vector<std::uint64_t> live)
        : base_(base.begin(), base.end()), live_(std::move(live)) {
        std::sort(live_.begin(), live_.end());
    }

    // Makes the run holding `offset` reusable if nothing live points into it.
    void release(std::uint64_t offset) {
        if (offset == 0 || offset >= base_.size()) return;
        const Run run = run_at(offset);
        if (run.end == run.start || has_live_reference(run)) return;
        if (std::find(free_.begin(), free_.end(), run) == free_.end()) free_.push_back(run);
    }

    std::uint64_t place(std::string_view text) {
        if (const auto offset = find_existing(text)) return *offset;
        if (const auto offset = write_into_free_run(text)) return *offset;
        return append(text);
    }

    PlacedStrings finish() {
        for (const Run& run : free_) std::fill(base_.begin() + run.start, base_.begin() + run.end, 0);
        PlacedStrings placed{std::move(base_), 0};
        placed.base_size = placed.table.size();
        placed.table.insert(placed.table.end(), appended_.begin(), appended_.end());
        return placed;
    }

private:
    struct Run {  // [start, end): the characters of one NUL-terminated run; end is its NUL
        std::uint64_t start;
        std::uint64_t end;
        bool operator==(const Run&) const = default;
    };

    Run run_at(std::uint64_t offset) const {
        std::uint64_t start = offset;
        while (start > 0 && base_[start - 1] != 0) --start;
        std::uint64_t end = offset;
        while (end < base_.size() && base_[end] != 0) ++end;
        return {start, end};
    }

    bool has_live_reference(const Run& run) const {
        const auto it = std::lower_bound(live_.begin(), live_.end(), run.start);
        return it != live_.end() && *it <= run.end;
    }

    void claim(std::uint64_t offset) {
        std::erase_if(free_,
                      [offset](const Run& run) { return offset >= run.start && offset <= run.end; });
        live_.insert(std::upper_bound(live_.begin(), live_.end(), offset), offset);
    }

    // The first occurrence of `needle` (a string and its NUL) in `table`.
    static std::optional<std::uint64_t> search(const std::vector<std::uint8_t>& table,
                                               const std::vector<std::uint8_t>& needle) {
        const auto found = std::search(table.begin(), table.end(),
                                       std::boyer_moore_horspool_searcher(needle.begin(), needle.end()));
        if (found == table.end()) return std::nullopt;
        return static_cast<std::uint64_t>(found - table.begin());
    }

    std::optional<std::uint64_t> find_existing(std::string_view text) {
        if (use_index(text)) return find_indexed(text);
        std::vector<std::uint8_t> needle(text.begin(), text.end());
        needle.push_back(0);
        if (const auto offset = search(base_, needle)) {
            claim(*offset);
            return *offset;
        }
        if (const auto offset = search(appended_, needle)) return base_.size() + *offset;
        return std::nullopt;
    }

    // Past a few searches the tables are indexed (TailIndex) instead of scanned;
    // either way the answer is the first occurrence.
    static constexpr std::size_t kScansBeforeIndex = 16;
    bool use_index(std::string_view text) {
        ++searches_;
        return text.size() >= TailIndex::kKey && searches_ > kScansBeforeIndex;
    }

    std::optional<std::uint64_t> find_indexed(std::string_view text) {
        if (!base_indexed_) {
            base_index_.build(base_);
            appended_tails_.clear();
            for (std::uint64_t at = 0; at < appended_.size(); ++at)
                if (appended_[at] == 0) index_appended_string_ending_at(at);
            base_indexed_ = true;
        }
        if (const auto offset = base_index_.find(base_, text)) {
            claim(*offset);
            return *offset;
        }
        std::optional<std::uint64_t> first;
        const auto [begin, end] = appended_tails_.equal_range(TailIndex::key_of(text));
        for (auto it = begin; it != end; ++it)
            if (TailIndex::ends_at(appended_, it->second, text) && (!first || it->second - text.size() < *first))
                first = it->second - text.size();
        if (first) return base_.size() + *first;
        return std::nullopt;
    }

    void index_appended_string_ending_at(std::uint64_t nul) {
        if (nul < TailIndex::kKey) return;
        if (const auto key = TailIndex::key_of(appended_.data() + nul)) appended_tails_.emplace(*key, nul);
    }

    std::optional<std::uint64_t> write_into_free_run(std::string_view text) {
        std::optional<std::size_t> best;
        for (std::size_t i = 0; i < free_.size(); ++i) {
            const std::uint64_t room = free_[i].end - free_[i].start;
            if (room >= text.size() && (!best || room < free_[*best].end - free_[*best].start)) best = i;
        }
        if (!best) return std::nullopt;
        const Run run = free_[*best];
        std::fill(base_.begin() + run.start, base_.begin() + run.end, 0);
        std::memcpy(base_.data() + run.start, text.data(), text.size());
        claim(run.start);
        base_indexed_ = false;  // the base table changed: index it again when next needed
        return run.start;
    }

    std::uint64_t append(std::string_view text) {
        const std::uint64_t offset = base_.size() + appended_.size();
        appended_.insert(appended_.end(), text.begin(), text.end());
        appended_.push_back(0);
        if (base_indexed_) index_appended_string_ending_at(appended_.size() - 1);
        return offset;
    }

    std::vector<std::uint8_t> base_;
    std::vector<std::uint8_t> appended_;
    std::vector<std::uint64_t> live_;  // sorted
    std::vector<Run> free_;
    std::size_t searches_ = 0;
    bool base_indexed_ = false;
    TailIndex base_index_;
    std::unordered_multimap<std::uint64_t, std::uint64_t> appended_tails_;  // last kKey chars -> NUL
};

std::vector<StringField*> all_fields(DynamicPlan& plan) {
    std::vector<StringField*> fields;
    for (PlannedEntry& entry : plan.entries)
        if (entry.string) fields.push_back(&*entry.string);
    for (PlannedVerneedFile& file : plan.verneed_files) fields.push_back(&file.string);
    for (PlannedSymbolName& symbol : plan.symbol_names) fields.push_back(&symbol.string);
    return fields;
}

// The original part of the table: all of it, or what precedes our appended tail
// when every fixed reference lies before that tail.
std::uint64_t base_size(const Layout& layout, const std::vector<std::uint64_t>& fixed) {
    if (!layout.appended) return layout.strings_size;
    const std::uint64_t base = layout.appended->base_strings_size;
    const bool fixed_in_base =
        std::all_of(fixed.begin(), fixed.end(), [base](auto o) { return o < base; });
    return fixed_in_base ? base : layout.strings_size;
}

bool needs_place(const StringField& field, std::uint64_t base) {
    return field.changed() || *field.old_offset >= base;
}

}  // namespace

PlacedStrings place_strings(const ElfFile& elf, const Layout& layout, DynamicPlan& plan) {
    std::vector<std::uint64_t> live = FixedReferences(elf, layout).offsets();
    const std::uint64_t base = base_size(layout, live);
    const std::vector<StringField*> fields = all_fields(plan);
    for (const StringField* field : fields)
        if (!needs_place(*field, base)) live.push_back(*field->old_offset);
    StringTablePlanner planner(elf.bytes().subspan(layout.strings_offset, base), std::move(live));
    if (!layout.strings_have_unknown_users)
        for (const DynamicEntry& entry : elf.dynamic())
            if (is_string_tag(entry.tag)) planner.release(entry.value);
    if (!layout.strings_have_unknown_users)
        for (const VersionNeed& need : elf.version_needs()) planner.release(need.file_name);
    for (StringField* field : fields)
        field->new_offset = needs_place(*field, base) ? planner.place(field->text) : *field->old_offset;
    return planner.finish();
}

}  // namespace wheelfix::elf::editor
