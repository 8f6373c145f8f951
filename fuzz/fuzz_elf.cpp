// Fuzz target: the ELF reader and the inspect report built on it.
//
// ElfFile::parse on the input, then every accessor a command uses (dynamic
// strings, sections' bytes, symbols with versions, address mapping), then
// analysis::analyze_elf (which also parses .nv_fatbin and demangles torch
// imports). Refusals must be ElfError (or FatbinError from the report); anything
// the reader hands out must lie inside the input.
#include "fuzz_support.hpp"

#include "wheelfix/analysis/elf_report.hpp"
#include "wheelfix/cuda/fatbin.hpp"
#include "wheelfix/elf/elf_file.hpp"

#include <elf.h>

#include <functional>

using namespace wheelfix;
using fuzz::expect_clean;
using fuzz::fuzz_bug;

namespace {

void check_inside(std::span<const std::uint8_t> image, std::string_view text, const char* what) {
    if (text.empty()) return;
    auto begin = reinterpret_cast<std::uintptr_t>(image.data());
    auto at = reinterpret_cast<std::uintptr_t>(text.data());
    if (at < begin || at + text.size() > begin + image.size()) fuzz_bug(std::string(what) + " points outside the image");
}

void walk(const elf::ElfFile& elf, std::span<const std::uint8_t> image) {
    (void)elf.machine_name();
    for (const auto& section : elf.sections()) {
        check_inside(image, section.name, "section name");
        expect_clean<elf::ElfError>([&] {
            auto bytes = elf.section_bytes(section);
            if (!bytes.empty() && (bytes.data() < image.data() || bytes.data() + bytes.size() > image.data() + image.size()))
                fuzz_bug("section_bytes outside the image");
        });
    }
    for (auto name : elf.needed()) check_inside(image, name, "NEEDED");
    if (auto s = elf.soname()) check_inside(image, *s, "SONAME");
    if (auto s = elf.rpath()) check_inside(image, *s, "RPATH");
    if (auto s = elf.runpath()) check_inside(image, *s, "RUNPATH");
    (void)elf.dynamic_value(DT_FLAGS);
    (void)elf.dynamic_value(DT_FLAGS_1);
    for (const auto& symbol : elf.dynamic_symbols()) {
        check_inside(image, symbol.name, "symbol name");
        check_inside(image, symbol.version, "symbol version");
        check_inside(image, symbol.version_file, "symbol version file");
    }
    for (const auto& need : elf.version_needs()) {
        check_inside(image, need.file, "verneed file");
        for (const auto& aux : need.versions) check_inside(image, aux.name, "vernaux name");
    }
    for (const auto& def : elf.version_defs())
        for (auto name : def.names) check_inside(image, name, "verdef name");
    for (const auto& segment : elf.program_headers())
        if (auto offset = elf.vaddr_to_offset(segment.vaddr); offset && *offset > image.size())
            fuzz_bug("vaddr_to_offset maps past the end of the file");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::uint8_t> image(data, size);
    expect_clean<elf::ElfError>([&] { walk(elf::ElfFile::parse(image), image); });
    expect_clean<elf::ElfError, cuda::FatbinError>([&] {
        auto report = analysis::analyze_elf("pkg/sub/fuzz.so", image, 2);
        for (const auto& entry : report.fatbin) (void)entry.arch_name();
    });
    return 0;
}
