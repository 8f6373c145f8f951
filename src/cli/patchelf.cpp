// The patchelf-compatible front end: wheelfix invoked as `patchelf` (argv[0]'s base
// name) takes patchelf 0.19's command line and prints what it prints.
//
// Contract (tests/e2e/test_patchelf_parity.py holds it against the real patchelf):
// - Options are parsed as patchelf parses them: left to right, any order, every
//   other argument a file; `--replace-needed OLD NEW` takes two; a value starting
//   with '@' is read from that file (where patchelf does so); `--version` prints
//   "patchelf 0.19.3" (auditwheel parses it); no argument prints the syntax to
//   stderr with status 1, `--help` with status 0.
// - Per file, in patchelf's order: the --print-* answers from the input (byte for
//   byte, stdout), then the edits (elf/patchelf_command.hpp: patchelf's rules for
//   answering and editing).
// - Every error is one line "patchelf: <what>" on stderr and status 1, as patchelf.
// - --rename-dynamic-symbols reads its map while parsing, with patchelf's checks
//   and messages (elf::read_rename_map).
// - Not done, refused with a line saying so: --build-resolution-cache; removing a
//   NEEDED entry whose symbol versions are still needed (ld.so would assert); a
//   --page-size that is not a power of two (elf::EditRequest::page_size says what
//   one does). Accepted without effect: --no-sort, --no-clobber-old-sections, --debug.
#include "commands.hpp"

#include "wheelfix/elf/patchelf_command.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/text.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace wheelfix::cli {

namespace {

using elf::PatchelfError;
using Command = elf::PatchelfCommand;

constexpr const char* kPatchelfVersion = "patchelf 0.19.3";

constexpr const char* kSyntax =
    "  [--set-interpreter FILENAME]\n"
    "  [--page-size SIZE]\n"
    "  [--print-interpreter]\n"
    "  [--print-os-abi]\t\tPrints 'EI_OSABI' field of ELF header\n"
    "  [--set-os-abi ABI]\t\tSets 'EI_OSABI' field of ELF header to ABI.\n"
    "  [--print-soname]\t\tPrints 'DT_SONAME' entry of .dynamic section. Raises an error if DT_SONAME doesn't exist\n"
    "  [--set-soname SONAME]\t\tSets 'DT_SONAME' entry to SONAME.\n"
    "  [--set-rpath RPATH]\n"
    "  [--add-rpath RPATH]\n"
    "  [--remove-rpath]\n"
    "  [--shrink-rpath]\n"
    "  [--allowed-rpath-prefixes PREFIXES]\t\tWith '--shrink-rpath', reject rpath entries not starting with the allowed prefix\n"
    "  [--print-rpath]\n"
    "  [--force-rpath]\n"
    "  [--add-needed LIBRARY]\n"
    "  [--remove-needed LIBRARY]\n"
    "  [--replace-needed LIBRARY NEW_LIBRARY]\n"
    "  [--print-needed]\n"
    "  [--no-default-lib]\n"
    "  [--no-sort]\t\tDo not sort program+section headers; useful for debugging patchelf.\n"
    "  [--clear-symbol-version SYMBOL]\n"
    "  [--add-debug-tag]\n"
    "  [--build-resolution-cache]\n"
    "  [--print-execstack]\t\tPrints whether the object requests an executable stack\n"
    "  [--clear-execstack]\n"
    "  [--set-execstack]\n"
    "  [--rename-dynamic-symbols NAME_MAP_FILE]\tRenames dynamic symbols. The map file should contain two symbols (old_name new_name) per line\n"
    "  [--no-clobber-old-sections]\t\tDo not clobber old section values - only use when the binary expects to find section info at the old location.\n"
    "  [--output FILE]\n"
    "  [--debug]\n"
    "  [--version]\n"
    "  FILENAME...\n";

std::string read_whole(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw PatchelfError("getting info about '" + path + "': No such file or directory");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// patchelf's resolveArgument: "@FILE" is the file's contents.
std::string resolved(const char* argument) {
    if (argument[0] == '@') return read_whole(argument + 1);
    return argument;
}

std::vector<std::string> split_colons(const std::string& text) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, ':')) parts.push_back(part);
    return parts;
}

enum class Parsed { run, done_ok };

Parsed parse(int argc, char** argv, Command& command) {
    const auto value = [&](int& i) -> const char* {
        if (++i == argc) throw PatchelfError("missing argument");
        return argv[i];
    };
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--set-interpreter" || arg == "--interpreter") command.interpreter = resolved(value(i));
        else if (arg == "--page-size") {
            const int size = std::atoi(value(i));
            if (size <= 0) throw PatchelfError("invalid argument to --page-size");
            command.page_size = static_cast<std::uint64_t>(size);
        } else if (arg == "--print-interpreter") command.print_interpreter = true;
        else if (arg == "--print-os-abi") command.print_os_abi = true;
        else if (arg == "--set-os-abi") command.os_abi = resolved(value(i));
        else if (arg == "--print-soname") command.print_soname = true;
        else if (arg == "--set-soname") command.soname = resolved(value(i));
        else if (arg == "--remove-rpath") command.remove_rpath = true;
        else if (arg == "--shrink-rpath") command.shrink_rpath = true;
        else if (arg == "--allowed-rpath-prefixes") command.allowed_prefixes = split_colons(value(i));
        else if (arg == "--set-rpath") command.set_rpath = resolved(value(i));
        else if (arg == "--add-rpath") command.add_rpath = resolved(value(i));
        else if (arg == "--print-rpath") command.print_rpath = true;
        else if (arg == "--force-rpath") command.force_rpath = true;
        else if (arg == "--print-needed") command.print_needed = true;
        else if (arg == "--add-needed") command.add_needed.insert(resolved(value(i)));
        else if (arg == "--remove-needed") command.remove_needed.insert(resolved(value(i)));
        else if (arg == "--replace-needed") {
            if (i + 2 >= argc) throw PatchelfError("missing argument(s)");
            command.replace_needed[argv[i + 1]] = argv[i + 2];
            i += 2;
        } else if (arg == "--clear-symbol-version") command.clear_version.insert(resolved(value(i)));
        else if (arg == "--print-execstack") command.print_execstack = true;
        else if (arg == "--clear-execstack") command.clear_execstack = true;
        else if (arg == "--set-execstack") command.set_execstack = true;
        else if (arg == "--output") command.output = resolved(value(i));
        else if (arg == "--no-default-lib") command.no_default_lib = true;
        else if (arg == "--add-debug-tag") command.debug_tag = true;
        else if (arg == "--build-resolution-cache") command.resolution_cache = true;
        else if (arg == "--rename-dynamic-symbols") {
            // patchelf reads the map while parsing (a later map's pairs join the
            // earlier ones'), before looking at any file
            for (auto& pair : elf::read_rename_map(value(i), true)) command.rename_symbols.push_back(std::move(pair));
        } else if (arg == "--debug" || arg == "--no-sort" || arg == "--no-clobber-old-sections") {
        } else if (arg == "--help" || arg == "-h") {
            fmt::print(stderr, "syntax: {}\n{}", argv[0], kSyntax);
            return Parsed::done_ok;
        } else if (arg == "--version") {
            fmt::print("{}\n", kPatchelfVersion);
            return Parsed::done_ok;
        } else command.files.push_back(arg);
    }
    if (command.files.empty()) throw PatchelfError("missing filename");
    if (!command.output.empty() && command.files.size() != 1)
        throw PatchelfError("--output option only allowed with single input file");
    if (command.set_rpath && command.add_rpath) throw PatchelfError("--set-rpath option not allowed with --add-rpath");
    if (command.resolution_cache)
        throw PatchelfError("--build-resolution-cache is not supported by wheelfix's patchelf front end");
    return Parsed::run;
}

void patch_file(const Command& command, const std::string& path) {
    std::optional<MappedFile> mapped;
    try {
        mapped.emplace(path);
    } catch (const InputError&) {
        throw PatchelfError("getting info about '" + path + "': No such file or directory");
    }
    if (!elf::is_elf(mapped->bytes())) throw PatchelfError("not an ELF executable");
    const elf::ElfFile file = elf::ElfFile::parse(mapped->bytes());
    fmt::print("{}", elf::patchelf_answers(command, file));
    for (const std::string& name : elf::patchelf_needed(command, file)) fmt::print("{}\n", name);
    elf::patch_elf_file(command, path, file);
}

}  // namespace

bool invoked_as_patchelf(const char* argv0) {
    return base_name(argv0) == "patchelf";
}

int run_patchelf_front_end(int argc, char** argv) {
    if (argc <= 1) {
        fmt::print(stderr, "syntax: {}\n{}", argv[0], kSyntax);
        return 1;
    }
    Command command;
    try {
        if (parse(argc, argv, command) != Parsed::run) return 0;
        for (const std::string& path : command.files) patch_file(command, path);
        std::fflush(stdout);
        return 0;
    } catch (const std::exception& error) {
        std::fflush(stdout);
        const std::string what = error.what();
        fmt::print(stderr, "patchelf: {}\n", what);
        return 1;
    }
}

}  // namespace wheelfix::cli
