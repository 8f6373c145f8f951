// The ELF editor: dynamic-section changes as byte edits (why this way:
// docs/decisions.md, "Editing strategy").
//
// Contract: plan_edits(elf, request) computes, without touching the input, the
// ByteEdits (util/byte_edit.hpp) that give the file the requested RPATH/RUNPATH,
// NEEDED, SONAME and interpreter, all in one pass; a request that changes nothing
// yields no edits.
// - A new string that fits goes into the slot of one no reference uses any more
//   (the old RPATH, a replaced NEEDED). A shared string (the linker merges tails:
//   "libfoo.so" may end another name, an RPATH a symbol name) is never
//   overwritten; the DT_ entry is repointed instead.
// - Otherwise one PT_LOAD appended at the end of the file holds a grown copy of
//   .dynstr (and of .dynamic when an entry must be added and no DT_NULL slot is
//   spare); DT_STRTAB/DT_STRSZ, PT_DYNAMIC and the DT_ entries point at it. A file
//   wheelfix edited before reuses that block, so repeated edits do not grow it. The
//   program header table moves only when no slot is free for the new PT_LOAD: an
//   executable's right after its first PT_LOAD when those bytes are free (that
//   segment grows over it, so AT_PHDR = first bias + e_phoff holds on every kernel
//   and qemu-user), otherwise into the appended segment.
// - Section headers follow the data (.dynstr, .dynamic), so readelf, strip and
//   eu-elflint accept the result; alignments stay valid for 4 KiB and 64 KiB page
//   kernels; .dynamic stays writable where it was. Damaged section headers do not
//   hide the tables from readelf, which reads through them: .dynamic's header is
//   found by type or by name at PT_DYNAMIC's offset, and when no string section
//   sits where DT_STRTAB points, the ".dynstr" header .dynamic links follows.
// - The RPATH kind is kept (DT_RPATH stays DT_RPATH, DT_RUNPATH stays DT_RUNPATH, a
//   file with neither gets DT_RUNPATH); force_kind overrides and converts.
// - An interpreter that fits PT_INTERP's bytes is written there (the rest zeroed),
//   a longer one goes into the appended segment, PT_INTERP and .interp following.
//   A file without a dynamic section can have its interpreter changed in place only.
// - ET_DYN and ET_EXEC of either class and byte order. Errors are one-line
//   EditErrors: no dynamic section for a dynamic edit, a separate debug-info file,
//   a request that cannot be satisfied, an executable whose memory image ends more
//   than 64 MiB past the file (the padding the appended segment would need), an
//   edit that would rewrite the section name table, and a result our reader would
//   not read back ("the edited file would not read back (...)"; checked for files
//   up to 64 MiB, a writer proves larger ones by reading its output back), so an
//   edit of a damaged file never writes what the next reading refuses.
#pragma once

#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/util/byte_edit.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace wheelfix::elf {

class EditError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class SearchPathKind { keep, rpath, runpath };

struct EditRequest {
    // RPATH/RUNPATH: the final value is computed as: start from the current
    // value (or set_search_path if given), drop remove_search_path entries and,
    // with drop_absolute, every entry not starting with $ORIGIN; then append
    // add_search_path entries not already present. An empty result removes the
    // entry altogether.
    std::optional<std::string> set_search_path;
    std::vector<std::string> add_search_path;
    std::vector<std::string> remove_search_path;
    bool drop_absolute = false;
    SearchPathKind force_kind = SearchPathKind::keep;

    std::vector<std::pair<std::string, std::string>> replace_needed;  // old -> new
    std::vector<std::string> add_needed;     // appended after the existing NEEDED
    std::vector<std::string> remove_needed;
    std::optional<std::string> set_soname;

    // patchelf's dynamic edits (the `elf` command and the `patchelf` front end):
    bool remove_all_search_paths = false;  // drop DT_RPATH and DT_RUNPATH (--remove-rpath)
    std::uint64_t add_flags_1 = 0;         // DT_FLAGS_1 bits to set (DF_1_NODEFLIB: --no-default-lib)
    bool add_debug = false;                // a DT_DEBUG entry when there is none (--add-debug-tag)
    std::optional<std::string> interpreter;  // PT_INTERP's path (--set-interpreter)
    // --rename-dynamic-symbols (old -> new, an old name once): every .dynsym entry so
    // named, defined or undefined. The hash tables are rebuilt in place for the new
    // names, which may reorder the hashed symbols as patchelf 0.19 does, .gnu.version
    // and the relocations following (editor_rename.cpp); a MIPS file is then refused.
    std::vector<std::pair<std::string, std::string>> rename_symbols;
    // A program header to add at the end of the table (what plan_header_edits asks
    // for when a file without PT_GNU_STACK and without a PT_NULL slot gets one): the
    // table moves as for a new PT_LOAD (see above). Refused (EditError) for a file
    // without a dynamic section and for one whose table cannot grow where it is.
    std::optional<ProgramHeader> add_program_header;
    // --page-size: the appended segment's p_align and the modulus its p_offset and
    // p_vaddr agree in become max(page_size, the file's largest PT_LOAD p_align, and
    // for the modulus 64 KiB); a power of two. Unset: the file's own alignment.
    std::optional<std::uint64_t> page_size;

    // `repair --strip` (auditwheel's --strip, binutils' strip --strip-all): drop
    // .symtab, .strtab and every .debug*/.zdebug* section after the other edits,
    // moving no mapped byte but as a whole block by a multiple of its alignment (the
    // strip stage, editor_strip.cpp, says how), so a file wheelfix or patchelf edited
    // before, whose appended segment follows the section headers, strips and loads.
    bool strip_symbols = false;

    // patchelf 0.19's rules, for the `patchelf` front end (same entries, same order):
    // the operations apply in patchelf's order (soname, search path, remove, replace,
    // add, flags, debug) and every new entry goes to the top of the table (so
    // --add-needed entries come first); set_search_path is written verbatim (an empty
    // value is an empty DT_RUNPATH, not none); without force_kind == rpath a lone
    // DT_RPATH becomes DT_RUNPATH, with it a DT_RUNPATH becomes DT_RPATH (keep means
    // runpath here); add_needed adds a name even when it is already NEEDED.
    bool patchelf_rules = false;

    bool operator==(const EditRequest&) const = default;
    bool empty() const;            // no dynamic edit and no interpreter (strip_symbols aside)
    bool touches_dynamic() const;  // anything but the interpreter and the strip
};

// Edits of the headers that never move anything (patchelf's --set-os-abi,
// --set-execstack/--clear-execstack, --clear-symbol-version): bytes written in
// place. A file without PT_GNU_STACK gets one for an execstack request, as
// patchelf 0.19 adds it (PF_R|PF_W, PF_X when set, p_align 1, the rest 0): in a
// PT_NULL slot when there is one, else HeaderPlan::add_program_header asks the
// dynamic editor to add it (EditRequest::add_program_header); a symbol version
// cleared means its .gnu.version entry becomes 1 (global), for every dynamic
// symbol of that name.
struct HeaderRequest {
    std::optional<std::uint8_t> os_abi;
    std::optional<bool> executable_stack;
    std::vector<std::string> clear_symbol_version;
    bool empty() const { return !os_abi && !executable_stack && clear_symbol_version.empty(); }
};
struct HeaderPlan {
    ByteEdits edits;                   // empty: nothing to change
    std::vector<std::string> changes;  // one human line per effective change
    std::optional<ProgramHeader> add_program_header;  // for EditRequest::add_program_header
};
HeaderPlan plan_header_edits(const ElfFile& elf, const HeaderRequest& request);

struct EditPlan {
    ByteEdits edits;                 // empty: nothing to change
    std::uint64_t new_size = 0;
    bool grew = false;               // a segment was appended or extended
    std::vector<std::string> changes;  // one human line per effective change
};

EditPlan plan_edits(const ElfFile& elf, const EditRequest& request);

// The RPATH/RUNPATH value a request produces from the current one (the rule
// above), exposed for callers that want to show or test it.
std::string resulting_search_path(const std::optional<std::string>& current, const EditRequest& request);

}  // namespace wheelfix::elf
