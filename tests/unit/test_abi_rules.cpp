// Unit tests: GNU property notes (src/elf/gnu_property.cpp) on crafted note areas of
// both classes and byte orders, truncated and oversized sizes included; the
// abi_rules costs (blacklist, PyFPE, UCS2, x86-64 level) on the honest tag.
#include "wheelfix/elf/gnu_property.hpp"
#include "wheelfix/analysis/abi_rules.hpp"
#include "wheelfix/policy/manylinux.hpp"

#include <doctest/doctest.h>

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

using namespace wheelfix;

namespace {

using Bytes = std::vector<std::uint8_t>;

// Note areas written the way a linker writes them, in either class and byte order.
class NoteWriter {
public:
    NoteWriter(elf::Class elf_class, elf::Endian endian) : class_(elf_class), endian_(endian) {}

    void u32(std::uint32_t value) {
        for (int i = 0; i < 4; ++i) {
            int shift = endian_ == elf::Endian::little ? 8 * i : 8 * (3 - i);
            bytes.push_back(static_cast<std::uint8_t>(value >> shift));
        }
    }
    void pad_to(std::size_t align) {
        while (bytes.size() % align) bytes.push_back(0);
    }
    // One NT_GNU_PROPERTY_TYPE_0 note owned by `owner` holding (type, u32 value) properties.
    void property_note(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& properties,
                       const char* owner = "GNU", std::uint32_t note_type = NT_GNU_PROPERTY_TYPE_0) {
        const std::size_t word = class_ == elf::Class::elf64 ? 8 : 4;
        const std::size_t one = 8 + ((4 + word - 1) / word) * word;  // header + u32 data padded to a word
        u32(static_cast<std::uint32_t>(std::strlen(owner) + 1));
        u32(static_cast<std::uint32_t>(properties.size() * one));
        u32(note_type);
        bytes.insert(bytes.end(), owner, owner + std::strlen(owner) + 1);
        pad_to(word);
        for (auto [type, value] : properties) {
            u32(type);
            u32(4);
            u32(value);
            pad_to(word);
        }
    }
    std::vector<elf::GnuProperty> parse(std::uint64_t align = 0) const {
        return elf::parse_gnu_properties(buffer(), class_, endian_, align ? align : (class_ == elf::Class::elf64 ? 8 : 4));
    }
    // The area in a heap block of exactly its size (ASan sees over-reads).
    std::span<const std::uint8_t> buffer() const {
        exact_.reset(new std::uint8_t[std::max<std::size_t>(bytes.size(), 1)]);
        if (!bytes.empty()) std::memcpy(exact_.get(), bytes.data(), bytes.size());
        return {exact_.get(), bytes.size()};
    }

    Bytes bytes;

private:
    elf::Class class_;
    elf::Endian endian_;
    mutable std::unique_ptr<std::uint8_t[]> exact_;
};

constexpr std::uint32_t kIsaNeeded = elf::kGnuPropertyX86IsaNeeded;
constexpr std::uint32_t kFeature1And = 0xc0000002;  // GNU_PROPERTY_X86_FEATURE_1_AND (IBT, SHSTK)

}  // namespace

TEST_CASE("gnu properties: both classes and byte orders read the same properties") {
    for (auto elf_class : {elf::Class::elf64, elf::Class::elf32})
        for (auto endian : {elf::Endian::little, elf::Endian::big}) {
            CAPTURE(static_cast<int>(elf_class));
            CAPTURE(static_cast<int>(endian));
            NoteWriter notes(elf_class, endian);
            notes.property_note({{kFeature1And, 3}, {kIsaNeeded, 0x7}});
            auto properties = notes.parse();
            REQUIRE(properties.size() == 2);
            CHECK(properties[0].type == kFeature1And);
            CHECK(properties[0].u32 == 3);
            CHECK(properties[1].type == kIsaNeeded);
            CHECK(properties[1].u32 == 0x7);
            CHECK(properties[1].data.size() == 4);
        }
}

TEST_CASE("gnu properties: other owners and note types are skipped, later notes still read") {
    NoteWriter notes(elf::Class::elf64, elf::Endian::little);
    notes.property_note({{kIsaNeeded, 0xf}}, "GNUX");                  // another owner
    notes.property_note({{kIsaNeeded, 0xf}}, "GNU", NT_GNU_BUILD_ID);  // another type
    notes.property_note({{kIsaNeeded, 0x3}});
    auto properties = notes.parse();
    REQUIRE(properties.size() == 1);
    CHECK(properties[0].u32 == 0x3);
    CHECK(NoteWriter(elf::Class::elf64, elf::Endian::little).parse().empty());  // an empty area
}

TEST_CASE("gnu properties: data that is not 4 bytes has no u32") {
    NoteWriter notes(elf::Class::elf64, elf::Endian::little);
    notes.u32(4);
    notes.u32(16);
    notes.u32(NT_GNU_PROPERTY_TYPE_0);
    notes.bytes.insert(notes.bytes.end(), {'G', 'N', 'U', 0});
    notes.u32(GNU_PROPERTY_STACK_SIZE);
    notes.u32(8);
    notes.u32(0x1000);
    notes.u32(0);
    auto properties = notes.parse();
    REQUIRE(properties.size() == 1);
    CHECK(properties[0].data.size() == 8);
    CHECK(properties[0].u32 == 0);
}

TEST_CASE("gnu properties: every truncation of a note area parses or is an ElfError") {
    for (auto elf_class : {elf::Class::elf64, elf::Class::elf32}) {
        NoteWriter whole(elf_class, elf::Endian::little);
        whole.property_note({{kFeature1And, 3}, {kIsaNeeded, 0x7}});
        for (std::size_t size = 0; size < whole.bytes.size(); ++size) {
            CAPTURE(size);
            NoteWriter cut(elf_class, elf::Endian::little);
            cut.bytes.assign(whole.bytes.begin(), whole.bytes.begin() + static_cast<std::ptrdiff_t>(size));
            if (size < 12) {
                CHECK(cut.parse().empty());  // less than a note header: nothing to read (ld.so stops too)
            } else {
                CHECK_THROWS_AS(cut.parse(), elf::ElfError);
            }
        }
    }
}

TEST_CASE("gnu properties: oversized sizes are refused before they are used") {
    auto with = [](std::size_t at, std::uint32_t value) {
        NoteWriter notes(elf::Class::elf64, elf::Endian::little);
        notes.property_note({{kIsaNeeded, 0x7}});
        for (int i = 0; i < 4; ++i) notes.bytes[at + i] = static_cast<std::uint8_t>(value >> (8 * i));
        return notes;
    };
    for (std::uint32_t huge : {0xffffffffu, 0x80000000u, 0x1000u, 17u}) {
        CAPTURE(huge);
        // n_namesz: a name that fits pushes the descriptor out instead
        CHECK_THROWS_WITH_AS(with(0, huge).parse(), doctest::Contains(huge == 17 ? "note descriptor" : "note name"),
                             elf::ElfError);
        CHECK_THROWS_WITH_AS(with(4, huge).parse(), doctest::Contains("note descriptor"), elf::ElfError);  // n_descsz
        CHECK_THROWS_WITH_AS(with(20, huge).parse(), doctest::Contains("GNU property data"), elf::ElfError);  // pr_datasz
    }
}

TEST_CASE("x86-64 levels from GNU_PROPERTY_X86_ISA_1_NEEDED bits") {
    CHECK(elf::x86_64_level(0) == 0);
    CHECK(elf::x86_64_level(1) == 1);
    CHECK(elf::x86_64_level(0x3) == 2);
    CHECK(elf::x86_64_level(0x7) == 3);  // what gcc -march=x86-64-v3 -mneeded writes
    CHECK(elf::x86_64_level(0x8) == 4);
    CHECK(elf::x86_64_level(0xf0) == 0);  // bits binutils does not define
}

TEST_CASE("abi rules: a blacklisted zlib import costs the tags the data names") {
    policy::NeededVersions needs;
    needs.glibc = "2.2.5";
    REQUIRE(policy::lowest_manylinux_tag(needs, "x86_64")->tag == "manylinux_2_5");
    needs.abi.blacklisted_imports = {{"libz.so.1", "uncompress2"}};  // blacklisted 2_5 .. 2_31
    REQUIRE(policy::lowest_manylinux_tag(needs, "x86_64"));
    CHECK(policy::lowest_manylinux_tag(needs, "x86_64")->tag == "manylinux_2_34");
    CHECK(policy::honest_tag(needs, "aarch64") == "manylinux_2_34");
    const auto* row_2_17 = &policy::manylinux_policy()[4];
    REQUIRE(row_2_17->tag == "manylinux_2_17");
    CHECK(policy::first_violation(needs, *row_2_17) == "uncompress2 from libz.so.1 (blacklisted for manylinux_2_17)");

    needs.abi.blacklisted_imports = {{"libz.so.1", "_tr_init"}};  // every manylinux tag
    CHECK(policy::lowest_manylinux_tag(needs, "x86_64") == nullptr);
    CHECK(policy::honest_tag(needs, "x86_64").empty());
    auto concerns = analysis::abi_concerns(needs.abi, policy::Family::manylinux, "x86_64");
    REQUIRE(concerns.size() == 1);
    CHECK(concerns[0].kind == analysis::AbiConcern::Kind::blacklist);
    CHECK(concerns[0].what == "libz.so.1: _tr_init");
    CHECK(concerns[0].lowest_tag.empty());

    needs.abi.blacklisted_imports = {{"libc.so.6", "__cxa_thread_atexit_impl"}};  // 2_5 .. 2_17
    concerns = analysis::abi_concerns(needs.abi, policy::Family::manylinux, "x86_64");
    REQUIRE(concerns.size() == 1);
    CHECK(concerns[0].lowest_tag == "manylinux_2_24");
    CHECK(policy::honest_tag(needs, "x86_64") == "manylinux_2_24");
    // glibc's blacklist is manylinux's only: a musl binary importing it is not judged by it
    CHECK(analysis::abi_concerns(needs.abi, policy::Family::musllinux, "x86_64").empty());
}

TEST_CASE("abi rules: musllinux has its own blacklist") {
    policy::NeededVersions needs;
    needs.links_musl = true;
    CHECK(policy::honest_tag(needs, "x86_64") == "musllinux_1_1");
    needs.abi.blacklisted_imports = {{"libz.so.1", "zcalloc"}};
    CHECK(policy::honest_tag(needs, "x86_64").empty());
    CHECK(policy::first_musl_violation(needs, policy::musllinux_policy()[1]).find("zcalloc from libz.so.1") == 0);
}

TEST_CASE("abi rules: PyFPE, UCS2 and an x86-64 level above the baseline cost every tag") {
    for (auto set : {+[](policy::AbiFacts& f) { f.pyfpe = "PyFPE_jbuf"; },
                     +[](policy::AbiFacts& f) { f.ucs2 = "PyUnicodeUCS2_AsUTF8String"; },
                     +[](policy::AbiFacts& f) { f.x86_64_level = 3; }}) {
        policy::NeededVersions needs;
        needs.glibc = "2.17";
        set(needs.abi);
        CHECK(policy::honest_tag(needs, "x86_64").empty());
        auto concerns = analysis::abi_concerns(needs.abi, policy::Family::manylinux, "x86_64");
        REQUIRE(concerns.size() == 1);
        CHECK(concerns[0].lowest_tag.empty());
        CHECK(concerns[0].message.find("no manylinux tag fits") != std::string::npos);
        needs.links_musl = true;
        needs.glibc.clear();
        CHECK(policy::honest_tag(needs, "x86_64").empty());
    }
    // The ISA level is judged on x86_64 only, as auditwheel judges it.
    policy::NeededVersions needs;
    needs.abi.x86_64_level = 4;
    CHECK(policy::honest_tag(needs, "i686") == "manylinux_2_5");
    CHECK(analysis::abi_concerns(needs.abi, policy::Family::manylinux, "i686").empty());
}

TEST_CASE("abi rules: facts of two files merge") {
    policy::AbiFacts a, b;
    a.blacklisted_imports = {{"libz.so.1", "zcfree"}};
    b.blacklisted_imports = {{"libz.so.1", "zcalloc"}, {"libz.so.1", "zcfree"}};
    b.x86_64_level = 2;
    b.pyfpe = "PyFPE_jbuf";
    auto m = policy::merged(a, b);
    CHECK(m.blacklisted_imports.size() == 2);
    CHECK(m.blacklisted_imports.front().symbol == "zcalloc");
    CHECK(m.x86_64_level == 2);
    CHECK(m.pyfpe == "PyFPE_jbuf");
}
