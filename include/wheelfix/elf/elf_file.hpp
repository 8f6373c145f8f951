// The ELF reader: zero-copy, bounds-checked, any class/byte order/machine.
//
// Contract:
// - ElfFile::parse(bytes) reads the headers, the dynamic section, the dynamic
//   symbol table and the GNU symbol-version tables of the ELF image in `bytes`.
//   It never copies the image: names are string_views into `bytes`, which must
//   outlive the ElfFile. ELF32 and ELF64, little and big endian, any e_machine.
// - Every offset, size and count read from the file is checked against the span
//   before use; anything inconsistent is an ElfError (a std::runtime_error whose
//   what() is a one-line description such as "section header table past end of
//   file"). Hostile input can produce an error, never a crash or a huge allocation.
// - The dynamic section is located through PT_DYNAMIC (what ld.so uses), its strings
//   through DT_STRTAB/DT_STRSZ mapped by the PT_LOAD segments; section headers are
//   used for the symbol tables and fall back to DT_SYMTAB with a count from
//   DT_HASH / DT_GNU_HASH when a file has none. A file without a dynamic section
//   (an object file, a static executable) parses fine with empty dynamic data.
// - is_elf(bytes) only checks the magic; use it to tell "not ELF" from "bad ELF".
// - A partial image (elf/streamed_elf.hpp) parses with parse(bytes, present): only
//   the `present` ranges hold the file's bytes, and every read, in parse() and in
//   the accessors, first requires its bytes present and otherwise throws
//   wheelfix::BytesNotKept (util/byte_ranges.hpp), so a partial image either gives
//   exactly what the whole file gives or says which bytes it lacks. `present` must
//   outlive the ElfFile, like `bytes`.
// - Memory is bounded by design, not by the file: a dynamic string table over
//   kMaxDynamicStrings bytes or a dynamic symbol table of more than
//   kMaxDynamicSymbols entries is an ElfError before any of it is read: every
//   command stays within 512 MiB (libtorch_cpu, the largest library of the bundled
//   torch 2.10 index, exports 78 k symbols: the limits leave a factor of ten).
#pragma once

#include "wheelfix/util/byte_ranges.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::elf {

class ElfError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

inline constexpr std::uint64_t kMaxDynamicStrings = 128ull << 20;
inline constexpr std::uint64_t kMaxDynamicSymbols = 1'000'000;

enum class Class : std::uint8_t { elf32 = 1, elf64 = 2 };
enum class Endian : std::uint8_t { little = 1, big = 2 };

struct ProgramHeader {
    std::uint32_t type = 0;
    std::uint32_t flags = 0;
    std::uint64_t offset = 0;
    std::uint64_t vaddr = 0;
    std::uint64_t paddr = 0;
    std::uint64_t filesz = 0;
    std::uint64_t memsz = 0;
    std::uint64_t align = 0;

    bool operator==(const ProgramHeader&) const = default;
};

struct SectionHeader {
    std::string_view name;  // from .shstrtab; empty if the file has none
    std::uint32_t name_offset = 0;
    std::uint32_t type = 0;
    std::uint64_t flags = 0;
    std::uint64_t addr = 0;
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    std::uint32_t link = 0;
    std::uint32_t info = 0;
    std::uint64_t addralign = 0;
    std::uint64_t entsize = 0;
};

struct DynamicEntry {
    std::int64_t tag = 0;
    std::uint64_t value = 0;
};

// One dynamic symbol with its GNU version, as ld.so sees it.
struct Symbol {
    std::string_view name;
    std::uint64_t value = 0;
    std::uint64_t size = 0;
    std::uint8_t type = 0;     // STT_*
    std::uint8_t binding = 0;  // STB_*
    std::uint8_t visibility = 0;
    std::uint16_t section_index = 0;  // SHN_UNDEF (0) for undefined symbols
    bool defined() const { return section_index != 0; }

    // From .gnu.version: 0 local, 1 global (unversioned), >=2 an index into the
    // verdef (defined symbols) or verneed (undefined symbols) entries.
    std::uint16_t version_index = 1;
    bool version_hidden = false;       // bit 15 of versym: non-default version (sym@VER)
    std::string_view version;          // e.g. "GLIBC_2.14"; empty when unversioned
    std::string_view version_file;     // for undefined: the verneed file ("libc.so.6")
};

struct VersionNeedAux {
    std::string_view name;   // "GLIBC_2.17"
    std::uint32_t hash = 0;
    std::uint16_t flags = 0;
    std::uint16_t other = 0;  // the version index symbols use
};

struct VersionNeed {
    std::string_view file;    // "libc.so.6"
    std::uint32_t file_name = 0;   // vn_file: the name's offset in the string table
    std::uint64_t file_field = 0;  // where vn_file lies in the file (for the editor)
    std::vector<VersionNeedAux> versions;
};

struct VersionDef {
    std::uint16_t index = 0;
    std::uint16_t flags = 0;  // VER_FLG_BASE for the file's own name
    std::uint32_t hash = 0;
    std::vector<std::string_view> names;  // first is the version, the rest its parents
};

class ElfFile {
public:
    static ElfFile parse(std::span<const std::uint8_t> bytes);
    static ElfFile parse(std::span<const std::uint8_t> bytes, const ByteRanges* present);
    // The loader's view: as parse(), but the section header table is not read (as
    // if the file had none), so the dynamic symbols come from DT_SYMTAB sized by
    // DT_HASH / DT_GNU_HASH. For a reader that stops inflating once the dynamic
    // segment and its tables are in (check), which for linker output come before
    // the section headers at the end of the file.
    static ElfFile parse_as_loader(std::span<const std::uint8_t> bytes, const ByteRanges* present);
    // The ELF header and the program headers only (no sections, dynamic table,
    // symbols or versions): for a reader that has only a file's head (a far
    // read locating PT_DYNAMIC, elf/dynamic_array.hpp).
    static ElfFile parse_headers(std::span<const std::uint8_t> bytes, const ByteRanges* present);

    Class elf_class() const { return class_; }
    Endian endian() const { return endian_; }
    std::uint8_t os_abi() const { return os_abi_; }
    std::uint16_t type() const { return type_; }        // ET_*
    std::uint16_t machine() const { return machine_; }  // EM_*
    std::uint32_t flags() const { return flags_; }      // e_flags
    std::uint64_t entry() const { return entry_; }
    std::string machine_name() const;  // machine_name(machine(), elf_class(), endian())

    const std::vector<ProgramHeader>& program_headers() const { return program_headers_; }
    const std::vector<SectionHeader>& sections() const { return sections_; }
    const SectionHeader* section(std::string_view name) const;  // first with that name
    // The bytes of a section (empty for SHT_NOBITS); ElfError if out of bounds.
    std::span<const std::uint8_t> section_bytes(const SectionHeader& section) const;
    // The same without requiring the bytes present, for readers that check
    // present() themselves as they go (cuda::parse_fatbin_section).
    std::span<const std::uint8_t> section_image(const SectionHeader& section) const;
    // [offset, offset + size) clamped to the file (empty past its end), all present.
    std::span<const std::uint8_t> bytes_at(std::uint64_t offset, std::uint64_t size) const;

    bool has_dynamic() const { return has_dynamic_; }
    const std::vector<DynamicEntry>& dynamic() const { return dynamic_; }  // up to DT_NULL
    std::vector<std::string_view> needed() const;
    std::optional<std::string_view> soname() const;
    std::optional<std::string_view> rpath() const;    // DT_RPATH
    std::optional<std::string_view> runpath() const;  // DT_RUNPATH
    std::optional<std::uint64_t> dynamic_value(std::int64_t tag) const;  // the first entry with that tag

    const std::vector<Symbol>& dynamic_symbols() const { return symbols_; }  // index 0 skipped
    const std::vector<VersionNeed>& version_needs() const { return version_needs_; }
    const std::vector<VersionDef>& version_defs() const { return version_defs_; }

    // File offset of a virtual address inside a PT_LOAD segment's file image.
    std::optional<std::uint64_t> vaddr_to_offset(std::uint64_t vaddr) const;
    std::span<const std::uint8_t> bytes() const { return bytes_; }
    // The ranges of bytes() that are real; nullptr for a whole image.
    const ByteRanges* present() const { return present_; }

private:
    friend class Parser;
    std::span<const std::uint8_t> bytes_;
    const ByteRanges* present_ = nullptr;
    Class class_ = Class::elf64;
    Endian endian_ = Endian::little;
    std::uint8_t os_abi_ = 0;
    std::uint16_t type_ = 0;
    std::uint16_t machine_ = 0;
    std::uint32_t flags_ = 0;
    std::uint64_t entry_ = 0;
    std::vector<ProgramHeader> program_headers_;
    std::vector<SectionHeader> sections_;
    bool has_dynamic_ = false;
    std::vector<DynamicEntry> dynamic_;
    std::uint64_t dynstr_offset_ = 0;  // file offset of the dynamic string table
    std::uint64_t dynstr_size_ = 0;
    std::vector<Symbol> symbols_;
    std::vector<VersionNeed> version_needs_;
    std::vector<VersionDef> version_defs_;

    std::optional<std::string_view> dynamic_string(std::int64_t tag) const;
    std::string_view dynstr_at(std::uint64_t offset) const;
};

bool is_elf(std::span<const std::uint8_t> bytes);

// The symbol name hashes of DT_GNU_HASH and DT_HASH (SysV).
std::uint32_t gnu_hash(std::string_view name);
std::uint32_t sysv_hash(std::string_view name);

// The largest page size in use (64 KiB): a segment the editor appends, or the shim
// image writer lays out, has p_offset and p_vaddr agreeing modulo at least this.
inline constexpr std::uint64_t kLargestPageSize = 0x10000;
inline std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
    return alignment <= 1 ? value : (value + alignment - 1) / alignment * alignment;
}

// "x86_64", "aarch64", "s390x", "EM_123" for unknown values.
std::string machine_name(std::uint16_t machine, Class elf_class);
// The same, telling ppc64le from ppc64 (the two-argument form says "ppc64").
std::string machine_name(std::uint16_t machine, Class elf_class, Endian endian);

}  // namespace wheelfix::elf
