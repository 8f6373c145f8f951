// elf_dump_lief FILE: LIEF 0.9.0's view of an ELF file, printed canonically.
//
// Contract: prints exactly the canonical dump elf_dump_ours prints, built only
// from what LIEF parsed, so the agreement test can diff the two:
//   class ELF64|ELF32           header().identity_class()
//   endian little|big           header().identity_data()
//   machine <e_machine>         header().machine_type() as a number
//   soname X / needed X (in file order) / rpath X / runpath X   dynamic_entries()
//   sym <name> <defined|undefined> <binding> <type> <version|-|~> <verneed file|->
//                               dynamic_symbols() without index 0 (LIEF returns the
//                               null symbol, ours does not), sorted; the verneed file
//                               is the SymbolVersionRequirement whose auxiliary entry
//                               has vna_other equal to the symbol's version index.
// Left out on purpose (in both tools), because LIEF 0.9.0 gets it wrong:
// - the version of a symbol defined through a verdef entry that lists parent
//   versions (vd_cnt > 1, e.g. `VERS_2.0 { ... } VERS_1.0;`). LIEF links the symbol
//   to every verdaux of the entry in turn, so it ends up naming the LAST one (the
//   parent, VERS_1.0) where the ELF rule and ld.so take the first (VERS_2.0). Both
//   tools print `~` as the version of such symbols; readelf is the oracle for them
//   (the agreement test compares `elf_dump_ours --readelf` with readelf).
// Not in the canonical form at all: the versym hidden bit (sym@VER vs sym@@VER);
// the agreement test checks it against readelf instead.
// Exit status 2 with a message on stderr when LIEF cannot parse the file.
#include <LIEF/ELF.hpp>
#include <LIEF/logging.hpp>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace LIEF::ELF;

std::string class_name(const Header& header) {
    return header.identity_class() == ELF_CLASS::ELFCLASS64 ? "ELF64" : "ELF32";
}

std::string endian_name(const Header& header) {
    return header.identity_data() == ELF_DATA::ELFDATA2LSB ? "little" : "big";
}

void print_dynamic_strings(const Binary& binary) {
    for (const DynamicEntry& entry : binary.dynamic_entries())
        if (const auto* soname = dynamic_cast<const DynamicSharedObject*>(&entry))
            std::cout << "soname " << soname->name() << '\n';
    for (const DynamicEntry& entry : binary.dynamic_entries())
        if (const auto* library = dynamic_cast<const DynamicEntryLibrary*>(&entry))
            std::cout << "needed " << library->name() << '\n';
    for (const DynamicEntry& entry : binary.dynamic_entries())
        if (const auto* rpath = dynamic_cast<const DynamicEntryRpath*>(&entry))
            std::cout << "rpath " << rpath->rpath() << '\n';
    for (const DynamicEntry& entry : binary.dynamic_entries())
        if (const auto* runpath = dynamic_cast<const DynamicEntryRunPath*>(&entry))
            std::cout << "runpath " << runpath->runpath() << '\n';
}

constexpr std::uint16_t kVersionIndexMask = 0x7fff;  // without the hidden bit

// vna_other -> the file of the verneed entry that holds it.
std::map<std::uint16_t, std::string> verneed_files(const Binary& binary) {
    std::map<std::uint16_t, std::string> files;
    for (const SymbolVersionRequirement& need : binary.symbols_version_requirement())
        for (const SymbolVersionAuxRequirement& aux : need.auxiliary_symbols())
            files.emplace(aux.other(), need.name());
    return files;
}

// vd_ndx of the verdef entries that name parent versions (see the contract above).
std::set<std::uint16_t> verdefs_with_parents(const Binary& binary) {
    std::set<std::uint16_t> indices;
    for (const SymbolVersionDefinition& def : binary.symbols_version_definition())
        if (def.symbols_aux().size() > 1) indices.insert(def.ndx());
    return indices;
}

struct VersionTables {
    std::map<std::uint16_t, std::string> verneed_files;
    std::set<std::uint16_t> verdefs_with_parents;
};

std::string symbol_line(const Symbol& symbol, const VersionTables& tables) {
    const bool defined = symbol.shndx() != 0;
    std::string version = "-";
    std::string file = "-";
    if (symbol.has_version() && symbol.symbol_version().has_auxiliary_version()) {
        const std::uint16_t index = symbol.symbol_version().value() & kVersionIndexMask;
        const auto need = tables.verneed_files.find(index);
        version = symbol.symbol_version().symbol_version_auxiliary().name();
        if (!defined && need != tables.verneed_files.end()) file = need->second;
        if (defined && need == tables.verneed_files.end() &&
            tables.verdefs_with_parents.count(index))
            version = "~";
    }
    return "sym " + symbol.name() + (defined ? " defined " : " undefined ") +
           std::to_string(static_cast<unsigned>(symbol.binding())) + ' ' +
           std::to_string(static_cast<unsigned>(symbol.type())) + ' ' + version + ' ' + file;
}

void print_symbols(const Binary& binary) {
    const VersionTables tables{verneed_files(binary), verdefs_with_parents(binary)};
    std::vector<std::string> lines;
    bool null_symbol = true;  // LIEF returns index 0, the null symbol; ours skips it
    for (const Symbol& symbol : binary.dynamic_symbols()) {
        if (!null_symbol) lines.push_back(symbol_line(symbol, tables));
        null_symbol = false;
    }
    std::sort(lines.begin(), lines.end());
    for (const std::string& line : lines) std::cout << line << '\n';
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: elf_dump_lief FILE\n";
        return 2;
    }
    LIEF::Logger::disable();
    try {
        std::unique_ptr<Binary> binary = Parser::parse(argv[1]);
        if (!binary) {
            std::cerr << "elf_dump_lief: " << argv[1] << ": LIEF could not parse the file\n";
            return 2;
        }
        const Header& header = binary->header();
        std::cout << "class " << class_name(header) << '\n';
        std::cout << "endian " << endian_name(header) << '\n';
        std::cout << "machine " << static_cast<unsigned>(header.machine_type()) << '\n';
        print_dynamic_strings(*binary);
        print_symbols(*binary);
    } catch (const std::exception& error) {
        std::cerr << "elf_dump_lief: " << argv[1] << ": " << error.what() << '\n';
        return 2;
    }
    return 0;
}
