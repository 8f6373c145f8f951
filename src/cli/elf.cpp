// `wheelfix elf FILE... [edits]`: every patchelf edit on bare ELF files, in place
// (atomic replace, mode and owner kept) or to -o FILE; the --print-* options print
// what patchelf prints. The work is elf/file_editor.hpp's; this file parses and prints.
//
// Wheelfix's own rules apply (the `patchelf` front end has patchelf's): new entries
// go after the existing ones, the RPATH kind is kept unless --force-rpath or
// --force-runpath, --add-rpath adds entries not yet present.
#include "commands.hpp"
#include "options.hpp"

#include "wheelfix/elf/file_editor.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"

#include <elf.h>
#include <fmt/format.h>

namespace wheelfix::cli {

namespace {

// The options that are edits as given are bound into `edit`; the others are
// converted by edit_for().
struct ElfArguments {
    std::vector<std::string> files;
    std::string output;
    bool print_interpreter = false, print_os_abi = false, print_soname = false, print_rpath = false;
    bool print_needed = false, print_execstack = false;
    elf::FileEdit edit;
    std::optional<std::string> os_abi;
    std::vector<std::string> replace_needed;
    bool force_rpath = false, force_runpath = false;
    bool no_default_lib = false, clear_execstack = false, set_execstack = false;
    std::optional<int> page_size;
    std::string rename_map;
};

elf::FileEdit edit_for(const ElfArguments& args, const std::string& file) {
    elf::FileEdit edit = args.edit;
    elf::EditRequest& request = edit.dynamic;
    if (args.os_abi) {
        edit.headers.os_abi = elf::os_abi_from_name(*args.os_abi);
        if (!edit.headers.os_abi) throw InputError(file, "unknown OS ABI '" + *args.os_abi + "' (--set-os-abi)");
    }
    if (args.clear_execstack) edit.headers.executable_stack = false;
    if (args.set_execstack) edit.headers.executable_stack = true;
    if (args.force_rpath) request.force_kind = elf::SearchPathKind::rpath;
    if (args.force_runpath) request.force_kind = elf::SearchPathKind::runpath;
    for (const std::string& text : args.replace_needed) request.replace_needed.push_back(split_replacement(text));
    if (args.no_default_lib) request.add_flags_1 = DF_1_NODEFLIB;
    if (args.page_size) request.page_size = static_cast<std::uint64_t>(*args.page_size);
    if (!args.rename_map.empty()) request.rename_symbols = elf::read_rename_map(args.rename_map, false);
    return edit;
}

void print_answers(const ElfArguments& args, const elf::ElfFile& file) {
    if (args.print_interpreter) fmt::print("{}\n", elf::interpreter_of(file));
    if (args.print_os_abi) fmt::print("{}\n", elf::os_abi_name(file.os_abi()));
    if (args.print_soname)
        if (const auto soname = elf::soname_of(file)) fmt::print("{}\n", *soname);
    if (args.print_rpath) fmt::print("{}\n", elf::search_path_of(file));
    if (args.print_execstack) fmt::print("execstack: {}\n", elf::execstack_of(file));
    if (args.print_needed)
        for (const std::string& name : elf::needed_of(file)) fmt::print("{}\n", name);
}

void edit_one(const ElfArguments& args, const std::string& file, const GlobalOptions& global) {
    try {
        {
            MappedFile mapped(file);
            if (!elf::is_elf(mapped.bytes())) throw InputError(file, "not an ELF file");
            print_answers(args, elf::ElfFile::parse(mapped.bytes()));
        }
        const std::string output = args.output.empty() ? file : args.output;
        if (!args.output.empty() && same_file(file, output))
            throw InputError(output, "-o names the input; leave -o out to edit in place");
        const elf::FileEditResult result = elf::edit_elf_file(file, output, edit_for(args, file), !args.output.empty());
        if (global.quiet || result.changes.empty()) return;
        fmt::print("{}\n", output);
        for (const std::string& change : result.changes) fmt::print("  {}\n", change);
        if (global.verbose) fmt::print("  size {} -> {}\n", result.size_before, result.size_after);
    } catch (const elf::EditError& error) {
        throw InputError(file, error.what());
    } catch (const elf::ElfError& error) {
        throw InputError(file, error.what());
    }
}

int run_elf(const ElfArguments& args, const GlobalOptions& global) {
    if (global.json) throw InputError("--json", "the elf command writes text only");
    if (!args.output.empty() && args.files.size() != 1)
        throw InputError(args.output, "-o takes one input file (several files are edited in place)");
    if (args.page_size && *args.page_size <= 0)
        throw InputError("--page-size", "must be a positive number of bytes");
    for (const std::string& file : args.files) edit_one(args, file, global);
    return 0;
}

}  // namespace

CommandRunner register_elf(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand(
        "elf", "Edit or print the dynamic linking facts of bare ELF files, every edit patchelf has; in place "
               "(atomic, mode and owner kept) or to -o FILE. Wheels are never edited in place: use relink");
    auto args = std::make_shared<ElfArguments>();
    auto& a = *args;
    command->add_option("files", a.files, "ELF files to print or edit")->required();
    command->add_option("-o,--output", a.output, "Write the result here instead of replacing the input (one input)")
        ->check(non_empty_path());
    command->add_flag("--print-interpreter", a.print_interpreter, "Print PT_INTERP's path");
    command->add_flag("--print-os-abi", a.print_os_abi, "Print EI_OSABI ('System V', 'Linux', ...)");
    command->add_flag("--print-soname", a.print_soname, "Print DT_SONAME (shared libraries)");
    command->add_flag("--print-rpath", a.print_rpath, "Print DT_RUNPATH, else DT_RPATH");
    command->add_flag("--print-needed", a.print_needed, "Print the DT_NEEDED entries, one a line");
    command->add_flag("--print-execstack", a.print_execstack, "Print 'execstack: X', '-' or '?'");
    command->add_option("--set-interpreter", a.edit.dynamic.interpreter, "Set PT_INTERP's path");
    command->add_option("--set-os-abi", a.os_abi, "Set EI_OSABI (sysv, linux, freebsd, ...)");
    command->add_option("--set-soname", a.edit.dynamic.set_soname, "Set DT_SONAME");
    command->add_option("--set-rpath", a.edit.dynamic.set_search_path, "Replace the search path");
    command->add_option("--add-rpath", a.edit.dynamic.add_search_path, "Append search path entries (repeatable)");
    command->add_flag("--remove-rpath", a.edit.dynamic.remove_all_search_paths, "Remove DT_RPATH and DT_RUNPATH");
    command->add_flag("--shrink-rpath", a.edit.shrink_search_path,
                      "Keep only search path directories that hold a NEEDED library (and $ORIGIN entries)");
    command->add_option("--allowed-rpath-prefixes", a.edit.allowed_prefixes,
                        "With --shrink-rpath, drop directories not starting with PREFIX (repeatable)");
    auto* force_rpath = command->add_flag("--force-rpath", a.force_rpath, "Write DT_RPATH (converting DT_RUNPATH)");
    command->add_flag("--force-runpath", a.force_runpath, "Write DT_RUNPATH (converting DT_RPATH)")->excludes(force_rpath);
    command->add_option("--replace-needed", a.replace_needed, "Replace a NEEDED entry, OLD=NEW (repeatable)");
    command->add_option("--add-needed", a.edit.dynamic.add_needed, "Add a NEEDED entry (repeatable)");
    command->add_option("--remove-needed", a.edit.dynamic.remove_needed, "Remove a NEEDED entry (repeatable)");
    command->add_flag("--no-default-lib", a.no_default_lib, "Set DF_1_NODEFLIB: ld.so skips the default directories");
    command->add_option("--clear-symbol-version", a.edit.headers.clear_symbol_version,
                        "Make the dynamic symbol SYMBOL unversioned (repeatable)");
    command->add_flag("--add-debug-tag", a.edit.dynamic.add_debug, "Add a DT_DEBUG entry (for debuggers)");
    auto* clear = command->add_flag("--clear-execstack", a.clear_execstack, "Clear PF_X of PT_GNU_STACK");
    command->add_flag("--set-execstack", a.set_execstack,
                      "Set PF_X of PT_GNU_STACK (added, as patchelf adds it, when missing)")->excludes(clear);
    command->add_option("--rename-dynamic-symbols", a.rename_map,
                        "Rename dynamic symbols (defined and imported) by a map file of 'OLD NEW' lines; "
                        "the hash tables are rebuilt");
    command->add_option("--page-size", a.page_size,
                        "Align what the edit appends to this page size (a power of two; at least the file's own "
                        "alignment, offsets and addresses agree modulo 64 KiB anyway)");
    return [args, &global] { return run_elf(*args, global); };
}

}  // namespace wheelfix::cli
