// Editor stage 4a: the edited dynamic table and verneed file fields as bytes.
//
// Contract: final_entries turns the planned entries into DynamicEntry values:
// string entries take the offsets place_strings chose, DT_STRTAB/DT_STRSZ the new
// table's address and size, and MIPS's DT_MIPS_RLD_MAP_REL (relative to its own
// entry's address) is corrected for the entry's new address. encode_dynamic writes
// them in the file's class and byte order into exactly `capacity` slots, the rest
// DT_NULL. write_verneed_files rewrites the vn_file fields whose offset changed.
#include "editor_internal.hpp"

#include <elf.h>

#include <limits>
#include <stdexcept>

namespace wheelfix::elf::editor {

namespace {

constexpr std::int64_t kMipsRldMapRel = 0x70000035;  // DT_MIPS_RLD_MAP_REL

std::uint64_t to_class_width(const ElfFile& elf, std::uint64_t value) {
    return elf.elf_class() == Class::elf64 ? value : value & std::numeric_limits<std::uint32_t>::max();
}

}  // namespace

std::vector<DynamicEntry> final_entries(const ElfFile& elf, const Layout& layout,
                                        const DynamicPlan& plan, StringTableAddress strings,
                                        std::uint64_t new_dynamic_vaddr) {
    const std::uint64_t entry_size = writer_for(elf).dynamic_entry_size();
    std::vector<DynamicEntry> entries;
    entries.reserve(plan.entries.size());
    for (std::size_t i = 0; i < plan.entries.size(); ++i) {
        const PlannedEntry& planned = plan.entries[i];
        DynamicEntry entry = planned.entry;
        if (planned.string) entry.value = planned.string->new_offset;
        if (entry.tag == DT_STRTAB) entry.value = strings.vaddr;
        if (entry.tag == DT_STRSZ) entry.value = strings.size;
        if (entry.tag == kMipsRldMapRel && elf.machine() == EM_MIPS && planned.original_index) {
            const std::uint64_t old_address =
                layout.dynamic_vaddr + *planned.original_index * entry_size;
            const std::uint64_t new_address = new_dynamic_vaddr + i * entry_size;
            entry.value = to_class_width(elf, entry.value + old_address - new_address);
        }
        entries.push_back(entry);
    }
    return entries;
}

std::vector<std::uint8_t> encode_dynamic(const ElfWriter& writer,
                                         const std::vector<DynamicEntry>& entries,
                                         std::uint64_t capacity) {
    if (entries.size() + 1 > capacity)
        throw std::logic_error("dynamic table encoded into too few slots");
    std::vector<std::uint8_t> bytes(capacity * writer.dynamic_entry_size(), 0);
    for (std::size_t i = 0; i < entries.size(); ++i)
        writer.dynamic_entry(bytes, i * writer.dynamic_entry_size(), entries[i]);
    return bytes;
}

void write_verneed_files(const ElfFile& elf, const DynamicPlan& plan, Overlay& overlay) {
    const ElfWriter writer = writer_for(elf);
    for (const PlannedVerneedFile& file : plan.verneed_files) {
        if (file.string.new_offset == *file.string.old_offset) continue;
        std::vector<std::uint8_t> field(4);
        writer.u32(field, 0, static_cast<std::uint32_t>(file.string.new_offset));
        overlay.write(file.field_offset, std::move(field));
    }
}

}  // namespace wheelfix::elf::editor
