// fatbin_dump FILE [SECTION]: our fatbin parser's view of an ELF file, one line an
// entry, `kind arch compressed|uncompressed` (e.g. `cubin sm_100a uncompressed`),
// in section order.
//
// Contract: without SECTION it reads `.nv_fatbin` when the file has one and
// `__nv_relfatbin` otherwise, the choice cuobjdump makes; a file with neither prints
// nothing (and a note on stderr) and exits 0. Unreadable files, bad ELF and bad
// fatbin data exit 2 with one line on stderr. The e2e tests compare this output
// with cuobjdump's listing.
#include <wheelfix/cuda/fatbin.hpp>
#include <wheelfix/elf/elf_file.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

std::vector<std::uint8_t> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const wheelfix::elf::SectionHeader* fatbin_section(const wheelfix::elf::ElfFile& elf,
                                                   const std::string& wanted) {
    if (!wanted.empty()) return elf.section(wanted);
    if (const auto* executable = elf.section(".nv_fatbin")) return executable;
    return elf.section("__nv_relfatbin");
}

void print_entries(const std::vector<wheelfix::cuda::FatbinEntry>& entries) {
    for (const auto& entry : entries)
        std::printf("%s %s %s\n", entry.kind_name(), entry.arch_name().c_str(),
                    entry.compressed ? "compressed" : "uncompressed");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, "usage: fatbin_dump FILE [SECTION]\n");
        return 2;
    }
    const std::string path = argv[1];
    const std::string wanted = argc == 3 ? argv[2] : "";
    try {
        const std::vector<std::uint8_t> bytes = read_file(path);
        const auto elf = wheelfix::elf::ElfFile::parse(bytes);
        const auto* section = fatbin_section(elf, wanted);
        if (section == nullptr) {
            std::fprintf(stderr, "fatbin_dump: %s: no fatbin section\n", path.c_str());
            return 0;
        }
        print_entries(wheelfix::cuda::parse_fatbin_section(elf.section_bytes(*section)));
        return 0;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "fatbin_dump: %s: %s\n", path.c_str(), error.what());
        return 2;
    }
}
