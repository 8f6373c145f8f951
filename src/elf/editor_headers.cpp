// Header edits that never move anything: plan_header_edits (contract in
// elf/editor.hpp): EI_OSABI, PT_GNU_STACK's PF_X, .gnu.version entries.
#include "editor_internal.hpp"
#include "elf_layout.hpp"
#include "elf_parser.hpp"

#include <elf.h>

#include <algorithm>

namespace wheelfix::elf {

namespace {

using namespace editor;

constexpr std::uint64_t kOsAbiOffset = 7;  // e_ident[EI_OSABI]

void set_os_abi(const ElfFile& elf, std::uint8_t abi, Overlay& overlay, std::vector<std::string>& changes) {
    if (elf.os_abi() == abi) return;
    overlay.write(kOsAbiOffset, {abi});
    changes.push_back("OS ABI: " + std::to_string(elf.os_abi()) + " -> " + std::to_string(abi));
}

// A file without PT_GNU_STACK gets patchelf's header, in a PT_NULL slot or added by
// the dynamic editor.
void set_execstack(const ElfFile& elf, bool executable, Overlay& overlay, HeaderPlan& plan) {
    const ElfBytes in = reader_for(elf);
    const HeaderTables tables = read_header_tables(in);
    const std::uint64_t phoff = tables.program_headers.offset, phentsize = tables.program_headers.entsize;
    const auto& headers = elf.program_headers();
    for (std::size_t i = 0; i < headers.size(); ++i) {
        if (headers[i].type != PT_GNU_STACK) continue;
        const std::uint32_t flags = executable ? headers[i].flags | PF_X : headers[i].flags & ~std::uint32_t(PF_X);
        if (flags == headers[i].flags) return;
        std::vector<std::uint8_t> field(4);
        writer_for(elf).u32(field, 0, flags);
        overlay.write(phoff + i * phentsize + program_header_flags_at(in.is64()), std::move(field));
        plan.changes.push_back(std::string("execstack: ") + (executable ? "- -> X" : "X -> -"));
        return;
    }
    const ProgramHeader stack{PT_GNU_STACK, PF_R | PF_W | (executable ? PF_X : 0u), 0, 0, 0, 0, 0, 1};
    plan.changes.push_back(std::string("execstack: ? -> ") + (executable ? "X" : "-") + " (PT_GNU_STACK added)");
    for (std::size_t i = 0; i < headers.size(); ++i) {
        if (headers[i].type != PT_NULL) continue;
        const ElfWriter writer = writer_for(elf);
        const auto original = in.span(in.range(phoff + i * phentsize, phentsize, "program header"));
        std::vector<std::uint8_t> entry(original.begin(), original.end());
        writer.program_header(entry, 0, stack);
        overlay.write(phoff + i * phentsize, std::move(entry));
        return;
    }
    plan.add_program_header = stack;
}

std::optional<std::uint64_t> versym_offset(const ElfFile& elf) {
    for (const SectionHeader& section : elf.sections())
        if (section.type == SHT_GNU_versym) return section.offset;
    for (const DynamicEntry& entry : elf.dynamic())
        if (entry.tag == DT_VERSYM) return elf.vaddr_to_offset(entry.value);
    return std::nullopt;
}

void clear_symbol_versions(const ElfFile& elf, const std::vector<std::string>& names, Overlay& overlay,
                           std::vector<std::string>& changes) {
    const std::optional<std::uint64_t> versym = versym_offset(elf);
    if (!versym) throw EditError("no symbol version table (.gnu.version) to clear versions in");
    const ElfBytes in = reader_for(elf);
    const auto& symbols = elf.dynamic_symbols();  // symbol i + 1 of .dynsym
    for (std::size_t i = 0; i < symbols.size(); ++i) {
        if (std::find(names.begin(), names.end(), symbols[i].name) == names.end()) continue;
        const std::uint64_t at = *versym + (i + 1) * 2;
        if (in.u16(at, "versym entry") == VER_NDX_GLOBAL) continue;
        std::vector<std::uint8_t> field(2);
        writer_for(elf).u16(field, 0, VER_NDX_GLOBAL);
        overlay.write(at, std::move(field));
        changes.push_back("symbol version cleared: " + std::string(symbols[i].name) +
                          (symbols[i].version.empty() ? "" : "@" + std::string(symbols[i].version)));
    }
}

}  // namespace

HeaderPlan plan_header_edits(const ElfFile& elf, const HeaderRequest& request) {
    HeaderPlan plan;
    Overlay overlay(elf.bytes());
    if (request.os_abi) set_os_abi(elf, *request.os_abi, overlay, plan.changes);
    if (request.executable_stack) set_execstack(elf, *request.executable_stack, overlay, plan);
    if (!request.clear_symbol_version.empty())
        clear_symbol_versions(elf, request.clear_symbol_version, overlay, plan.changes);
    plan.edits = overlay.edits(elf.bytes().size());
    return plan;
}

}  // namespace wheelfix::elf
