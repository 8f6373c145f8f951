// What one `patchelf` command line asks of each file, and patchelf 0.19's rules for
// answering and editing it: the patchelf front end below its argument parsing
// (cli/patchelf.cpp parses argv into a PatchelfCommand and prints).
//
// Contract:
// - PatchelfError is patchelf's error(): one line ("patchelf: <what>"), status 1.
// - patchelf_answers(command, file) is the text of the --print-* options but
//   --print-needed, in patchelf's order: interpreter, OS ABI, soname (ET_DYN files
//   only), search path (nothing for a separate .debug file), execstack. A
//   PatchelfError where patchelf fails: --print-soname or --print-rpath on a file
//   without a dynamic section ("cannot find section '.dynamic'...").
// - patchelf_needed(command, file) is --print-needed's lines (none when not asked);
//   the same PatchelfError on a file without a dynamic section.
// - patch_elf_file(command, path, file) applies the edits to `file` (the parse of
//   `path`) with patchelf's rules (EditRequest::patchelf_rules): a search-path edit
//   is skipped on a separate .debug file; --shrink-rpath, else --remove-rpath, else
//   --set-rpath, else --add-rpath; --set-soname only on ET_DYN; --set-execstack and
//   --clear-execstack ignored with --print-execstack. It writes in place (atomically,
//   mode and owner kept) or to command.output (always written, as patchelf does).
//   A dynamic edit of a file without a dynamic section, or an unknown OS ABI name,
//   is a PatchelfError.
#pragma once

#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/elf/file_editor.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace wheelfix::elf {

class PatchelfError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct PatchelfCommand {
    bool print_interpreter = false, print_os_abi = false, print_soname = false, print_rpath = false;
    bool print_needed = false, print_execstack = false;
    std::optional<std::string> os_abi;
    bool shrink_rpath = false, remove_rpath = false, force_rpath = false;
    std::optional<std::string> set_rpath, add_rpath;
    std::vector<std::string> allowed_prefixes;
    std::set<std::string> remove_needed, add_needed, clear_version;
    std::map<std::string, std::string> replace_needed;
    std::optional<std::string> soname, interpreter;
    bool no_default_lib = false, debug_tag = false, clear_execstack = false, set_execstack = false;
    SymbolRenames rename_symbols;
    std::optional<std::uint64_t> page_size;
    bool resolution_cache = false;
    std::string output;
    std::vector<std::string> files;
};

std::string patchelf_answers(const PatchelfCommand& command, const ElfFile& file);
std::vector<std::string> patchelf_needed(const PatchelfCommand& command, const ElfFile& file);
void patch_elf_file(const PatchelfCommand& command, const std::string& path, const ElfFile& file);

}  // namespace wheelfix::elf
