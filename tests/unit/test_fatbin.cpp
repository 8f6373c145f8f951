// Fatbin parser tests against real nvcc 13 output (tests/data/fatbin, built by its
// build.sh, which records in fixtures.tsv the -gencode list behind each fixture),
// hostile mutations of that output, and the entry_runs_on() compatibility rules.
#include <doctest/doctest.h>

#include <wheelfix/cuda/fatbin.hpp>
#include <wheelfix/elf/elf_file.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using wheelfix::cuda::ArchVariant;
using wheelfix::cuda::EntryKind;
using wheelfix::cuda::entry_runs_on;
using wheelfix::cuda::FatbinEntry;
using wheelfix::cuda::FatbinError;
using wheelfix::cuda::parse_fatbin_section;
namespace flag = wheelfix::cuda::fatbin_flag;

namespace {

const std::string fixture_dir = std::string(WHEELFIX_TEST_DATA) + "/fatbin/";

std::vector<std::uint8_t> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE_MESSAGE(in.good(), "cannot open " << path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Fixture {
    std::string file;
    std::string section;
    std::string compressed;  // "ptx" or "all"
    std::string gencode;
};

std::vector<Fixture> load_fixtures() {
    std::ifstream in(fixture_dir + "fixtures.tsv");
    REQUIRE(in.good());
    std::vector<Fixture> fixtures;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        Fixture f;
        std::getline(fields, f.file, '\t');
        std::getline(fields, f.section, '\t');
        std::getline(fields, f.compressed, '\t');
        std::getline(fields, f.gencode);
        fixtures.push_back(f);
    }
    REQUIRE(fixtures.size() >= 8);
    return fixtures;
}

// The bytes of one section of one fixture, owned (the ElfFile views the file).
std::vector<std::uint8_t> section_of(const std::string& file, const std::string& name) {
    const std::vector<std::uint8_t> image = read_bytes(fixture_dir + file);
    const auto elf = wheelfix::elf::ElfFile::parse(image);
    const auto* section = elf.section(name);
    REQUIRE_MESSAGE(section != nullptr, file << " has no " << name);
    const auto bytes = elf.section_bytes(*section);
    return {bytes.begin(), bytes.end()};
}

using KindArch = std::pair<std::string, std::string>;  // ("cubin", "sm_100a")

// What nvcc was asked for: one entry per code= of every -gencode, e.g.
// `arch=compute_90,code=[sm_90,compute_90]` -> cubin sm_90, ptx compute_90.
std::vector<KindArch> expected_from_gencode(const std::string& flags) {
    std::istringstream tokens(flags);
    std::vector<KindArch> expected;
    for (std::string token; tokens >> token;) {
        if (token != "-gencode") continue;
        const bool has_value = static_cast<bool>(tokens >> token);
        REQUIRE(has_value);
        const auto code_at = token.find("code=");
        REQUIRE(code_at != std::string::npos);
        std::string codes = token.substr(code_at + 5);
        codes.erase(std::remove(codes.begin(), codes.end(), '['), codes.end());
        codes.erase(std::remove(codes.begin(), codes.end(), ']'), codes.end());
        std::istringstream list(codes);
        for (std::string code; std::getline(list, code, ',');) {
            if (code.starts_with("sm_")) expected.emplace_back("cubin", code);
            else if (code.starts_with("compute_")) expected.emplace_back("ptx", code);
            else if (code.starts_with("lto_")) expected.emplace_back("ltoir", code);
            else FAIL("unexpected code " << code);
        }
    }
    return expected;
}

std::vector<KindArch> kind_arch_of(const std::vector<FatbinEntry>& entries) {
    std::vector<KindArch> out;
    for (const auto& e : entries) out.emplace_back(e.kind_name(), e.arch_name());
    return out;
}

std::vector<KindArch> sorted(std::vector<KindArch> v) {
    std::sort(v.begin(), v.end());
    return v;
}

std::vector<FatbinEntry> parse_fixture(const std::string& file, const std::string& section) {
    return parse_fatbin_section(section_of(file, section));
}

void put_u16(std::vector<std::uint8_t>& b, std::size_t at, std::uint16_t v) {
    for (int i = 0; i < 2; ++i) b.at(at + i) = static_cast<std::uint8_t>(v >> (8 * i));
}
void put_u32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b.at(at + i) = static_cast<std::uint8_t>(v >> (8 * i));
}
void put_u64(std::vector<std::uint8_t>& b, std::size_t at, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) b.at(at + i) = static_cast<std::uint8_t>(v >> (8 * i));
}

// A cubin/PTX entry as the parser would report it, for the compatibility table.
FatbinEntry entry(EntryKind kind, std::uint32_t sm, ArchVariant variant) {
    FatbinEntry e;
    e.kind = kind;
    e.sm = sm;
    e.variant = variant;
    return e;
}

constexpr std::uint32_t blackwell_gpus[] = {100, 103, 120, 121};

std::vector<std::uint32_t> gpus_running(const FatbinEntry& e) {
    std::vector<std::uint32_t> out;
    for (std::uint32_t gpu : blackwell_gpus)
        if (entry_runs_on(e, gpu)) out.push_back(gpu);
    return out;
}

}  // namespace

TEST_SUITE("fatbin") {

TEST_CASE("every fixture holds exactly what its -gencode list asked nvcc for") {
    for (const Fixture& f : load_fixtures()) {
        CAPTURE(f.file);
        const auto entries = parse_fixture(f.file, f.section);
        CHECK(sorted(kind_arch_of(entries)) == sorted(expected_from_gencode(f.gencode)));
        for (const auto& e : entries) {
            CAPTURE(e.arch_name());
            const bool want_compressed = f.compressed == "all" || e.kind == EntryKind::ptx;
            CHECK(e.compressed == want_compressed);
            CHECK((e.flags & (flag::is_64bit | flag::linux_host)) == (flag::is_64bit | flag::linux_host));
            if (e.compressed) CHECK(e.uncompressed_size > e.payload_size);
            else CHECK(e.uncompressed_size == e.payload_size);
        }
    }
}

TEST_CASE("entries come in nvcc's order, containers in link order") {
    const std::vector<KindArch> sgl = {
        {"cubin", "sm_100a"}, {"cubin", "sm_120a"}, {"ptx", "compute_120"}};
    CHECK(kind_arch_of(parse_fixture("sgl_like_size.o", ".nv_fatbin")) == sgl);

    const std::vector<KindArch> two = {
        {"cubin", "sm_100a"}, {"ptx", "compute_120"}, {"cubin", "sm_90a"}};
    CHECK(kind_arch_of(parse_fixture("two_objects.so", ".nv_fatbin")) == two);

    // nvcc's device-link step puts its own container (header size 96) first.
    const auto linked = parse_fixture("nvcc_linked.so", ".nv_fatbin");
    REQUIRE(linked.size() == 4);
    CHECK(linked[0].arch_name() == "sm_100a");
    CHECK(linked[0].header_size == 96);
    std::vector<KindArch> rest = kind_arch_of(linked);
    rest.erase(rest.begin());
    CHECK(rest == two);
}

TEST_CASE("header sizes, versions and flags are the ones nvcc 13.0 writes") {
    const auto hopper = parse_fixture("sm90a.o", ".nv_fatbin");
    REQUIRE(hopper.size() == 1);
    CHECK(hopper[0].offset == 16);
    CHECK(hopper[0].header_size == 64);
    CHECK(hopper[0].variant == ArchVariant::arch_specific);
    CHECK(hopper[0].flags == (flag::is_64bit | flag::linux_host | flag::arch_specific));
    CHECK(hopper[0].version_major == 1);
    CHECK(hopper[0].version_minor == 8);

    for (const auto& e : parse_fixture("blackwell_variants.o", ".nv_fatbin")) {
        CAPTURE(e.arch_name());
        if (e.kind == EntryKind::ptx) {
            CHECK(e.header_size == 80);
            CHECK(e.version_major == 9);
            CHECK((e.flags & flag::compressed_zstd) != 0);
        } else {
            CHECK(e.header_size == 112);
            CHECK((e.flags & flag::blackwell_cubin) != 0);
        }
        CHECK(e.variant != ArchVariant::plain);
    }
    for (const auto& e : parse_fixture("blackwell_plain.o", ".nv_fatbin")) CHECK(e.variant == ArchVariant::plain);

    const auto lto = parse_fixture("lto.o", "__nv_relfatbin");
    REQUIRE(lto.size() == 2);
    CHECK(lto[0].kind == EntryKind::ltoir);
    CHECK(lto[0].header_size == 120);
    CHECK((lto[0].flags & flag::lto) != 0);

    const auto debug = parse_fixture("debug_sm100.o", ".nv_fatbin");
    REQUIRE(debug.size() == 1);
    CHECK(debug[0].header_size == 128);  // grows with the object name it carries
    CHECK((debug[0].flags & flag::debug) != 0);

    for (const auto& e : parse_fixture("speed_all.o", ".nv_fatbin")) CHECK((e.flags & flag::compressed_lz4) != 0);
}

TEST_CASE("entries are laid out back to back, each after its header and payload") {
    const auto entries = parse_fixture("blackwell_variants.o", ".nv_fatbin");
    REQUIRE(entries.size() == 7);
    for (std::size_t i = 1; i < entries.size(); ++i)
        CHECK(entries[i].offset == entries[i - 1].offset + entries[i - 1].header_size + entries[i - 1].payload_size);
}

TEST_CASE("empty sections and zero padding") {
    CHECK(parse_fatbin_section({}).empty());
    const std::vector<std::uint8_t> zeros(64, 0);
    CHECK(parse_fatbin_section(zeros).empty());

    const auto one = section_of("sgl_like_size.o", ".nv_fatbin");
    std::vector<std::uint8_t> padded = one;
    padded.insert(padded.end(), 8, 0);
    padded.insert(padded.end(), one.begin(), one.end());
    padded.insert(padded.end(), 24, 0);
    const auto entries = parse_fatbin_section(padded);
    REQUIRE(entries.size() == 6);
    CHECK(entries[3].offset == one.size() + 8 + 16);
    CHECK(entries[3].arch_name() == "sm_100a");
}

TEST_CASE("an entry of an unknown kind is kept with its raw kind") {
    auto bytes = section_of("sm90a.o", ".nv_fatbin");
    put_u16(bytes, 16, 7);
    const auto entries = parse_fatbin_section(bytes);
    REQUIRE(entries.size() == 1);
    CHECK(static_cast<unsigned>(entries[0].kind) == 7);
    CHECK(std::string(entries[0].kind_name()) == "unknown");
    CHECK(entries[0].arch_name() == "kind7_90a");
    CHECK_FALSE(entry_runs_on(entries[0], 90));
}

TEST_CASE("hostile sections throw FatbinError and never read out of bounds") {
    const auto good = section_of("sgl_like_size.o", ".nv_fatbin");
    REQUIRE(parse_fatbin_section(good).size() == 3);
    constexpr std::size_t entry0 = 16;  // first entry header
    const auto first = parse_fatbin_section(good)[0];
    const std::size_t entry1 = entry0 + first.header_size + first.payload_size;

    SUBCASE("every truncation") {
        for (std::size_t size = 1; size < good.size(); ++size) {
            CAPTURE(size);
            std::vector<std::uint8_t> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(size));
            CHECK_THROWS_AS(parse_fatbin_section(cut), FatbinError);
        }
    }
    SUBCASE("bad magic") {
        auto bytes = good;
        put_u32(bytes, 0, 0xBA55ED51);
        CHECK_THROWS_AS(parse_fatbin_section(bytes), FatbinError);
    }
    SUBCASE("container sizes that lie") {
        for (std::uint64_t payload : {std::uint64_t(good.size() - 15), std::uint64_t(1) << 40,
                                      std::numeric_limits<std::uint64_t>::max()}) {
            auto bytes = good;
            put_u64(bytes, 8, payload);
            CHECK_THROWS_AS(parse_fatbin_section(bytes), FatbinError);
        }
        for (std::uint16_t header : {std::uint16_t(0), std::uint16_t(15), std::uint16_t(0xFFFF)}) {
            auto bytes = good;
            put_u16(bytes, 6, header);
            CHECK_THROWS_AS(parse_fatbin_section(bytes), FatbinError);
        }
    }
    SUBCASE("entry header sizes that lie") {
        for (std::uint32_t header : {0u, 16u, 47u, 0x10000u, 0xFFFFFFFFu}) {
            CAPTURE(header);
            auto bytes = good;
            put_u32(bytes, entry0 + 4, header);
            CHECK_THROWS_AS(parse_fatbin_section(bytes), FatbinError);
        }
    }
    SUBCASE("entry payload sizes that lie") {
        for (std::size_t at : {entry0, entry1}) {
            for (std::uint64_t payload : {std::uint64_t(good.size()), std::uint64_t(1) << 63,
                                          std::numeric_limits<std::uint64_t>::max()}) {
                CAPTURE(at);
                CAPTURE(payload);
                auto bytes = good;
                put_u64(bytes, at + 8, payload);
                CHECK_THROWS_AS(parse_fatbin_section(bytes), FatbinError);
            }
        }
    }
    SUBCASE("a container tail too short for an entry header") {
        auto bytes = good;
        bytes.insert(bytes.end(), 8, 0xFF);
        put_u64(bytes, 8, good.size() - 16 + 8);
        CHECK_THROWS_AS(parse_fatbin_section(bytes), FatbinError);
        std::fill(bytes.end() - 8, bytes.end(), 0);  // zero padding instead is fine
        CHECK(parse_fatbin_section(bytes).size() == 3);
    }
    SUBCASE("random corruption: parses or throws FatbinError, nothing else") {
        std::uint64_t state = 0x9E3779B97F4A7C15u;
        auto next = [&state] {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            return state;
        };
        int thrown = 0;
        for (int round = 0; round < 2000; ++round) {
            auto bytes = good;
            // Corrupt within the headers, where the sizes are.
            for (int k = 0; k < 4; ++k) {
                const std::size_t at = (k % 2 == 0 ? next() % 64 : entry1 + next() % 64) % bytes.size();
                bytes[at] = static_cast<std::uint8_t>(next());
            }
            try {
                (void)parse_fatbin_section(bytes);
            } catch (const FatbinError&) {
                ++thrown;
            }
        }
        CHECK(thrown > 0);
    }
}

TEST_CASE("arch and kind names") {
    CHECK(entry(EntryKind::cubin, 100, ArchVariant::arch_specific).arch_name() == "sm_100a");
    CHECK(entry(EntryKind::cubin, 120, ArchVariant::family_specific).arch_name() == "sm_120f");
    CHECK(entry(EntryKind::cubin, 90, ArchVariant::plain).arch_name() == "sm_90");
    CHECK(entry(EntryKind::ptx, 120, ArchVariant::plain).arch_name() == "compute_120");
    CHECK(entry(EntryKind::ltoir, 100, ArchVariant::plain).arch_name() == "lto_100");
    CHECK(std::string(entry(EntryKind::ltoir, 100, ArchVariant::plain).kind_name()) == "ltoir");
    CHECK(std::string(entry(EntryKind::ptx, 100, ArchVariant::plain).kind_name()) == "ptx");
}

TEST_CASE("entry_runs_on: Blackwell GPUs against cubins and PTX") {
    using V = ArchVariant;
    using U = std::vector<std::uint32_t>;
    CHECK(gpus_running(entry(EntryKind::cubin, 100, V::arch_specific)) == U{100});
    CHECK(gpus_running(entry(EntryKind::cubin, 100, V::family_specific)) == U{100, 103});
    CHECK(gpus_running(entry(EntryKind::cubin, 100, V::plain)) == U{100, 103});
    CHECK(gpus_running(entry(EntryKind::cubin, 103, V::arch_specific)) == U{103});
    CHECK(gpus_running(entry(EntryKind::cubin, 120, V::arch_specific)) == U{120});
    CHECK(gpus_running(entry(EntryKind::cubin, 120, V::family_specific)) == U{120, 121});
    CHECK(gpus_running(entry(EntryKind::cubin, 121, V::plain)) == U{121});
    CHECK(gpus_running(entry(EntryKind::cubin, 90, V::plain)).empty());
    CHECK(gpus_running(entry(EntryKind::cubin, 90, V::arch_specific)).empty());
    CHECK(gpus_running(entry(EntryKind::ptx, 90, V::plain)) == U{100, 103, 120, 121});
    CHECK(gpus_running(entry(EntryKind::ptx, 120, V::plain)) == U{120, 121});
    CHECK(gpus_running(entry(EntryKind::ptx, 100, V::arch_specific)) == U{100});
    CHECK(gpus_running(entry(EntryKind::ptx, 100, V::family_specific)) == U{100, 103});
    CHECK(gpus_running(entry(EntryKind::ltoir, 100, V::plain)).empty());
    // Hopper: its own cubin; a Blackwell cubin never runs on an older GPU.
    CHECK(entry_runs_on(entry(EntryKind::cubin, 90, V::arch_specific), 90));
    CHECK_FALSE(entry_runs_on(entry(EntryKind::cubin, 100, V::plain), 90));
    CHECK_FALSE(entry_runs_on(entry(EntryKind::ptx, 100, V::plain), 90));
}

TEST_CASE("entry_runs_on over a parsed fixture: sgl-kernel's sm100 build") {
    const auto entries = parse_fixture("sgl_like_size.o", ".nv_fatbin");
    auto any_runs = [&entries](std::uint32_t gpu) {
        return std::any_of(entries.begin(), entries.end(), [gpu](const auto& e) { return entry_runs_on(e, gpu); });
    };
    CHECK(any_runs(100));
    CHECK_FALSE(any_runs(103));  // sm_100a only, and the PTX is compute_120
    CHECK(any_runs(120));
    CHECK(any_runs(121));        // through the compute_120 PTX
    CHECK_FALSE(any_runs(90));
}

}  // TEST_SUITE
