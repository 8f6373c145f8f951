// ElfFile's accessors, is_elf and machine names (the parsing is in elf_parser.hpp).
//
// Contract: accessors only read what parse() already validated, so they do not
// throw, except section_bytes(), which checks the section it is handed.
#include "elf_bytes.hpp"
#include "elf_parser.hpp"

#include <wheelfix/elf/elf_file.hpp>
#include <wheelfix/util/timings.hpp>

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace wheelfix::elf {

ElfFile ElfFile::parse(std::span<const std::uint8_t> bytes) { return parse(bytes, nullptr); }

ElfFile ElfFile::parse(std::span<const std::uint8_t> bytes, const ByteRanges* present) {
    const timings::Scope timer(timings::Phase::parse);
    return Parser(bytes, present).run();
}

ElfFile ElfFile::parse_as_loader(std::span<const std::uint8_t> bytes, const ByteRanges* present) {
    return Parser(bytes, present).without_sections().run();
}

ElfFile ElfFile::parse_headers(std::span<const std::uint8_t> bytes, const ByteRanges* present) {
    return Parser(bytes, present).run_headers();
}

bool is_elf(std::span<const std::uint8_t> bytes) {
    return bytes.size() >= SELFMAG && std::memcmp(bytes.data(), ELFMAG, SELFMAG) == 0;
}

const SectionHeader* ElfFile::section(std::string_view name) const {
    for (const SectionHeader& candidate : sections_)
        if (candidate.name == name) return &candidate;
    return nullptr;
}

std::span<const std::uint8_t> ElfFile::section_bytes(const SectionHeader& section) const {
    if (section.type == SHT_NOBITS) return {};
    const ElfBytes in(bytes_, class_, endian_, present_);
    return in.span(in.range(section.offset, section.size, "section data"));
}

std::span<const std::uint8_t> ElfFile::section_image(const SectionHeader& section) const {
    if (section.type == SHT_NOBITS) return {};
    const ElfBytes in(bytes_, class_, endian_);
    return in.span(in.range(section.offset, section.size, "section data"));
}

std::span<const std::uint8_t> ElfFile::bytes_at(std::uint64_t offset, std::uint64_t size) const {
    if (offset >= bytes_.size()) return {};
    size = std::min<std::uint64_t>(size, bytes_.size() - offset);
    require_present(present_, offset, offset + size);
    return bytes_.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(size));
}

std::vector<std::string_view> ElfFile::needed() const {
    std::vector<std::string_view> names;
    for (const DynamicEntry& entry : dynamic_)
        if (entry.tag == DT_NEEDED) names.push_back(dynstr_at(entry.value));
    return names;
}

std::optional<std::string_view> ElfFile::dynamic_string(std::int64_t tag) const {
    const std::optional<std::uint64_t> offset = dynamic_value(tag);
    if (!offset) return std::nullopt;
    return dynstr_at(*offset);
}

std::optional<std::string_view> ElfFile::soname() const { return dynamic_string(DT_SONAME); }
std::optional<std::string_view> ElfFile::rpath() const { return dynamic_string(DT_RPATH); }
std::optional<std::string_view> ElfFile::runpath() const { return dynamic_string(DT_RUNPATH); }

std::optional<std::uint64_t> ElfFile::dynamic_value(std::int64_t tag) const {
    for (const DynamicEntry& entry : dynamic_)
        if (entry.tag == tag) return entry.value;
    return std::nullopt;
}

std::string_view ElfFile::dynstr_at(std::uint64_t offset) const {
    if (dynstr_size_ == 0) fail("dynamic entry refers to a string but there is no DT_STRTAB");
    const ElfBytes in(bytes_, class_, endian_, present_);
    return in.string_at({dynstr_offset_, dynstr_size_}, offset, "dynamic string");
}

std::optional<std::uint64_t> ElfFile::vaddr_to_offset(std::uint64_t vaddr) const {
    for (const ProgramHeader& ph : program_headers_) {
        if (ph.type != PT_LOAD || vaddr < ph.vaddr) continue;
        const std::uint64_t delta = vaddr - ph.vaddr;
        if (delta >= ph.filesz) continue;
        if (ph.offset > std::numeric_limits<std::uint64_t>::max() - delta) continue;
        return ph.offset + delta;
    }
    return std::nullopt;
}

std::string machine_name(std::uint16_t machine, Class elf_class, Endian endian) {
    const bool is64 = elf_class == Class::elf64;
    switch (machine) {
    case EM_X86_64: return "x86_64";
    case EM_386: return "i686";
    case EM_AARCH64: return "aarch64";
    case EM_ARM: return "arm";
    case EM_PPC64: return endian == Endian::little ? "ppc64le" : "ppc64";
    case EM_PPC: return endian == Endian::little ? "ppcle" : "ppc";
    case EM_S390: return is64 ? "s390x" : "s390";
    case EM_MIPS: return is64 ? "mips64" : "mips";
    case EM_RISCV: return is64 ? "riscv64" : "riscv32";
    case EM_LOONGARCH: return "loongarch64";
    case EM_SPARCV9: return "sparc64";
    case EM_SPARC: return "sparc";
    case EM_IA_64: return "ia64";
    case EM_68K: return "m68k";
    case EM_PARISC: return "parisc";
    case EM_SH: return "sh4";
    case EM_ALPHA: return "alpha";
    default: return "EM_" + std::to_string(machine);
    }
}

std::string machine_name(std::uint16_t machine, Class elf_class) {
    return machine_name(machine, elf_class, Endian::big);
}

std::string ElfFile::machine_name() const { return elf::machine_name(machine_, class_, endian_); }

}  // namespace wheelfix::elf
