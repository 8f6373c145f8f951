// patchelf's rules for answering and editing one file (patchelf_command.hpp has the contract).
#include "wheelfix/elf/patchelf_command.hpp"

#include <elf.h>
#include <fmt/format.h>

namespace wheelfix::elf {

namespace {

bool wants_dynamic_edit(const PatchelfCommand& command) {
    return command.shrink_rpath || command.remove_rpath || command.set_rpath || command.add_rpath ||
           !command.remove_needed.empty() || !command.replace_needed.empty() || !command.add_needed.empty() ||
           command.no_default_lib || command.debug_tag || !command.clear_version.empty() ||
           !command.rename_symbols.empty();
}

// What patchelf says when it looks for .dynamic in a statically linked file.
void require_dynamic(const ElfFile& file) {
    if (!file.has_dynamic() && !file.section(".dynamic"))
        throw PatchelfError("cannot find section '.dynamic'. The input file is most likely statically linked");
}

bool is_debug_only(const ElfFile& file) {
    const SectionHeader* dynamic = file.section(".dynamic");
    return dynamic && dynamic->type == SHT_NOBITS;
}

FileEdit edit_for(const PatchelfCommand& command, const ElfFile& file) {
    FileEdit edit;
    EditRequest& request = edit.dynamic;
    request.patchelf_rules = true;
    if (command.os_abi) {
        edit.headers.os_abi = os_abi_from_name(*command.os_abi);
        if (!edit.headers.os_abi) throw PatchelfError("unrecognized OS ABI");
    }
    if (command.soname && file.type() == ET_DYN) request.set_soname = command.soname;
    request.interpreter = command.interpreter;
    if (!command.print_execstack && (command.clear_execstack || command.set_execstack))
        edit.headers.executable_stack = !command.clear_execstack;
    if (command.force_rpath) request.force_kind = SearchPathKind::rpath;
    if (!is_debug_only(file)) {
        if (command.shrink_rpath) {
            edit.shrink_search_path = true;
            edit.allowed_prefixes = command.allowed_prefixes;
        } else if (command.remove_rpath) {
            request.remove_all_search_paths = true;
        } else if (command.set_rpath) {
            request.set_search_path = command.set_rpath;
        } else if (command.add_rpath) {
            edit.append_search_path = command.add_rpath;
        }
    }
    request.remove_needed.assign(command.remove_needed.begin(), command.remove_needed.end());
    request.replace_needed.assign(command.replace_needed.begin(), command.replace_needed.end());
    request.add_needed.assign(command.add_needed.begin(), command.add_needed.end());
    edit.headers.clear_symbol_version.assign(command.clear_version.begin(), command.clear_version.end());
    if (command.no_default_lib) request.add_flags_1 = DF_1_NODEFLIB;
    request.add_debug = command.debug_tag;
    request.rename_symbols = command.rename_symbols;
    request.page_size = command.page_size;
    return edit;
}

}  // namespace

std::string patchelf_answers(const PatchelfCommand& command, const ElfFile& file) {
    std::string out;
    if (command.print_interpreter) out += interpreter_of(file) + "\n";
    if (command.print_os_abi) out += os_abi_name(file.os_abi()) + "\n";
    if (command.print_soname && file.type() == ET_DYN) {
        require_dynamic(file);
        if (const auto soname = soname_of(file)) out += *soname + "\n";
    }
    if (command.print_rpath) {
        require_dynamic(file);
        if (!is_debug_only(file)) out += search_path_of(file) + "\n";
    }
    if (command.print_execstack) out += fmt::format("execstack: {}\n", execstack_of(file));
    return out;
}

std::vector<std::string> patchelf_needed(const PatchelfCommand& command, const ElfFile& file) {
    if (!command.print_needed) return {};
    require_dynamic(file);
    return needed_of(file);
}

void patch_elf_file(const PatchelfCommand& command, const std::string& path, const ElfFile& file) {
    if (wants_dynamic_edit(command) && !is_debug_only(file)) require_dynamic(file);
    const FileEdit edit = edit_for(command, file);
    const std::string output = command.output.empty() ? path : command.output;
    (void)edit_elf_file(path, output, edit, !command.output.empty());
}

}  // namespace wheelfix::elf
