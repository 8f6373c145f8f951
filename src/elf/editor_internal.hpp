// The ELF editor's stages (private to src/elf; the contract is in
// include/wheelfix/elf/editor.hpp, the strategy in docs/decisions.md, "Editing strategy").
//
// Contract: plan_edits runs these stages, each in its own file:
//   editor_layout.cpp    where the things an edit touches lie in the input (ELF
//                        header fields, PT_DYNAMIC, .dynstr, a segment appended
//                        by an earlier wheelfix edit)
//   editor_request.cpp   what the dynamic table must say afterwards: the entries in
//                        order, each string-valued one with its text, and the human
//                        change lines
//   editor_strings.cpp   where every string goes: an existing identical string, a
//                        released slot nobody else references, or the appended tail
//   editor_dynamic.cpp   the edited dynamic table and verneed fields as bytes
//   editor_segment.cpp   the appended PT_LOAD: its place in file and memory, its
//                        contents, and the program header table that maps it
//   editor_symbols.cpp   symbols defined in a moved section follow it
//   editor_rename.cpp    renamed dynamic symbols: their fields (stage 2) and the
//                        rebuilt hash tables, reordered symbols, relocations
//   editor_overlay.cpp   the new bytes laid over the original, turned into ByteEdits
//   editor_strip.cpp     --strip: .symtab, .strtab, .debug* dropped from the file the
//                        stages above laid out, read through their edits
// No stage writes to the input; every value read from it goes through ElfBytes.
#pragma once

#include "elf_bytes.hpp"
#include "elf_writer.hpp"

#include <wheelfix/elf/editor.hpp>
#include <wheelfix/elf/elf_file.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::elf::editor {

// The appended segment starts with this header: 16 magic bytes, then the size of
// the base string table (u64, file byte order), then 8 reserved bytes.
inline constexpr std::string_view kSegmentMagic{"wheelfix.dynseg\0", 16};
inline constexpr std::uint64_t kSegmentHeaderSize = 32;

// A segment appended by an earlier wheelfix edit, found at the tail of the file.
struct AppendedSegment {
    std::size_t phdr_index = 0;
    std::uint64_t offset = 0;
    std::uint64_t vaddr = 0;
    std::uint64_t size = 0;
    std::uint64_t base_strings_size = 0;  // the first bytes of its .dynstr: the original table
};

struct Layout {
    std::uint64_t file_size = 0;
    std::uint64_t phoff = 0;
    std::uint64_t phentsize = 0;
    bool phnum_in_section_zero = false;  // e_phnum == PN_XNUM
    std::uint64_t shoff = 0;
    std::uint64_t shentsize = 0;
    std::uint64_t names_section = 0;  // e_shstrndx (section 0's sh_link for SHN_XINDEX)

    std::size_t dynamic_phdr = 0;  // index of PT_DYNAMIC
    std::uint64_t dynamic_offset = 0;
    std::uint64_t dynamic_vaddr = 0;
    std::uint64_t dynamic_capacity = 0;  // entries that fit, terminator included
    bool dynamic_writable = true;
    std::optional<std::size_t> dynamic_section;

    std::uint64_t strings_vaddr = 0;   // DT_STRTAB
    std::uint64_t strings_offset = 0;  // DT_STRTAB mapped to the file
    std::uint64_t strings_size = 0;    // DT_STRSZ (without it: the rest of the file)
    bool strings_size_known = false;   // DT_STRSZ present
    std::optional<std::size_t> strings_section;
    bool strings_have_unknown_users = false;  // a section we do not model links to .dynstr

    std::optional<AppendedSegment> appended;

    std::optional<std::size_t> interp_phdr;     // PT_INTERP
    std::optional<std::size_t> interp_section;  // the section at PT_INTERP's offset (.interp)
    bool is_executable = false;  // ET_EXEC, or PT_INTERP present

    bool in_appended(std::uint64_t offset) const;  // inside `appended`
};

Layout read_layout(const ElfFile& elf);
ElfBytes reader_for(const ElfFile& elf);
ElfWriter writer_for(const ElfFile& elf);
bool is_string_tag(std::int64_t tag);
std::uint64_t highest_load_end(const ElfFile& elf);  // max p_vaddr + p_memsz of PT_LOAD

// A string-valued field whose string the editor places: a DT_NEEDED, DT_SONAME,
// DT_RPATH or DT_RUNPATH entry, or a verneed vn_file.
struct StringField {
    std::string text;
    std::string old_text;
    std::optional<std::uint64_t> old_offset;  // nullopt: the field is new
    std::uint64_t new_offset = 0;             // set by place_strings
    bool changed() const { return !old_offset || text != old_text; }
};

struct PlannedEntry {
    DynamicEntry entry;
    std::optional<std::size_t> original_index;  // position in the input table
    std::optional<StringField> string;          // for the string tags above
};

struct PlannedVerneedFile {
    std::uint64_t field_offset = 0;
    StringField string;
};

// A dynamic symbol's st_name field whose string the edit renames.
struct PlannedSymbolName {
    std::uint64_t index = 0;         // in .dynsym (0 is the null symbol)
    StringField string;
};

class Overlay;

struct DynamicPlan {
    std::vector<PlannedEntry> entries;  // without the DT_NULL terminator
    std::vector<PlannedVerneedFile> verneed_files;
    std::vector<std::string> changes;
    std::vector<PlannedSymbolName> symbol_names;  // --rename-dynamic-symbols
    std::optional<ProgramHeader> extra_program_header;  // EditRequest::add_program_header
    std::optional<std::uint64_t> page_size;             // EditRequest::page_size
    // The interpreter path the appended segment carries (a new one too long for
    // PT_INTERP's bytes, or the one an earlier edit put there); PT_INTERP follows.
    std::optional<std::string> segment_interpreter;
};

// The interpreter stage (editor_interp.cpp has the contract); plan_interpreter
// returns whether anything changes.
std::optional<std::string> current_interpreter(const ElfFile& elf);
bool plan_interpreter(const ElfFile& elf, const Layout* layout, const EditRequest& request,
                      DynamicPlan& plan, Overlay& overlay);

void check_request(const EditRequest& request);
DynamicPlan plan_dynamic(const ElfFile& elf, const Layout& layout, const EditRequest& request);

// The dynamic string table after placement: the (possibly rewritten) base table
// followed by the appended strings.
struct PlacedStrings {
    std::vector<std::uint8_t> table;
    std::uint64_t base_size = 0;
    bool grew() const { return table.size() > base_size; }
};

PlacedStrings place_strings(const ElfFile& elf, const Layout& layout, DynamicPlan& plan);

// The final dynamic entries (strings resolved, DT_STRTAB/DT_STRSZ as given),
// encoded into `capacity` slots padded with DT_NULL.
struct StringTableAddress {
    std::uint64_t vaddr = 0;
    std::uint64_t size = 0;
};
std::vector<DynamicEntry> final_entries(const ElfFile& elf, const Layout& layout,
                                        const DynamicPlan& plan, StringTableAddress strings,
                                        std::uint64_t new_dynamic_vaddr);
std::vector<std::uint8_t> encode_dynamic(const ElfWriter& writer,
                                         const std::vector<DynamicEntry>& entries,
                                         std::uint64_t capacity);

// New bytes laid over the original file: the edited file is the original with every
// write applied, cut or zero-extended to new_size.
class Overlay {
public:
    explicit Overlay(std::span<const std::uint8_t> original) : original_(original) {}
    void write(std::uint64_t offset, std::vector<std::uint8_t> bytes);
    // Minimal edits: runs of changed bytes (close runs merged), then the tail.
    ByteEdits edits(std::uint64_t new_size) const;

private:
    struct Write {
        std::uint64_t offset;
        std::vector<std::uint8_t> bytes;
    };
    void diff_into(ByteEdits& edits, const Write& write, std::uint64_t limit) const;

    std::span<const std::uint8_t> original_;
    std::vector<Write> writes_;
};

// The strip stage (editor_strip.cpp has the contract).
void strip_symbols(const ElfFile& elf, EditPlan& plan);

// Writes the edit into the overlay using the appended segment (created, or the
// earlier one reused); returns the new file size and whether the segment grew.
struct SegmentResult {
    std::uint64_t new_size = 0;
    bool grew = false;
};
SegmentResult write_with_segment(const ElfFile& elf, const Layout& layout, const DynamicPlan& plan,
                                 const PlacedStrings& strings, Overlay& overlay);

// A section the edit moves (editor_symbols.cpp shifts the symbols defined in it).
struct SectionMove {
    std::size_t index = 0;
    std::uint64_t old_addr = 0;
    std::uint64_t new_addr = 0;
    bool is_dynamic = false;  // .dynamic: an absolute _DYNAMIC at old_addr follows too
};
void write_symbol_fixups(const ElfFile& elf, const std::vector<SectionMove>& moves, Overlay& overlay);

// The rename stage (editor_rename.cpp has the contract).
void plan_symbol_renames(const ElfFile& elf, const Layout& layout, const EditRequest& request, DynamicPlan& plan);
void write_symbol_renames(const ElfFile& elf, const DynamicPlan& plan, Overlay& overlay);

// Rewrites the vn_file fields whose string moved (both writers use it).
void write_verneed_files(const ElfFile& elf, const DynamicPlan& plan, Overlay& overlay);

}  // namespace wheelfix::elf::editor
