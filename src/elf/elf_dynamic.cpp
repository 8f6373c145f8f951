// The dynamic table and the dynamic string table.
//
// Contract: the table is found the way ld.so finds it, through PT_DYNAMIC (a file
// with two is refused: ld.so takes the last, readelf the first); only a file
// without PT_DYNAMIC falls back to its SHT_DYNAMIC section. Entries are read
// up to DT_NULL, which must occur inside the table. The strings come from
// DT_STRTAB (a virtual address mapped through the PT_LOAD segments) and DT_STRSZ;
// if DT_STRTAB maps to no segment, the string table the SHT_DYNAMIC section links
// to is used instead. Every string-valued entry (NEEDED, SONAME, RPATH, RUNPATH,
// AUXILIARY, FILTER) is validated here, so the ElfFile accessors never throw.
// A table that gives one of the tags locating the string, symbol, hash or version
// tables (or SONAME) twice with different values is refused: ld.so takes the last
// one, readers and editors the first, so no reading of such a file is safe.
#include "elf_parser.hpp"

#include <elf.h>

#include <algorithm>

namespace wheelfix::elf {

namespace {

bool is_string_tag(std::int64_t tag) {
    switch (tag) {
    case DT_NEEDED:
    case DT_SONAME:
    case DT_RPATH:
    case DT_RUNPATH:
    case DT_AUXILIARY:
    case DT_FILTER: return true;
    default: return false;
    }
}

// Tags that name one table each: a second, different value makes the file ambiguous.
bool is_single_valued(std::int64_t tag) {
    switch (tag) {
    case DT_STRTAB:
    case DT_STRSZ:
    case DT_SYMTAB:
    case DT_SYMENT:
    case DT_HASH:
    case DT_GNU_HASH:
    case DT_SONAME:
    case DT_VERSYM:
    case DT_VERNEED:
    case DT_VERNEEDNUM:
    case DT_VERDEF:
    case DT_VERDEFNUM: return true;
    default: return false;
    }
}

}  // namespace

void Parser::read_dynamic() {
    const std::optional<Extent> table = locate_dynamic_table();
    if (!table) return;
    file_.has_dynamic_ = true;
    read_dynamic_entries(*table);
    locate_dynamic_strings();
    check_dynamic_strings();
}

const SectionHeader* Parser::dynamic_section_header() const {
    for (const SectionHeader& section : file_.sections_)
        if (section.type == SHT_DYNAMIC) return &section;
    return nullptr;
}

std::optional<Extent> Parser::locate_dynamic_table() const {
    const auto dynamic_segments = std::count_if(file_.program_headers_.begin(), file_.program_headers_.end(),
                                                [](const ProgramHeader& ph) { return ph.type == PT_DYNAMIC; });
    if (dynamic_segments > 1)
        fail(std::to_string(dynamic_segments) + " PT_DYNAMIC segments (ld.so reads the last, other readers the first)");
    // A separate debug-info file (objcopy --only-keep-debug) keeps the program headers
    // but not the loaded bytes: its .dynamic is SHT_NOBITS, and PT_DYNAMIC's offset
    // points at whatever follows. It has no dynamic table to read (patchelf says the same).
    for (const SectionHeader& section : file_.sections_)
        if (section.type == SHT_NOBITS && section.name == ".dynamic") return std::nullopt;
    for (const ProgramHeader& ph : file_.program_headers_)
        if (ph.type == PT_DYNAMIC) return in_.range(ph.offset, ph.filesz, "PT_DYNAMIC segment");
    if (const SectionHeader* section = dynamic_section_header())
        return in_.range(section->offset, section->size, "dynamic section");
    return std::nullopt;
}

void Parser::read_dynamic_entries(Extent table) {
    const std::uint64_t entsize = 2 * in_.word_size();
    const std::uint64_t capacity = table.size / entsize;
    std::vector<DynamicEntry> first_of_single;  // at most one per single-valued tag
    for (std::uint64_t i = 0; i < capacity; ++i) {
        const std::uint64_t at = table.offset + i * entsize;
        DynamicEntry entry;
        entry.tag = in_.sword(at, "d_tag");
        entry.value = in_.word(at + in_.word_size(), "d_val");
        if (entry.tag == DT_NULL) return;
        if (is_single_valued(entry.tag)) {
            auto earlier = std::find_if(first_of_single.begin(), first_of_single.end(),
                                        [&](const DynamicEntry& seen) { return seen.tag == entry.tag; });
            if (earlier == first_of_single.end())
                first_of_single.push_back(entry);
            else if (earlier->value != entry.value)
                fail("dynamic tag " + hex(static_cast<std::uint64_t>(entry.tag)) + " given twice, " +
                     hex(earlier->value) + " and " + hex(entry.value));
        }
        file_.dynamic_.push_back(entry);
    }
    fail("dynamic section has no DT_NULL terminator");
}

std::uint64_t Parser::mapped_offset(std::uint64_t vaddr, const char* what) const {
    const std::optional<std::uint64_t> offset = file_.vaddr_to_offset(vaddr);
    if (!offset) fail(std::string(what) + " " + hex(vaddr) + " is not inside any PT_LOAD segment");
    return *offset;
}

void Parser::locate_dynamic_strings() {
    const std::optional<std::uint64_t> address = file_.dynamic_value(DT_STRTAB);
    if (!address) return;
    Extent strings;
    if (const std::optional<std::uint64_t> offset = file_.vaddr_to_offset(*address)) {
        // Without DT_STRSZ the table runs at most to the end of the file.
        const std::uint64_t rest_of_file = in_.file_size() - std::min(*offset, in_.file_size());
        const std::optional<std::uint64_t> strsz = file_.dynamic_value(DT_STRSZ);
        const std::uint64_t size = strsz.value_or(rest_of_file);
        // Without DT_STRSZ nothing says how far the names go: only those used are read.
        if (strsz) require_bounded_strings(size, "dynamic string table (DT_STRSZ)");
        strings = in_.range(*offset, size, "dynamic string table (DT_STRTAB/DT_STRSZ)");
    } else {
        const SectionHeader* section = dynamic_section_header();
        const StringTable linked = section ? linked_string_table(*section) : StringTable{};
        if (!linked.present) mapped_offset(*address, "DT_STRTAB");  // throws
        strings = linked.extent;
        require_bounded_strings(strings.size, "dynamic string table");
    }
    file_.dynstr_offset_ = strings.offset;
    file_.dynstr_size_ = strings.size;
}

void Parser::require_bounded_strings(std::uint64_t size, const char* what) const {
    if (size > kMaxDynamicStrings)
        fail(std::string(what) + " of " + std::to_string(size) + " bytes, over wheelfix's limit of " +
             std::to_string(kMaxDynamicStrings >> 20) + " MiB");
}

void Parser::check_dynamic_strings() const {
    for (const DynamicEntry& entry : file_.dynamic_)
        if (is_string_tag(entry.tag)) file_.dynstr_at(entry.value);
}

// The dynamic string table, as the version tables found through DT_* use it.
StringTable Parser::dynamic_strings() const {
    if (file_.dynstr_size_ == 0) return {};
    return {{file_.dynstr_offset_, file_.dynstr_size_}, true};
}

}  // namespace wheelfix::elf
