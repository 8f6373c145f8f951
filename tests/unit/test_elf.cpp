// Unit tests: the ELF reader (src/elf) on the fixtures of tests/data/elf.
//
// The fixtures are built by tests/data/elf/build.sh (x86_64, i386, aarch64) or
// taken from auditwheel's wheels (s390x big endian, mips64el); the exact values
// below follow those recipes. Hostile inputs are mutations of those bytes made
// here; each must parse or throw ElfError — never crash (the asan preset runs
// these), never throw anything else. Mutated images live in exact-size heap
// buffers so that AddressSanitizer sees any read past their end.
#include "wheelfix/elf/dynamic_array.hpp"
#include "wheelfix/elf/elf_file.hpp"

#include <doctest/doctest.h>

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace wheelfix::elf;

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes load_fixture(const std::string& name) {
    const std::string path = std::string(WHEELFIX_TEST_DATA) + "/elf/" + name;
    std::ifstream in(path, std::ios::binary);
    REQUIRE_MESSAGE(in.good(), "missing fixture " << path << " (run tests/data/elf/build.sh)");
    return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// An image in a heap block of exactly its size, so ASan flags any over-read.
class ExactBuffer {
public:
    explicit ExactBuffer(std::span<const std::uint8_t> bytes)
        : size_(bytes.size()), data_(new std::uint8_t[std::max<std::size_t>(size_, 1)]) {
        if (size_ != 0) std::memcpy(data_.get(), bytes.data(), size_);
    }
    std::span<const std::uint8_t> span() const { return {data_.get(), size_}; }

private:
    std::size_t size_;
    std::unique_ptr<std::uint8_t[]> data_;
};

// Reads every string and table the ElfFile hands out, so ASan checks them all.
std::size_t touch_everything(const ElfFile& elf) {
    std::size_t total = elf.needed().size();
    for (std::string_view name : elf.needed()) total += name.size();
    total += elf.soname().value_or("").size() + elf.rpath().value_or("").size() +
             elf.runpath().value_or("").size() + elf.dynamic_value(DT_FLAGS).value_or(0) +
             elf.dynamic_value(DT_FLAGS_1).value_or(0);
    for (const Symbol& symbol : elf.dynamic_symbols())
        total += std::count(symbol.name.begin(), symbol.name.end(), 'x') + symbol.version.size() +
                 symbol.version_file.size();
    for (const VersionNeed& need : elf.version_needs())
        for (const VersionNeedAux& aux : need.versions) total += need.file.size() + aux.name.size();
    for (const VersionDef& def : elf.version_defs())
        for (std::string_view name : def.names) total += name.size();
    for (const SectionHeader& section : elf.sections()) {
        total += section.name.size();
        try {
            const auto data = elf.section_bytes(section);
            total += data.empty() ? 0 : data.front() + data.back();
        } catch (const ElfError&) {
        }
    }
    total += elf.machine_name().size();
    return total;
}

// True when the image parses, false when it is rejected with a one-line ElfError.
// Anything else (another exception, a crash under ASan) fails the test.
bool parses(std::span<const std::uint8_t> bytes) {
    const ExactBuffer buffer(bytes);
    try {
        touch_everything(ElfFile::parse(buffer.span()));
        return true;
    } catch (const ElfError& error) {
        const std::string message = error.what();
        CHECK_FALSE(message.empty());
        CHECK(message.find('\n') == std::string::npos);
        return false;
    }
}

bool rejects(std::span<const std::uint8_t> bytes) { return !parses(bytes); }

// --- little helpers to patch an image the way its own header says -------------

struct Patcher {
    Bytes& bytes;
    bool big_endian;
    bool is64;

    explicit Patcher(Bytes& image)
        : bytes(image),
          big_endian(image.at(EI_DATA) == ELFDATA2MSB),
          is64(image.at(EI_CLASS) == ELFCLASS64) {}

    std::uint64_t get(std::uint64_t offset, unsigned width) const {
        REQUIRE(offset + width <= bytes.size());
        std::uint64_t value = 0;
        for (unsigned i = 0; i < width; ++i)
            value = (value << 8) | bytes[offset + (big_endian ? i : width - 1 - i)];
        return value;
    }
    void put(std::uint64_t offset, unsigned width, std::uint64_t value) {
        REQUIRE(offset + width <= bytes.size());
        for (unsigned i = 0; i < width; ++i)
            bytes[offset + (big_endian ? width - 1 - i : i)] =
                static_cast<std::uint8_t>(value >> (8 * i));
    }
    unsigned word() const { return is64 ? 8 : 4; }

    // ELF header fields.
    std::uint64_t phoff_at() const { return is64 ? 32 : 28; }
    std::uint64_t shoff_at() const { return is64 ? 40 : 32; }
    std::uint64_t phnum_at() const { return is64 ? 56 : 44; }
    std::uint64_t shnum_at() const { return is64 ? 60 : 48; }
    std::uint64_t shstrndx_at() const { return is64 ? 62 : 50; }
    std::uint64_t shoff() const { return get(shoff_at(), word()); }
    std::uint64_t shentsize() const { return is64 ? 64 : 40; }
    std::uint64_t phentsize() const { return is64 ? 56 : 32; }

    void drop_section_headers() {
        put(shoff_at(), word(), 0);
        put(shnum_at(), 2, 0);
        put(shstrndx_at(), 2, 0);
    }
    // Section header fields, for section `index`.
    std::uint64_t sh_offset_at(std::uint64_t index) const {
        return shoff() + index * shentsize() + 8 + 2 * word();
    }
    std::uint64_t sh_size_at(std::uint64_t index) const {
        return shoff() + index * shentsize() + 8 + 3 * word();
    }
    std::uint64_t sh_info_at(std::uint64_t index) const {
        return shoff() + index * shentsize() + 12 + 4 * word();
    }
    // Program header fields, for program header `index`.
    std::uint64_t ph_at(std::uint64_t index) const {
        return get(phoff_at(), word()) + index * phentsize();
    }
    std::uint64_t p_offset_at(std::uint64_t index) const { return ph_at(index) + (is64 ? 8 : 4); }
    std::uint64_t p_filesz_at(std::uint64_t index) const { return ph_at(index) + (is64 ? 32 : 16); }
};

std::size_t section_index(const ElfFile& elf, std::string_view name) {
    const SectionHeader* section = elf.section(name);
    REQUIRE_MESSAGE(section != nullptr, "no section " << name);
    return static_cast<std::size_t>(section - elf.sections().data());
}

std::size_t dynamic_program_header(const ElfFile& elf) {
    for (std::size_t i = 0; i < elf.program_headers().size(); ++i)
        if (elf.program_headers()[i].type == PT_DYNAMIC) return i;
    FAIL("no PT_DYNAMIC");
    return 0;
}

// File offset of the d_tag of the first dynamic entry with `tag`.
std::uint64_t dynamic_entry_at(const ElfFile& elf, std::int64_t tag) {
    const std::uint64_t entsize = elf.elf_class() == Class::elf64 ? 16 : 8;
    const auto& entries = elf.dynamic();
    const auto found = std::find_if(entries.begin(), entries.end(),
                                    [&](const DynamicEntry& e) { return e.tag == tag; });
    REQUIRE_MESSAGE(found != entries.end(), "no dynamic tag " << tag);
    return elf.program_headers()[dynamic_program_header(elf)].offset +
           (found - entries.begin()) * entsize;
}

const Symbol* find_symbol(const ElfFile& elf, std::string_view name,
                          std::string_view version = {}) {
    for (const Symbol& symbol : elf.dynamic_symbols())
        if (symbol.name == name && (version.empty() || symbol.version == version)) return &symbol;
    return nullptr;
}

// Everything the reader says about the dynamic symbols, one sortable line each.
std::vector<std::string> describe_symbols(const ElfFile& elf) {
    std::vector<std::string> lines;
    for (const Symbol& s : elf.dynamic_symbols())
        lines.push_back(std::string(s.name) + '|' + std::to_string(s.section_index) + '|' +
                        std::to_string(s.binding) + '|' + std::to_string(s.type) + '|' +
                        std::to_string(s.value) + '|' + std::to_string(s.size) + '|' +
                        std::string(s.version) + '|' + std::string(s.version_file) + '|' +
                        (s.version_hidden ? "hidden" : "default"));
    std::sort(lines.begin(), lines.end());
    return lines;
}

std::vector<std::string> strings(const std::vector<std::string_view>& views) {
    return {views.begin(), views.end()};
}

const char* const kDynamicFixtures[] = {
    "libversioned.so",     "libplain.so",
    "copyreloc",           "libwfbase32.so",
    "libwfuser32.so",      "libversioned-aarch64.so",
    "testsimple-s390x.so", "testsimple-mips64el.so",
};

}  // namespace

// --- exact values -----------------------------------------------------------------

TEST_CASE("elf: x86_64 library with SONAME, DT_RPATH and symbol versions") {
    const Bytes bytes = load_fixture("libversioned.so");
    const ElfFile elf = ElfFile::parse(bytes);
    CHECK(elf.elf_class() == Class::elf64);
    CHECK(elf.endian() == Endian::little);
    CHECK(elf.machine() == EM_X86_64);
    CHECK(elf.machine_name() == "x86_64");
    CHECK(elf.type() == ET_DYN);
    REQUIRE(elf.has_dynamic());
    CHECK(strings(elf.needed()) == std::vector<std::string>{"libm.so.6", "libc.so.6"});
    CHECK(elf.soname() == "libversioned.so.1");
    CHECK(elf.rpath() == "$ORIGIN/../lib:/opt/wf");
    CHECK_FALSE(elf.runpath().has_value());

    const Symbol* memcpy_symbol = find_symbol(elf, "memcpy");
    REQUIRE(memcpy_symbol != nullptr);
    CHECK_FALSE(memcpy_symbol->defined());
    CHECK(memcpy_symbol->version == "GLIBC_2.14");
    CHECK(memcpy_symbol->version_file == "libc.so.6");
    const Symbol* sqrt_symbol = find_symbol(elf, "sqrt");
    REQUIRE(sqrt_symbol != nullptr);
    CHECK(sqrt_symbol->version == "GLIBC_2.2.5");
    CHECK(sqrt_symbol->version_file == "libm.so.6");

    const Symbol* api_old = find_symbol(elf, "wf_api", "VERS_1.0");
    const Symbol* api_new = find_symbol(elf, "wf_api", "VERS_2.0");
    REQUIRE(api_old != nullptr);
    REQUIRE(api_new != nullptr);
    CHECK(api_old->defined());
    CHECK(api_old->version_hidden);        // wf_api@VERS_1.0
    CHECK_FALSE(api_new->version_hidden);  // wf_api@@VERS_2.0
    CHECK(api_new->version_file.empty());
    CHECK(api_new->type == STT_FUNC);
    CHECK(api_new->binding == STB_GLOBAL);
    const Symbol* counter = find_symbol(elf, "wf_counter");
    REQUIRE(counter != nullptr);
    CHECK(counter->version == "VERS_2.0");
    CHECK(counter->type == STT_OBJECT);
    CHECK(counter->size == 4);

    REQUIRE(elf.version_needs().size() == 2);
    CHECK(elf.version_needs()[0].file == "libm.so.6");
    CHECK(elf.version_needs()[1].file == "libc.so.6");
    std::set<std::string> glibc_needed;
    for (const VersionNeedAux& aux : elf.version_needs()[1].versions)
        glibc_needed.insert(std::string(aux.name));
    CHECK(glibc_needed == std::set<std::string>{"GLIBC_2.2.5", "GLIBC_2.14"});

    REQUIRE(elf.version_defs().size() == 3);
    CHECK(elf.version_defs()[0].flags == VER_FLG_BASE);
    CHECK(elf.version_defs()[0].names == std::vector<std::string_view>{"libversioned.so.1"});
    CHECK(elf.version_defs()[2].index == 3);
    CHECK(elf.version_defs()[2].names == std::vector<std::string_view>{"VERS_2.0", "VERS_1.0"});
}

TEST_CASE("elf: sections, section bytes and address mapping") {
    const Bytes bytes = load_fixture("libversioned.so");
    const ElfFile elf = ElfFile::parse(bytes);
    const SectionHeader* dynstr = elf.section(".dynstr");
    REQUIRE(dynstr != nullptr);
    CHECK(dynstr->type == SHT_STRTAB);
    const auto data = elf.section_bytes(*dynstr);
    const std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
    CHECK(text.find("libversioned.so.1") != std::string_view::npos);
    CHECK(elf.vaddr_to_offset(dynstr->addr) == dynstr->offset);
    CHECK_FALSE(elf.vaddr_to_offset(0xffffffff00000000ull).has_value());
    CHECK(elf.section(".no-such-section") == nullptr);
    const SectionHeader* bss = elf.section(".bss");
    REQUIRE(bss != nullptr);
    CHECK(elf.section_bytes(*bss).empty());
}

TEST_CASE("elf: DT_RUNPATH without SONAME, unversioned import, DT_HASH only") {
    const Bytes bytes = load_fixture("libplain.so");
    const ElfFile elf = ElfFile::parse(bytes);
    CHECK(strings(elf.needed()) == std::vector<std::string>{"libz.so.1", "libc.so.6"});
    CHECK_FALSE(elf.soname().has_value());
    CHECK_FALSE(elf.rpath().has_value());
    CHECK(elf.runpath() == "$ORIGIN");
    const Symbol* zlib = find_symbol(elf, "zlibVersion");
    REQUIRE(zlib != nullptr);
    CHECK_FALSE(zlib->defined());
    CHECK(zlib->version.empty());
    CHECK(zlib->version_index == 1);
    CHECK(elf.section(".gnu.hash") == nullptr);
}

TEST_CASE("elf: a copy-relocated definition carries its verneed version") {
    const Bytes bytes = load_fixture("copyreloc");
    const ElfFile elf = ElfFile::parse(bytes);
    CHECK(elf.type() == ET_EXEC);
    CHECK(strings(elf.needed()) == std::vector<std::string>{"libc.so.6"});
    const Symbol* environ_symbol = find_symbol(elf, "environ");
    REQUIRE(environ_symbol != nullptr);
    CHECK(environ_symbol->defined());
    CHECK(environ_symbol->version == "GLIBC_2.2.5");
    CHECK(environ_symbol->version_file == "libc.so.6");
    const Symbol* start = find_symbol(elf, "__libc_start_main");
    REQUIRE(start != nullptr);
    CHECK(start->version == "GLIBC_2.34");
}

TEST_CASE("elf: ELF32 pair, versions needed from a non-libc library") {
    const Bytes base_bytes = load_fixture("libwfbase32.so");
    const ElfFile base = ElfFile::parse(base_bytes);
    CHECK(base.elf_class() == Class::elf32);
    CHECK(base.machine() == EM_386);
    CHECK(base.machine_name() == "i686");
    CHECK(base.soname() == "libwfbase32.so.1");
    CHECK(base.needed().empty());
    const Symbol* twice = find_symbol(base, "wf_base_twice");
    REQUIRE(twice != nullptr);
    CHECK(twice->version == "BASE_2.0");
    CHECK(twice->defined());

    const Bytes user_bytes = load_fixture("libwfuser32.so");
    const ElfFile user = ElfFile::parse(user_bytes);
    CHECK(strings(user.needed()) == std::vector<std::string>{"libwfbase32.so.1"});
    CHECK(user.soname() == "libwfuser32.so");
    CHECK(user.runpath() == "$ORIGIN/base");
    const Symbol* needed_twice = find_symbol(user, "wf_base_twice");
    REQUIRE(needed_twice != nullptr);
    CHECK_FALSE(needed_twice->defined());
    CHECK(needed_twice->version == "BASE_2.0");
    CHECK(needed_twice->version_file == "libwfbase32.so.1");
}

TEST_CASE("elf: aarch64, big-endian s390x and mips64el") {
    const Bytes arm_bytes = load_fixture("libversioned-aarch64.so");
    const ElfFile arm = ElfFile::parse(arm_bytes);
    CHECK(arm.machine() == EM_AARCH64);
    CHECK(arm.machine_name() == "aarch64");
    CHECK(arm.runpath() == "$ORIGIN");
    REQUIRE(find_symbol(arm, "memcpy") != nullptr);
    CHECK(find_symbol(arm, "memcpy")->version == "GLIBC_2.17");

    const Bytes s390_bytes = load_fixture("testsimple-s390x.so");
    const ElfFile s390 = ElfFile::parse(s390_bytes);
    CHECK(s390.endian() == Endian::big);
    CHECK(s390.machine() == EM_S390);
    CHECK(s390.machine_name() == "s390x");
    const Symbol* init = find_symbol(s390, "PyInit_testsimple");
    REQUIRE(init != nullptr);
    CHECK(init->defined());
    CHECK(init->size == 16);
    CHECK(init->type == STT_FUNC);
    CHECK(s390.dynamic_symbols().size() == 8);

    const Bytes mips_bytes = load_fixture("testsimple-mips64el.so");
    const ElfFile mips = ElfFile::parse(mips_bytes);
    CHECK(mips.machine() == EM_MIPS);
    CHECK(mips.machine_name() == "mips64");
    CHECK(mips.flags() == 0x80000007u);
    CHECK(mips.dynamic_symbols().size() == 8);
}

TEST_CASE("elf: an object file has sections and no dynamic data") {
    const Bytes bytes = load_fixture("object.o");
    const ElfFile elf = ElfFile::parse(bytes);
    CHECK(elf.type() == ET_REL);
    CHECK(elf.program_headers().empty());
    CHECK_FALSE(elf.has_dynamic());
    CHECK(elf.needed().empty());
    CHECK(elf.dynamic_symbols().empty());
    CHECK(elf.section(".text") != nullptr);
}

TEST_CASE("elf: machine names and magic") {
    CHECK(machine_name(EM_X86_64, Class::elf64) == "x86_64");
    CHECK(machine_name(EM_386, Class::elf32) == "i686");
    CHECK(machine_name(EM_ARM, Class::elf32) == "arm");
    CHECK(machine_name(EM_AARCH64, Class::elf64) == "aarch64");
    CHECK(machine_name(EM_PPC64, Class::elf64, Endian::little) == "ppc64le");
    CHECK(machine_name(EM_PPC64, Class::elf64, Endian::big) == "ppc64");
    CHECK(machine_name(EM_S390, Class::elf64) == "s390x");
    CHECK(machine_name(EM_MIPS, Class::elf64) == "mips64");
    CHECK(machine_name(EM_MIPS, Class::elf32) == "mips");
    CHECK(machine_name(EM_RISCV, Class::elf64) == "riscv64");
    CHECK(machine_name(EM_RISCV, Class::elf32) == "riscv32");
    CHECK(machine_name(999, Class::elf64) == "EM_999");
    const std::uint8_t magic[] = {0x7f, 'E', 'L', 'F'};
    const std::uint8_t zip[] = {'P', 'K', 3, 4};
    CHECK(is_elf(magic));
    CHECK_FALSE(is_elf(zip));
    CHECK_FALSE(is_elf(std::span<const std::uint8_t>(magic, 3)));
    CHECK_THROWS_AS(ElfFile::parse(zip), ElfError);
}

// --- without section headers: the DT_* paths give the same answers -----------------

TEST_CASE("elf: without section headers, DT_HASH / DT_GNU_HASH / DT_VER* give the same data") {
    for (const char* name : kDynamicFixtures) {
        CAPTURE(name);
        Bytes bytes = load_fixture(name);
        const ElfFile with_sections = ElfFile::parse(bytes);
        const std::vector<std::string> expected = describe_symbols(with_sections);
        REQUIRE_FALSE(expected.empty());

        Bytes stripped = bytes;
        Patcher(stripped).drop_section_headers();
        const ElfFile without = ElfFile::parse(stripped);
        CHECK(without.sections().empty());
        CHECK(describe_symbols(without) == expected);
        CHECK(strings(without.needed()) == strings(with_sections.needed()));
        CHECK(without.soname() == with_sections.soname());
        CHECK(without.rpath() == with_sections.rpath());
        CHECK(without.runpath() == with_sections.runpath());
        CHECK(without.version_needs().size() == with_sections.version_needs().size());
        CHECK(without.version_defs().size() == with_sections.version_defs().size());
    }
}

TEST_CASE("elf: the DT_GNU_HASH walk alone sizes the symbol table") {
    // libversioned.so has both hash tables; hide DT_HASH so the GNU hash chain is walked.
    Bytes bytes = load_fixture("libversioned.so");
    const ElfFile original = ElfFile::parse(bytes);
    const std::vector<std::string> expected = describe_symbols(original);
    Patcher patch(bytes);
    patch.put(dynamic_entry_at(original, DT_HASH), 8, DT_DEBUG);
    patch.drop_section_headers();
    const ElfFile gnu_only = ElfFile::parse(bytes);
    CHECK(gnu_only.sections().empty());
    CHECK(describe_symbols(gnu_only) == expected);
}

// --- hostile inputs -------------------------------------------------------------------

TEST_CASE("elf: every truncation is rejected") {
    for (const char* name : kDynamicFixtures) {
        CAPTURE(name);
        const Bytes bytes = load_fixture(name);
        const ElfFile elf = ElfFile::parse(bytes);
        std::set<std::uint64_t> cuts = {0, 1, 4, 15, 16, 17, 51, 52, 63, 64};
        for (const ProgramHeader& ph : elf.program_headers())
            cuts.insert({ph.offset, ph.offset + ph.filesz});
        for (const SectionHeader& s : elf.sections()) cuts.insert({s.offset, s.offset + s.size});
        Bytes copy = bytes;
        const Patcher probe(copy);
        for (std::uint64_t i = 0; i <= elf.sections().size(); ++i)
            cuts.insert(probe.shoff() + i * probe.shentsize());
        for (std::uint64_t i = 0; i <= elf.program_headers().size(); ++i)
            cuts.insert(probe.ph_at(i));
        for (std::uint64_t at = 0; at < bytes.size(); at += 61) cuts.insert(at);
        for (std::uint64_t cut : cuts) {
            if (cut >= bytes.size()) continue;
            CAPTURE(cut);
            // The section header table is the last thing in these files, so every
            // strict prefix lacks part of it.
            CHECK(rejects(std::span(bytes).first(cut)));
        }
    }
}

TEST_CASE("elf: truncations without section headers parse or are rejected") {
    for (const char* name : kDynamicFixtures) {
        CAPTURE(name);
        Bytes bytes = load_fixture(name);
        Patcher(bytes).drop_section_headers();
        const ElfFile elf = ElfFile::parse(bytes);
        std::uint64_t end_of_dynamic = 0;
        for (const ProgramHeader& ph : elf.program_headers())
            if (ph.type == PT_DYNAMIC) end_of_dynamic = ph.offset + ph.filesz;
        for (std::uint64_t cut = 0; cut < bytes.size(); cut += 7) {
            CAPTURE(cut);
            const bool ok = parses(std::span(bytes).first(cut));
            if (cut < end_of_dynamic) CHECK_FALSE(ok);
        }
    }
}

TEST_CASE("elf: wrong identification bytes") {
    Bytes bytes = load_fixture("libversioned.so");
    for (std::uint8_t elf_class : {0, 3, 255}) {
        Bytes bad = bytes;
        bad[EI_CLASS] = elf_class;
        CHECK(rejects(bad));
    }
    for (std::uint8_t data : {0, 3}) {
        Bytes bad = bytes;
        bad[EI_DATA] = data;
        CHECK(rejects(bad));
    }
    for (const char* name : kDynamicFixtures) {
        Bytes swapped_class = load_fixture(name);
        swapped_class[EI_CLASS] = swapped_class[EI_CLASS] == ELFCLASS64 ? ELFCLASS32 : ELFCLASS64;
        parses(swapped_class);
        Bytes swapped_endian = load_fixture(name);
        swapped_endian[EI_DATA] =
            swapped_endian[EI_DATA] == ELFDATA2LSB ? ELFDATA2MSB : ELFDATA2LSB;
        CHECK(rejects(swapped_endian));  // every table offset is now far past the end
    }
}

TEST_CASE("elf: huge counts and offsets past the end") {
    for (const char* name : kDynamicFixtures) {
        CAPTURE(name);
        const Bytes original = load_fixture(name);
        const ElfFile elf = ElfFile::parse(original);
        const std::uint64_t huge = 0xffffffffffffff00ull;
        auto mutated = [&](auto&& change) {
            Bytes bytes = original;
            Patcher patch(bytes);
            change(patch);
            return bytes;
        };
        CHECK(rejects(mutated([](Patcher& p) { p.put(p.shnum_at(), 2, 0xfffe); })));
        CHECK(rejects(mutated([](Patcher& p) { p.put(p.phnum_at(), 2, 0xfffe); })));
        parses(mutated([](Patcher& p) { p.put(p.phnum_at(), 2, PN_XNUM); }));
        CHECK(rejects(mutated([&](Patcher& p) {  // extended e_shnum from section 0
            p.put(p.shnum_at(), 2, 0);
            p.put(p.sh_size_at(0), p.word(), huge);
        })));
        CHECK(
            rejects(mutated([&](Patcher& p) { p.put(p.shoff_at(), p.word(), original.size()); })));
        CHECK(rejects(mutated([&](Patcher& p) { p.put(p.shoff_at(), p.word(), huge); })));
        CHECK(rejects(mutated([&](Patcher& p) { p.put(p.phoff_at(), p.word(), huge); })));
        CHECK(rejects(mutated([&](Patcher& p) { p.put(p.shstrndx_at(), 2, 0xfff0); })));
        const std::size_t dynamic = dynamic_program_header(elf);
        CHECK(rejects(mutated(
            [&](Patcher& p) { p.put(p.p_offset_at(dynamic), p.word(), original.size()); })));
        CHECK(rejects(mutated([&](Patcher& p) { p.put(p.p_filesz_at(dynamic), p.word(), huge); })));
        const std::size_t dynsym = section_index(elf, ".dynsym");
        CHECK(rejects(mutated([&](Patcher& p) { p.put(p.sh_offset_at(dynsym), p.word(), huge); })));
        CHECK(rejects(mutated([&](Patcher& p) { p.put(p.sh_size_at(dynsym), p.word(), huge); })));
        CHECK(rejects(mutated([&](Patcher& p) {  // a symbol name outside .dynstr
            p.put(elf.sections()[dynsym].offset + elf.sections()[dynsym].entsize, 4, 0xfffffff0);
        })));
    }
}

TEST_CASE("elf: file data of every segment and section lies inside the file") {
    for (const char* name : kDynamicFixtures) {
        CAPTURE(name);
        const Bytes original = load_fixture(name);
        const ElfFile elf = ElfFile::parse(original);
        auto mutated = [&](auto&& change) {
            Bytes bytes = original;
            Patcher patch(bytes);
            change(patch);
            return bytes;
        };
        std::size_t load = 0;
        while (elf.program_headers()[load].type != PT_LOAD) ++load;
        CHECK(rejects(mutated([&](Patcher& p) { p.put(p.p_filesz_at(load), p.word(), original.size() + 1); })));
        // A section nothing else reads (the section name table's neighbour) still must not lie.
        const std::size_t dynamic = section_index(elf, ".dynamic");
        CHECK(rejects(mutated([&](Patcher& p) { p.put(p.sh_offset_at(dynamic), p.word(), original.size()); })));
        CHECK(rejects(mutated([&](Patcher& p) { p.put(p.sh_size_at(dynamic), p.word(), original.size()); })));
    }
}

TEST_CASE("elf: dynamic table without DT_NULL") {
    for (const char* name : kDynamicFixtures) {
        CAPTURE(name);
        Bytes bytes = load_fixture(name);
        const ElfFile elf = ElfFile::parse(bytes);
        Patcher patch(bytes);
        const ProgramHeader& dynamic = elf.program_headers()[dynamic_program_header(elf)];
        const std::uint64_t entsize = 2 * patch.word();
        for (std::uint64_t at = dynamic.offset; at + entsize <= dynamic.offset + dynamic.filesz;
             at += entsize)
            if (patch.get(at, patch.word()) == DT_NULL) patch.put(at, patch.word(), DT_DEBUG);
        CHECK(rejects(bytes));
    }
}

TEST_CASE("elf: DT_STRTAB outside every PT_LOAD") {
    for (const char* name : {"libversioned.so", "libwfuser32.so", "libversioned-aarch64.so"}) {
        CAPTURE(name);
        Bytes bytes = load_fixture(name);
        const ElfFile elf = ElfFile::parse(bytes);
        const std::vector<std::string> expected_needed = strings(elf.needed());
        const std::vector<std::string> expected_symbols = describe_symbols(elf);
        Patcher patch(bytes);
        patch.put(dynamic_entry_at(elf, DT_STRTAB) + patch.word(), patch.word(), 0x7eadbee0);
        // With section headers the .dynamic section's linked string table stands in...
        const ElfFile fallback = ElfFile::parse(bytes);
        CHECK(strings(fallback.needed()) == expected_needed);
        CHECK(describe_symbols(fallback) == expected_symbols);
        // ...without them nothing can, and that is an error.
        patch.drop_section_headers();
        CHECK(rejects(bytes));
    }
}

TEST_CASE("elf: versym indices that name no version") {
    for (const char* name : {"libversioned.so", "libwfuser32.so", "copyreloc"}) {
        CAPTURE(name);
        const Bytes original = load_fixture(name);
        const ElfFile elf = ElfFile::parse(original);
        const std::uint64_t versym = elf.sections()[section_index(elf, ".gnu.version")].offset;
        const std::size_t last = elf.dynamic_symbols().size();  // versym index of the last symbol
        for (std::uint16_t value : {0x7ff0, 0x00ff, 0xfff0}) {
            Bytes bytes = original;
            Patcher(bytes).put(versym + 2 * last, 2, value);
            CHECK(rejects(bytes));
            Patcher(bytes).drop_section_headers();
            CHECK(rejects(bytes));
        }
        Bytes hidden_global = original;
        Patcher(hidden_global).put(versym + 2 * last, 2, 0x8001);
        CHECK(parses(hidden_global));
        // A versym table shorter than the symbol table is an error, not a short read.
        Bytes short_versym = original;
        Patcher short_patch(short_versym);
        short_patch.put(short_patch.sh_size_at(section_index(elf, ".gnu.version")),
                        short_patch.word(), 2);
        CHECK(rejects(short_versym));
    }
}

TEST_CASE("elf: hostile hash tables and version chains") {
    Bytes bytes = load_fixture("libversioned.so");
    const ElfFile elf = ElfFile::parse(bytes);
    Patcher base(bytes);
    base.drop_section_headers();
    auto mutated = [&](auto&& change) {
        Bytes copy = bytes;
        Patcher patch(copy);
        change(patch);
        return copy;
    };
    const std::uint64_t hash = *elf.vaddr_to_offset(elf.section(".hash")->addr);
    const std::uint64_t gnu_hash = *elf.vaddr_to_offset(elf.section(".gnu.hash")->addr);
    const std::uint64_t hash_tag = dynamic_entry_at(elf, DT_HASH);
    CHECK(rejects(mutated([&](Patcher& p) { p.put(hash + 4, 4, 0xffffffff); })));  // nchain
    auto gnu_only = [&](Patcher& p) { p.put(hash_tag, 8, DT_DEBUG); };
    CHECK(rejects(mutated([&](Patcher& p) {
        gnu_only(p);
        p.put(gnu_hash, 4, 0xffffffff);
    })));  // nbuckets
    CHECK(rejects(mutated([&](Patcher& p) {
        gnu_only(p);
        p.put(gnu_hash + 8, 4, 0x10000000);
    })));                                    // bloom
    CHECK(rejects(mutated([&](Patcher& p) {  // a chain that runs off the end of the file
        gnu_only(p);
        const std::uint64_t nbuckets = p.get(gnu_hash, 4), symoffset = p.get(gnu_hash + 4, 4);
        const std::uint64_t buckets = gnu_hash + 16 + 8 * p.get(gnu_hash + 8, 4);
        const std::uint64_t chains = buckets + 4 * nbuckets;
        const std::uint64_t last_word = chains + ((p.bytes.size() - chains) / 4 - 1) * 4;
        p.put(last_word, 4, 0);  // no end bit in the file's last word...
        p.put(buckets, 4,
              symoffset + (last_word - chains) / 4);  // ...where bucket 0's chain starts
    })));
    CHECK(rejects(mutated([&](Patcher& p) {  // no hash table at all
        gnu_only(p);
        p.put(dynamic_entry_at(elf, DT_GNU_HASH), 8, DT_DEBUG);
    })));
    // Version chains: huge counts end at the last record (a zero vn_next / vd_next)...
    const std::uint64_t verneed_num = dynamic_entry_at(elf, DT_VERNEEDNUM) + 8;
    const std::uint64_t verdef_num = dynamic_entry_at(elf, DT_VERDEFNUM) + 8;
    CHECK(parses(mutated([&](Patcher& p) { p.put(verneed_num, 8, 0xffffffffffffull); })));
    CHECK(parses(mutated([&](Patcher& p) { p.put(verdef_num, 8, 0xffffffffffffull); })));
    // ...and a chain that keeps going instead must stay inside the file and its budget.
    const std::uint64_t verneed = *elf.vaddr_to_offset(elf.section(".gnu.version_r")->addr);
    const std::uint64_t verdef = *elf.vaddr_to_offset(elf.section(".gnu.version_d")->addr);
    CHECK(rejects(mutated([&](Patcher& p) {
        p.put(verneed_num, 8, 0xffffffffffffull);
        p.put(verneed + 12, 4, 1);  // vn_next of 1 byte: overlapping garbage records
    })));
    CHECK(rejects(mutated([&](Patcher& p) {
        p.put(verdef_num, 8, 0xffffffffffffull);
        p.put(verdef + 16, 4, 1);
    })));
    CHECK(rejects(mutated([&](Patcher& p) { p.put(verneed + 8, 4, 0xfffffff0); })));  // vn_aux
    CHECK(rejects(mutated([&](Patcher& p) { p.put(verdef + 12, 4, 0xfffffff0); })));  // vd_aux
    CHECK(rejects(mutated([&](Patcher& p) { p.put(verneed + 4, 4, 0xfffffff0); })));  // vn_file
}

TEST_CASE("elf: strings must end inside their string table") {
    Bytes bytes = load_fixture("libversioned.so");
    const ElfFile elf = ElfFile::parse(bytes);
    const std::uint64_t dynstr = elf.section(".dynstr")->offset;
    auto offset_in_dynstr = [&](std::string_view text) {
        return static_cast<std::uint64_t>(text.data() -
                                          reinterpret_cast<const char*>(bytes.data())) -
               dynstr;
    };
    std::vector<std::string_view> dynamic_strings = elf.needed();
    dynamic_strings.push_back(*elf.soname());
    dynamic_strings.push_back(*elf.rpath());
    const std::string_view last =
        *std::max_element(dynamic_strings.begin(), dynamic_strings.end(),
                          [&](std::string_view a, std::string_view b) {
                              return offset_in_dynstr(a) < offset_in_dynstr(b);
                          });
    const std::uint64_t last_offset = offset_in_dynstr(last);
    const std::uint64_t last_size = last.size();
    auto with_strsz = [&](std::uint64_t size) {
        Bytes copy = bytes;
        Patcher(copy).put(dynamic_entry_at(elf, DT_STRSZ) + 8, 8, size);
        return copy;
    };
    CHECK(parses(with_strsz(last_offset + last_size + 1)));
    CHECK(rejects(with_strsz(last_offset + last_size)));  // the last string loses its NUL
    CHECK(rejects(with_strsz(last_offset)));              // ...or lies outside the table
    // Symbol names come from .dynsym's sh_link section: cut it inside the last name.
    std::uint64_t last_name = 0;
    for (const Symbol& symbol : elf.dynamic_symbols())
        last_name = std::max(last_name, offset_in_dynstr(symbol.name));
    Bytes cut = bytes;
    Patcher patch(cut);
    patch.put(patch.sh_size_at(section_index(elf, ".dynstr")), 8, last_name + 1);
    CHECK(rejects(cut));
}

TEST_CASE("elf: version records shared between entries cannot multiply") {
    // K verneed entries all pointing at one chain of M vernaux records: K*M records
    // from K+M in the file. Honest files never share; the reader caps the total by
    // what the file could hold instead of allocating K*M.
    Bytes bytes = load_fixture("libversioned.so");
    const ElfFile elf = ElfFile::parse(bytes);
    const std::size_t verneed_section = section_index(elf, ".gnu.version_r");
    const std::uint64_t start = elf.sections()[verneed_section].offset;
    const std::uint64_t end = elf.section(".eh_frame")->offset + elf.section(".eh_frame")->size;
    const std::uint64_t entries = 28, auxes = 28;
    REQUIRE(start + 16 * (entries + auxes) <= end);
    REQUIRE(entries * (auxes + 1) > bytes.size() / 16);
    Patcher patch(bytes);
    const std::uint64_t aux_start = start + 16 * entries;
    for (std::uint64_t i = 0; i < entries; ++i) {
        const std::uint64_t at = start + 16 * i;
        patch.put(at, 2, 1);                              // vn_version
        patch.put(at + 2, 2, auxes);                      // vn_cnt
        patch.put(at + 4, 4, 0);                          // vn_file: "" at .dynstr offset 0
        patch.put(at + 8, 4, aux_start - at);             // vn_aux: the shared chain
        patch.put(at + 12, 4, i + 1 < entries ? 16 : 0);  // vn_next
    }
    for (std::uint64_t j = 0; j < auxes; ++j) {
        const std::uint64_t at = aux_start + 16 * j;
        patch.put(at, 4, 0);                            // vna_hash
        patch.put(at + 4, 2, 0);                        // vna_flags
        patch.put(at + 6, 2, j < 3 ? 4 + j : 0x100);    // vna_other: keep indices 4..6 resolvable
        patch.put(at + 8, 4, 0);                        // vna_name
        patch.put(at + 12, 4, j + 1 < auxes ? 16 : 0);  // vna_next
    }
    patch.put(patch.sh_info_at(verneed_section), 4, entries);
    const ExactBuffer buffer(bytes);
    try {
        ElfFile::parse(buffer.span());
        FAIL("shared version records were accepted");
    } catch (const ElfError& error) {
        CHECK(std::string(error.what()).find("more records than the file can hold") !=
              std::string::npos);
    }
}

TEST_CASE("elf: random byte mutations of the metadata parse or are rejected") {
    std::mt19937_64 rng(20240601);
    for (const char* name : kDynamicFixtures) {
        CAPTURE(name);
        const Bytes original = load_fixture(name);
        const ElfFile elf = ElfFile::parse(original);
        std::vector<std::pair<std::uint64_t, std::uint64_t>> regions = {{0, 64}};
        for (const ProgramHeader& ph : elf.program_headers())
            if (ph.type == PT_DYNAMIC) regions.emplace_back(ph.offset, ph.filesz);
        Bytes copy = original;
        const Patcher probe(copy);
        regions.emplace_back(probe.ph_at(0), elf.program_headers().size() * probe.phentsize());
        regions.emplace_back(probe.shoff(), elf.sections().size() * probe.shentsize());
        for (const char* section :
             {".dynsym", ".gnu.version", ".gnu.version_r", ".gnu.version_d", ".hash", ".gnu.hash"})
            if (const SectionHeader* s = elf.section(section))
                regions.emplace_back(s->offset, s->size);
        const std::uint64_t interesting[] = {0,
                                             1,
                                             0x7f,
                                             0x80,
                                             0xff,
                                             0x7fff,
                                             0xffff,
                                             0x7fffffff,
                                             0xffffffff,
                                             original.size(),
                                             original.size() - 1};
        std::size_t parsed = 0;
        for (int round = 0; round < 400; ++round) {
            Bytes bytes = original;
            Patcher patch(bytes);
            if (round % 2) patch.drop_section_headers();
            for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) {
                const auto& [start, size] = regions[rng() % regions.size()];
                if (size < 4) continue;
                const std::uint64_t at = start + rng() % (size - 3);
                const unsigned width = (rng() % 2) ? 1 : 4;
                patch.put(at, width, interesting[rng() % std::size(interesting)]);
            }
            parsed += parses(bytes);
        }
        CHECK(parsed > 0);  // not everything may be rejected: many edits are harmless
    }
}

TEST_CASE("elf: PT_DYNAMIC's array found in bytes read out of place, in each class and byte order") {
    for (const char* name : {"libversioned.so", "libwfbase32.so", "testsimple-s390x.so"}) {
        CAPTURE(name);
        const Bytes bytes = load_fixture(name);
        const ElfFile headers = ElfFile::parse_headers(bytes, nullptr);
        CHECK_FALSE(headers.has_dynamic());  // the headers only
        const auto dynamic = std::find_if(headers.program_headers().begin(), headers.program_headers().end(),
                                          [](const ProgramHeader& ph) { return ph.type == PT_DYNAMIC; });
        REQUIRE(dynamic != headers.program_headers().end());
        REQUIRE(dynamic->offset >= 1001);
        // The bytes from 1001 before the array on: found at 1001, not at any shifted place.
        const auto from = std::span<const std::uint8_t>(bytes).subspan(dynamic->offset - 1001);
        CHECK(find_dynamic_array(headers, from) == std::optional<std::size_t>(1001));
        // The array as the bytes' last (and, alone, first) position: still found.
        CHECK(find_dynamic_array(headers, from.first(1001 + dynamic->filesz)) == std::optional<std::size_t>(1001));
        CHECK(find_dynamic_array(headers, from.subspan(1001, dynamic->filesz)) == std::optional<std::size_t>(0));
        // Cut one byte short of the array's end: nothing.
        CHECK_FALSE(find_dynamic_array(headers, from.first(1001 + dynamic->filesz - 1)).has_value());
        // After random bytes rather than the file's own: the same place.
        Bytes noisy(1001);
        std::mt19937 random(7);
        for (auto& byte : noisy) byte = static_cast<std::uint8_t>(random());
        noisy.insert(noisy.end(), from.begin() + 1001, from.begin() + 1001 + static_cast<std::ptrdiff_t>(dynamic->filesz));
        CHECK(find_dynamic_array(headers, noisy) == std::optional<std::size_t>(1001));
        // Starting inside the array, its tail (with the DT_NULL padding after it) may
        // read as one at a later entry: why FarReader hands the locator bytes from
        // before what it looks for (kLocatorOverlap).
        const auto inside = find_dynamic_array(headers, from.subspan(1002));
        if (inside) CHECK((*inside + 1) % (headers.elf_class() == Class::elf64 ? 16 : 8) == 0);
    }
}
