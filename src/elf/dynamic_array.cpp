// PT_DYNAMIC's array recognised in bytes read out of place (elf/dynamic_array.hpp).
#include "wheelfix/elf/dynamic_array.hpp"

#include "elf_bytes.hpp"

#include <elf.h>

#include <algorithm>
#include <iterator>

namespace wheelfix::elf {

namespace {
namespace dynamic_array {

bool known_tag(std::int64_t tag) {
    return (tag >= DT_NULL && tag <= DT_RELRENT) || (tag >= DT_VALRNGLO && tag <= DT_VERNEEDNUM) ||
           (tag >= DT_AUXILIARY && tag <= DT_FILTER);
}

bool mapped(const ElfFile& headers, std::uint64_t address) {
    return std::any_of(headers.program_headers().begin(), headers.program_headers().end(), [&](const ProgramHeader& ph) {
        return ph.type == PT_LOAD && address >= ph.vaddr && address - ph.vaddr < ph.memsz;
    });
}

bool reads_as_array(const ElfFile& headers, std::span<const std::uint8_t> bytes) {
    const ElfBytes in(bytes, headers.elf_class(), headers.endian());
    const std::uint64_t word = in.word_size(), entry = 2 * word;
    const std::uint64_t symbol_size = in.is64() ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
    bool strtab = false, symtab = false;
    for (std::uint64_t at = 0; at + entry <= bytes.size(); at += entry) {
        const std::int64_t tag = in.sword(at, "d_tag");
        const std::uint64_t value = in.word(at + word, "d_val");
        if (tag == DT_NULL) return strtab && symtab && at >= 4 * entry;
        if (!known_tag(tag)) return false;
        if (tag == DT_STRTAB || tag == DT_SYMTAB) {
            if (!mapped(headers, value)) return false;
            (tag == DT_STRTAB ? strtab : symtab) = true;
        }
        if (tag == DT_SYMENT && value != symbol_size) return false;
    }
    return false;
}

}  // namespace dynamic_array
}  // namespace

std::optional<std::size_t> find_dynamic_array(const ElfFile& headers, std::span<const std::uint8_t> bytes) {
    const auto& phs = headers.program_headers();
    const auto is_dynamic = [](const ProgramHeader& ph) { return ph.type == PT_DYNAMIC; };
    const auto dynamic = std::find_if(phs.begin(), phs.end(), is_dynamic);
    if (dynamic == phs.end() || std::any_of(std::next(dynamic), phs.end(), is_dynamic)) return std::nullopt;
    const std::uint64_t word = headers.elf_class() == Class::elf64 ? 8 : 4;
    if (dynamic->filesz < 8 * word || dynamic->filesz > kMaxDynamicArray) return std::nullopt;
    const auto size = static_cast<std::size_t>(dynamic->filesz);
    if (bytes.size() < size) return std::nullopt;
    // The quick test: the word at a position holds a tag from 1 to DT_RELRENT.
    const ElfBytes in(bytes, headers.elf_class(), headers.endian());
    const std::uint64_t last = bytes.size() - size;
    std::uint64_t from = 0;
    while (const auto at = in.find_word(from, last + 1, 1, DT_RELRENT, "dynamic array")) {
        if (dynamic_array::reads_as_array(headers, bytes.subspan(static_cast<std::size_t>(*at), size)))
            return static_cast<std::size_t>(*at);
        from = *at + 1;
    }
    return std::nullopt;
}

}  // namespace wheelfix::elf
