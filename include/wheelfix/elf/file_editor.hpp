// The file-level ELF editor: what `wheelfix elf` and the `patchelf` front end do to
// bare ELF files (wheels are edited by repair/relink and never in place).
//
// Contract:
// - The answers patchelf's --print-* options give, read from the input:
//   interpreter_of (PT_INTERP's path; an EditError naming a statically linked file
//   without one), os_abi_name ("System V", "Linux", ..., else "0x%02X"),
//   search_path_of (DT_RUNPATH, else DT_RPATH, else empty; empty for a file without
//   a dynamic section, e.g. a separate .debug file), soname_of (only for ET_DYN; none
//   when empty or absent), needed_of, execstack_of ('X', '-', or '?' without
//   PT_GNU_STACK).
// - os_abi_from_name parses patchelf's --set-os-abi names (case and surrounding
//   blanks ignored); nullopt for an unknown one.
// - shrunk_search_path(elf, dir_of_file, allowed_prefixes): patchelf's --shrink-rpath.
//   Relative entries ($ORIGIN...) stay; an absolute directory stays only when it starts
//   with an allowed prefix (when any are given) and holds a NEEDED library not found
//   in an earlier directory whose ELF header names the same machine.
// - read_rename_map(path, patchelf_quirks): the --rename-dynamic-symbols map file,
//   "OLD NEW" per line (blank-separated, more words ignored), a regular file of at
//   most 64 MiB. EditError, worded as patchelf words it: "Cannot open map file P",
//   "P:N: Map file line is missing the second element", "P:N: Name 'X' appears
//   twice in the map file", "P:N: Name pair contains version tag: X Y". With
//   patchelf_quirks an empty line ends the map (as patchelf reads it); without, it
//   is skipped.
// - edit_elf_file(input, output, edit, always_write) reads the input whole, applies
//   the header edits, then the dynamic edits (editor.hpp), and writes the result
//   when something changed (or always_write) to `output` — which may be the input
//   itself: the result goes to a temporary file beside it and is renamed over it,
//   with the input's mode and (where permitted) owner and group, so a reader never
//   sees half a file and a failed edit leaves the input untouched. An output that is
//   a symlink is written through (its target is replaced). Hard links to the input
//   keep the old contents (the new file is a new inode). Errors are
//   EditError/ElfError (the input) or InputError (the file system).
#pragma once

#include "wheelfix/elf/editor.hpp"
#include "wheelfix/elf/elf_file.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace wheelfix::elf {

std::string interpreter_of(const ElfFile& elf);
std::string os_abi_name(std::uint8_t abi);
std::optional<std::uint8_t> os_abi_from_name(std::string name);
std::string search_path_of(const ElfFile& elf);
std::optional<std::string> soname_of(const ElfFile& elf);
std::vector<std::string> needed_of(const ElfFile& elf);
char execstack_of(const ElfFile& elf);

using SymbolRenames = std::vector<std::pair<std::string, std::string>>;
SymbolRenames read_rename_map(const std::string& path, bool patchelf_quirks);

std::string shrunk_search_path(const ElfFile& elf, const std::vector<std::string>& allowed_prefixes);

struct FileEdit {
    EditRequest dynamic;
    HeaderRequest headers;
    // --shrink-rpath: computed on the input and written as the search path
    bool shrink_search_path = false;
    std::vector<std::string> allowed_prefixes;
    // --add-rpath in patchelf's meaning: appended to the current value with ':'
    std::optional<std::string> append_search_path;
};

struct FileEditResult {
    bool written = false;
    std::vector<std::string> changes;
    std::uint64_t size_before = 0;
    std::uint64_t size_after = 0;
};

FileEditResult edit_elf_file(const std::filesystem::path& input, const std::filesystem::path& output,
                             const FileEdit& edit, bool always_write);

}  // namespace wheelfix::elf
