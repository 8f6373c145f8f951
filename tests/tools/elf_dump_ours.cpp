// elf_dump_ours FILE [--readelf]: wheelfix's ELF reader, printed canonically.
//
// Contract: prints the canonical dump shared with elf_dump_lief (see there for the
// fields, their order, and what is deliberately left out):
//   class ELF64|ELF32 / endian little|big / machine <e_machine> / soname X /
//   needed X (in order) / rpath X / runpath X / then sorted lines
//   sym <name> <defined|undefined> <binding> <type> <version|-|~> <verneed file|->
// With --readelf it prints instead what `readelf -dW` and `readelf --dyn-syms -W`
// show, in a form the agreement test builds from readelf's output:
//   soname/needed/rpath/runpath lines, then sorted `dynsym <UND|DEF> <name>[@VER|@@VER]`
//   with readelf's naming rules (see readelf_symbol_name).
// Exit status 2 with a message on stderr when the file cannot be read or parsed.
#include <wheelfix/elf/elf_file.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using wheelfix::elf::ElfFile;
using wheelfix::elf::Symbol;

std::vector<std::uint8_t> read_file(const char* path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open file");
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    in.seekg(0, std::ios::beg);
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
    if (!in.read(reinterpret_cast<char*>(bytes.data()), size))
        throw std::runtime_error("read failed");
    return bytes;
}

std::string or_dash(std::string_view text) { return text.empty() ? "-" : std::string(text); }

void print_dynamic_strings(const ElfFile& elf) {
    if (auto soname = elf.soname()) std::cout << "soname " << *soname << '\n';
    for (std::string_view needed : elf.needed()) std::cout << "needed " << needed << '\n';
    if (auto rpath = elf.rpath()) std::cout << "rpath " << *rpath << '\n';
    if (auto runpath = elf.runpath()) std::cout << "runpath " << *runpath << '\n';
}

void print_sorted(std::vector<std::string> lines) {
    std::sort(lines.begin(), lines.end());
    for (const std::string& line : lines) std::cout << line << '\n';
}

// "~" for a version LIEF 0.9.0 gets wrong (defined through a verdef entry with
// parent versions); see the contract in elf_dump_lief.cpp.
std::string canonical_version(const ElfFile& elf, const Symbol& symbol) {
    if (symbol.defined() && !symbol.version.empty() && symbol.version_file.empty())
        for (const wheelfix::elf::VersionDef& def : elf.version_defs())
            if (def.index == symbol.version_index && def.names.size() > 1) return "~";
    return or_dash(symbol.version);
}

std::string canonical_symbol(const ElfFile& elf, const Symbol& symbol) {
    return "sym " + std::string(symbol.name) + (symbol.defined() ? " defined " : " undefined ") +
           std::to_string(symbol.binding) + ' ' + std::to_string(symbol.type) + ' ' +
           canonical_version(elf, symbol) + ' ' +
           (symbol.defined() ? "-" : or_dash(symbol.version_file));
}

void print_canonical(const ElfFile& elf) {
    std::cout << "class " << (elf.elf_class() == wheelfix::elf::Class::elf64 ? "ELF64" : "ELF32")
              << '\n';
    std::cout << "endian " << (elf.endian() == wheelfix::elf::Endian::little ? "little" : "big")
              << '\n';
    std::cout << "machine " << elf.machine() << '\n';
    print_dynamic_strings(elf);
    std::vector<std::string> lines;
    for (const Symbol& symbol : elf.dynamic_symbols())
        lines.push_back(canonical_symbol(elf, symbol));
    print_sorted(std::move(lines));
}

// The symbol as `readelf --dyn-syms -W` names it (binutils 2.40):
// - a section symbol without a name shows its section's name;
// - name@@VER for the default version of a symbol defined through verdef,
//   name@VER for hidden versions and verneed versions (undefined, or defined by a
//   copy relocation); nothing for index 0/1;
// - no version when the verdef name is the symbol's own name string (readelf
//   compares st_name with vda_name: the ABS symbols naming a version definition).
std::string readelf_symbol_name(const ElfFile& elf, const Symbol& symbol) {
    constexpr std::uint8_t kSectionSymbol = 3;  // STT_SECTION
    if (symbol.type == kSectionSymbol && symbol.name.empty() &&
        symbol.section_index < elf.sections().size())
        return std::string(elf.sections()[symbol.section_index].name);
    std::string name(symbol.name);
    const bool from_verdef = symbol.version_file.empty();
    if (symbol.version.empty() || (from_verdef && symbol.version.data() == symbol.name.data()))
        return name;
    const bool default_version = symbol.defined() && from_verdef && !symbol.version_hidden;
    return name + (default_version ? "@@" : "@") + std::string(symbol.version);
}

std::string readelf_symbol(const ElfFile& elf, const Symbol& symbol) {
    return std::string("dynsym ") + (symbol.defined() ? "DEF " : "UND ") +
           readelf_symbol_name(elf, symbol);
}

void print_readelf_view(const ElfFile& elf) {
    print_dynamic_strings(elf);
    std::vector<std::string> lines;
    for (const Symbol& symbol : elf.dynamic_symbols()) lines.push_back(readelf_symbol(elf, symbol));
    print_sorted(std::move(lines));
}

}  // namespace

int main(int argc, char** argv) {
    const bool readelf_view = argc == 3 && std::string(argv[2]) == "--readelf";
    if (argc != 2 && !readelf_view) {
        std::cerr << "usage: elf_dump_ours FILE [--readelf]\n";
        return 2;
    }
    try {
        const std::vector<std::uint8_t> bytes = read_file(argv[1]);
        const ElfFile elf = ElfFile::parse(bytes);
        if (readelf_view)
            print_readelf_view(elf);
        else
            print_canonical(elf);
    } catch (const std::exception& error) {
        std::cerr << "elf_dump_ours: " << argv[1] << ": " << error.what() << '\n';
        return 2;
    }
    return 0;
}
