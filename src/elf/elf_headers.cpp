// ELF header, program header table, section header table and section names.
//
// Contract: the tables must lie inside the file and their entry sizes must be at
// least the standard ones (larger entries are allowed and their tails ignored).
// So must the file data of every segment (p_offset + p_filesz) and of every
// section that has some (all but SHT_NOBITS): a file that claims bytes it does not
// have is refused here, whichever of its parts a later stage happens to read.
// Extended numbering is honoured: e_shnum 0 with e_shoff set, e_phnum PN_XNUM and
// e_shstrndx SHN_XINDEX take the real values from section header 0. A file
// without section headers, or with e_shstrndx SHN_UNDEF, has unnamed sections.
#include "elf_layout.hpp"
#include "elf_parser.hpp"

#include "wheelfix/util/error.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>

namespace wheelfix::elf {

namespace {

constexpr std::uint64_t kIdentSize = EI_NIDENT;

std::uint64_t file_header_size(bool is64) { return is64 ? 64 : 52; }
std::uint64_t program_header_size(bool is64) { return is64 ? 56 : 32; }
std::uint64_t section_header_size(bool is64) { return is64 ? 64 : 40; }

}  // namespace

Parser::Parser(std::span<const std::uint8_t> bytes, const ByteRanges* present)
    : in_(bytes, Class::elf64, Endian::little, present), present_(present) {
    file_.bytes_ = bytes;
    file_.present_ = present;
}

ElfFile Parser::run() {
    read_identification();
    read_file_header();
    if (!without_sections_) read_section_headers();
    read_program_headers();
    name_sections();
    check_file_extents();
    read_dynamic();
    read_dynamic_symbols();
    read_versions();
    return std::move(file_);
}

ElfFile Parser::run_headers() {
    read_identification();
    read_file_header();
    read_program_headers();
    return std::move(file_);
}

void Parser::read_identification() {
    require_present(present_, 0, std::min<std::uint64_t>(SELFMAG, file_.bytes_.size()));
    if (!is_elf(file_.bytes_)) fail("not an ELF file (bad magic)");
    in_.range(0, kIdentSize, "ELF identification");
    const std::uint8_t elf_class = in_.u8(EI_CLASS, "EI_CLASS");
    const std::uint8_t data = in_.u8(EI_DATA, "EI_DATA");
    if (elf_class != ELFCLASS32 && elf_class != ELFCLASS64)
        fail("unsupported ELF class " + std::to_string(elf_class));
    if (data != ELFDATA2LSB && data != ELFDATA2MSB)
        fail("unsupported ELF data encoding " + std::to_string(data));
    file_.class_ = static_cast<Class>(elf_class);
    file_.endian_ = static_cast<Endian>(data);
    file_.os_abi_ = in_.u8(EI_OSABI, "EI_OSABI");
    in_ = ElfBytes(file_.bytes_, file_.class_, file_.endian_, present_);
}

void Parser::read_file_header() {
    const std::uint64_t w = in_.word_size();
    in_.range(0, file_header_size(in_.is64()), "ELF header");
    file_.type_ = in_.u16(16, "e_type");
    file_.machine_ = in_.u16(18, "e_machine");
    file_.entry_ = in_.word(24, "e_entry");
    file_.flags_ = in_.u32(24 + 3 * w, "e_flags");
    tables_ = read_header_tables(in_);
}

HeaderTables read_header_tables(const ElfBytes& in) {
    const std::uint64_t w = in.word_size();
    HeaderTables tables;
    tables.program_headers = {in.word(24 + w, "e_phoff"), in.u16(30 + 3 * w, "e_phentsize"),
                              in.u16(32 + 3 * w, "e_phnum")};
    tables.section_headers = {in.word(24 + 2 * w, "e_shoff"), in.u16(34 + 3 * w, "e_shentsize"),
                              in.u16(36 + 3 * w, "e_shnum")};
    tables.shstrndx = in.u16(38 + 3 * w, "e_shstrndx");
    return tables;
}

SectionHeader read_section_header(const ElfBytes& in, std::uint64_t offset) {
    const std::uint64_t w = in.word_size();
    SectionHeader section;
    section.name_offset = in.u32(offset, "sh_name");
    section.type = in.u32(offset + 4, "sh_type");
    section.flags = in.word(offset + 8, "sh_flags");
    section.addr = in.word(offset + 8 + w, "sh_addr");
    section.offset = in.word(offset + 8 + 2 * w, "sh_offset");
    section.size = in.word(offset + 8 + 3 * w, "sh_size");
    section.link = in.u32(offset + 8 + 4 * w, "sh_link");
    section.info = in.u32(offset + 12 + 4 * w, "sh_info");
    section.addralign = in.word(offset + 16 + 4 * w, "sh_addralign");
    section.entsize = in.word(offset + 16 + 5 * w, "sh_entsize");
    return section;
}

void Parser::require_table(const EntryTable& table, std::uint64_t count, std::uint64_t minimum, const char* entsize,
                           const char* what) const {
    if (table.entsize < minimum) fail(std::string(entsize) + " " + std::to_string(table.entsize) + " is too small");
    in_.table(table.offset, count, table.entsize, what);
}

// Section header 0 carries the extended e_shnum / e_phnum / e_shstrndx.
SectionHeader Parser::section_zero() const {
    if (tables_.section_headers.offset == 0) fail("extended ELF numbering without a section header table");
    require_table(tables_.section_headers, 1, section_header_size(in_.is64()), "e_shentsize", "section header 0");
    return read_section_header(in_, tables_.section_headers.offset);
}

void Parser::read_section_headers() {
    EntryTable& table = tables_.section_headers;
    if (table.offset == 0) return;
    if (table.count == 0) table.count = section_zero().size;
    if (table.count == 0) return;
    require_table(table, table.count, section_header_size(in_.is64()), "e_shentsize", "section header table");
    file_.sections_.reserve(table.count);
    for (std::uint64_t i = 0; i < table.count; ++i) file_.sections_.push_back(read_section_header(in_, table.at(i)));
}

void Parser::read_program_headers() {
    EntryTable& table = tables_.program_headers;
    if (table.count == PN_XNUM) table.count = section_zero().info;
    if (table.offset == 0 || table.count == 0) return;
    require_table(table, table.count, program_header_size(in_.is64()), "e_phentsize", "program header table");
    file_.program_headers_.reserve(table.count);
    for (std::uint64_t i = 0; i < table.count; ++i) file_.program_headers_.push_back(read_program_header(in_, table.at(i)));
}

ProgramHeader read_program_header(const ElfBytes& in, std::uint64_t offset) {
    ProgramHeader ph;
    ph.type = in.u32(offset, "p_type");
    ph.flags = in.u32(offset + program_header_flags_at(in.is64()), "p_flags");
    for (const ProgramHeaderWord& word : kProgramHeaderWords)
        ph.*word.field = in.word(offset + (in.is64() ? word.at64 : word.at32), word.name);
    return ph;
}

void Parser::name_sections() {
    if (file_.sections_.empty()) return;
    std::uint64_t index = tables_.shstrndx;
    if (index == SHN_XINDEX) index = file_.sections_[0].link;
    if (index == SHN_UNDEF) return;
    if (index >= file_.sections_.size())
        fail("e_shstrndx " + std::to_string(index) + " is out of range");
    const SectionHeader& names = file_.sections_[index];
    if (names.type == SHT_NOBITS) fail("section name table has no file data");
    const Extent table = in_.range(names.offset, names.size, "section name table");
    for (SectionHeader& section : file_.sections_)
        section.name = in_.string_at(table, section.name_offset, "section name");
}

void Parser::check_file_extents() const {
    const std::uint64_t size = in_.file_size();
    auto inside = [size](std::uint64_t offset, std::uint64_t length) { return offset <= size && length <= size - offset; };
    // A separate debug-info file (objcopy --only-keep-debug) keeps the program headers
    // of the file it describes, not their bytes: nothing reads them (read_dynamic
    // skips its PT_DYNAMIC), and the editor says what the file is.
    const bool debug_info_only = std::any_of(file_.sections_.begin(), file_.sections_.end(), [](const SectionHeader& s) {
        return s.type == SHT_NOBITS && s.name == ".dynamic";
    });
    for (std::size_t i = 0; i < file_.program_headers_.size() && !debug_info_only; ++i) {
        const ProgramHeader& ph = file_.program_headers_[i];
        if (!inside(ph.offset, ph.filesz))
            fail("program header " + std::to_string(i) + " (type " + hex(ph.type) + "): file data " + hex(ph.offset) +
                 "+" + hex(ph.filesz) + " past end of file");
    }
    for (std::size_t i = 0; i < file_.sections_.size(); ++i) {
        const SectionHeader& section = file_.sections_[i];
        if (section.type == SHT_NOBITS || inside(section.offset, section.size)) continue;
        fail("section " + std::to_string(i) + (section.name.empty() ? std::string() : " (" + printable(section.name) + ")") + ": file data " +
             hex(section.offset) + "+" + hex(section.size) + " past end of file");
    }
}

// A string table a section links to through sh_link, if that is a usable one.
StringTable Parser::linked_string_table(const SectionHeader& section) const {
    if (section.link == 0 || section.link >= file_.sections_.size()) return {};
    const SectionHeader& strings = file_.sections_[section.link];
    if (strings.type != SHT_STRTAB) return {};
    return {in_.range(strings.offset, strings.size, "linked string table"), true};
}

}  // namespace wheelfix::elf
