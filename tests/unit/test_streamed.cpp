// Unit tests: reading ELF files as they stream past (util/byte_ranges.hpp,
// util/sparse_stream.hpp, elf/streamed_elf.hpp, cuda/fatbin_scan.hpp). The rule
// under test everywhere: a reader over the partial image gives exactly what it
// gives over the whole file, or throws BytesNotKept — and for real files (the
// libstdc++ this process runs on, nvcc's fatbin fixtures) it gives the answer in
// one pass while keeping a fraction of the bytes.
#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/analysis/elf_report.hpp"
#include "wheelfix/cuda/fatbin.hpp"
#include "wheelfix/cuda/fatbin_scan.hpp"
#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/elf/streamed_elf.hpp"
#include "wheelfix/util/byte_ranges.hpp"
#include "wheelfix/util/sparse_stream.hpp"
#include "wheelfix/wheel/member_reader.hpp"

#include <doctest/doctest.h>

#include <link.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

using namespace wheelfix;

namespace {

const std::string kFatbinDir = std::string(WHEELFIX_TEST_DATA) + "/fatbin/";

std::vector<std::uint8_t> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE_MESSAGE(in.good(), "cannot open " << path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The libstdc++ this test process has loaded: a real, mid-sized library.
std::string loaded_libstdcxx() {
    std::string found;
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* data) {
            if (std::strstr(info->dlpi_name, "libstdc++") != nullptr) *static_cast<std::string*>(data) = info->dlpi_name;
            return 0;
        },
        &found);
    REQUIRE_FALSE(found.empty());
    return found;
}

void feed(const std::vector<std::uint8_t>& bytes, std::size_t chunk,
          const std::function<void(std::span<const std::uint8_t>)>& sink) {
    for (std::size_t at = 0; at < bytes.size(); at += chunk)
        sink(std::span(bytes).subspan(at, std::min(chunk, bytes.size() - at)));
}

std::unique_ptr<elf::StreamedElf> stream_elf(const std::vector<std::uint8_t>& bytes, std::size_t chunk,
                                             elf::StreamedElf::Needs needs, bool fatbin = false) {
    auto streamed = std::make_unique<elf::StreamedElf>(bytes.size(), needs);
    if (fatbin) streamed->stream().add(std::make_unique<cuda::FatbinScanner>());
    feed(bytes, chunk, [&](std::span<const std::uint8_t> c) { streamed->consume(c); });
    return streamed;
}

std::vector<std::string> names_of(const abi::LibraryExports& library) {
    std::vector<std::string> names;
    for (const auto& symbol : library.symbols) names.push_back(symbol.name + "@" + symbol.version);
    return names;
}

using EntryFields = std::tuple<unsigned, std::uint32_t, int, std::uint16_t, std::uint16_t, std::uint64_t, bool,
                               std::uint32_t, std::uint64_t, std::uint64_t, std::uint64_t>;
std::vector<EntryFields> fields_of(const std::vector<cuda::FatbinEntry>& entries) {
    std::vector<EntryFields> out;
    for (const auto& e : entries)
        out.emplace_back(static_cast<unsigned>(e.kind), e.sm, static_cast<int>(e.variant), e.version_major,
                         e.version_minor, e.flags, e.compressed, e.header_size, e.payload_size, e.uncompressed_size,
                         e.offset);
    return out;
}

// What a parse gives: the entries, or the error message; "not kept" for BytesNotKept.
using Outcome = std::variant<std::vector<EntryFields>, std::string>;
template <class Parse>
Outcome outcome_of(Parse&& parse) {
    try {
        return fields_of(parse());
    } catch (const cuda::FatbinError& error) {
        return std::string(error.what());
    } catch (const BytesNotKept&) {
        return std::string("not kept");
    }
}

std::uint64_t xorshift(std::uint64_t& state) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

// `section` placed inside a file of non-zero junk, streamed through a FatbinScanner
// alone in `chunk`-sized pieces; returns the partial parse and the whole one.
std::pair<Outcome, Outcome> scan_in_junk(const std::vector<std::uint8_t>& section, std::size_t before,
                                         std::size_t chunk, std::uint64_t* kept_in_section = nullptr) {
    std::uint64_t state = 0x2545F4914F6CDD1Du + before;
    std::vector<std::uint8_t> file(before + section.size() + 3000);
    for (auto& byte : file) byte = static_cast<std::uint8_t>(xorshift(state) | 1);
    std::copy(section.begin(), section.end(), file.begin() + static_cast<std::ptrdiff_t>(before));
    SparseStream stream(file.size());
    stream.add(std::make_unique<cuda::FatbinScanner>());
    feed(file, chunk, [&](std::span<const std::uint8_t> c) { stream.consume(c); });
    const auto image = stream.image().subspan(before, section.size());
    if (kept_in_section != nullptr) {
        *kept_in_section = 0;
        for (const auto& [from, to] : stream.kept().intersect(before, before + section.size())) *kept_in_section += to - from;
    }
    return {outcome_of([&] { return cuda::parse_fatbin_section(image, &stream.kept(), before); }),
            outcome_of([&] { return cuda::parse_fatbin_section(section); })};
}

std::vector<std::uint8_t> section_of(const std::string& file, const std::string& name) {
    const auto image = read_bytes(kFatbinDir + file);
    const auto parsed = elf::ElfFile::parse(image);
    const auto* section = parsed.section(name);
    REQUIRE(section != nullptr);
    const auto bytes = parsed.section_bytes(*section);
    return {bytes.begin(), bytes.end()};
}

std::vector<std::pair<std::string, std::string>> fatbin_fixtures() {
    std::ifstream in(kFatbinDir + "fixtures.tsv");
    REQUIRE(in.good());
    std::vector<std::pair<std::string, std::string>> out;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        std::string file, section;
        std::getline(fields, file, '\t');
        std::getline(fields, section, '\t');
        out.emplace_back(file, section);
    }
    REQUIRE(out.size() >= 8);
    return out;
}

}  // namespace

TEST_CASE("ByteRanges merge, cover and find gaps in any order of adding") {
    ByteRanges ranges;
    ranges.add(10, 20);
    ranges.add(30, 40);
    ranges.add(5, 8);
    ranges.add(20, 25);  // touches [10, 20)
    CHECK(ranges.ranges() == std::vector<ByteRanges::Range>{{5, 8}, {10, 25}, {30, 40}});
    CHECK(ranges.total() == 3 + 15 + 10);
    CHECK(ranges.covers(10, 25));
    CHECK(ranges.covers(12, 12));
    CHECK_FALSE(ranges.covers(7, 11));
    CHECK_FALSE(ranges.covers(24, 31));
    CHECK(ranges.first_gap(5, 40) == ByteRanges::Range{8, 10});
    CHECK(ranges.first_gap(11, 35) == ByteRanges::Range{25, 30});
    CHECK(ranges.first_gap(31, 39) == ByteRanges::Range{39, 39});
    CHECK(ranges.first_gap(0, 3) == ByteRanges::Range{0, 3});
    CHECK(ranges.intersect(7, 33) == std::vector<ByteRanges::Range>{{7, 8}, {10, 25}, {30, 33}});
    ranges.add(0, 100);
    CHECK(ranges.ranges() == std::vector<ByteRanges::Range>{{0, 100}});
    CHECK(ranges.total() == 100);
    CHECK_NOTHROW(require_present(nullptr, 0, 1000));
    CHECK_NOTHROW(require_present(&ranges, 0, 100));
    try {
        require_present(&ranges, 90, 120);
        FAIL("no BytesNotKept");
    } catch (const BytesNotKept& missing) {
        CHECK(missing.begin() == 100);
        CHECK(missing.end() == 120);
    }
}

TEST_CASE("SparseStream keeps exactly the wanted ranges, in any chunking") {
    std::vector<std::uint8_t> file(100000);
    std::uint64_t state = 7;
    for (auto& byte : file) byte = static_cast<std::uint8_t>(xorshift(state));
    std::fill(file.begin() + 50000, file.begin() + 60000, 0);
    for (std::size_t chunk : {std::size_t(1), std::size_t(7), std::size_t(4096), std::size_t(1) << 20}) {
        CAPTURE(chunk);
        SparseStream stream(file.size());
        stream.want(100, 50);
        stream.want(49000, 12000);  // mostly zeros
        stream.want(99990, 1000);   // clamped to the file
        feed(file, chunk, [&](std::span<const std::uint8_t> c) { stream.consume(c); });
        stream.want(10, 10);  // too late: gone
        CHECK(stream.kept().ranges() == std::vector<ByteRanges::Range>{{100, 150}, {49000, 61000}, {99990, 100000}});
        CHECK(stream.lost(10, 20));
        for (const auto& [from, to] : stream.kept().ranges())
            CHECK(std::equal(file.begin() + from, file.begin() + to, stream.image().begin() + from));
    }
}

TEST_CASE("the ELF learner keeps a fraction of a real library and parses it as the whole file, any chunking") {
    const auto bytes = read_bytes(loaded_libstdcxx());
    const auto whole = abi::exports_of("libstdc++.so.6", elf::ElfFile::parse(bytes));
    REQUIRE(whole.symbols.size() > 1000);
    for (std::size_t chunk : {std::size_t(1) << 20, std::size_t(4096), std::size_t(4093), std::size_t(7)}) {
        CAPTURE(chunk);
        const auto streamed = stream_elf(bytes, chunk, elf::StreamedElf::Needs::dynamic_linking);
        REQUIRE(streamed->is_elf());
        const auto exports = abi::exports_of("libstdc++.so.6", streamed->parse());
        CHECK(names_of(exports) == names_of(whole));
        CHECK(exports.soname == whole.soname);
        CHECK(exports.needed == whole.needed);
        CHECK(streamed->kept_bytes() < bytes.size() / 2);
    }
}

TEST_CASE("tables that stream past before they are known: fetched again, same answer") {
    auto bytes = read_bytes(loaded_libstdcxx());
    // Shrink the first PT_LOAD's p_filesz to the headers: .dynsym and .dynstr then lie
    // in bytes nothing wants until the section headers arrive at the end.
    const auto original = elf::ElfFile::parse(bytes);
    REQUIRE(original.elf_class() == elf::Class::elf64);
    std::uint64_t phoff = 0;
    std::memcpy(&phoff, bytes.data() + 32, 8);
    for (std::size_t i = 0; i < original.program_headers().size(); ++i) {
        if (original.program_headers()[i].type != 1 /* PT_LOAD */) continue;
        const std::uint64_t tiny = 0x200;
        std::memcpy(bytes.data() + phoff + i * 56 + 32, &tiny, 8);
        break;
    }
    const auto whole = abi::exports_of("libstdc++.so.6", elf::ElfFile::parse(bytes));
    const auto first = stream_elf(bytes, 1 << 16, elf::StreamedElf::Needs::dynamic_linking);
    CHECK_THROWS_AS(first->parse(), BytesNotKept);
    std::uint64_t fetched = 0;
    int fetches = 0;
    const elf::Fetch fetch = [&](const ByteRanges& ranges, const elf::FetchSink& sink) {
        ++fetches;
        for (const auto& [begin, end] : ranges.ranges()) {
            fetched += end - begin;
            sink(std::span<const std::uint8_t>(bytes).subspan(begin, end - begin), begin);
        }
    };
    std::uint64_t kept = 0;
    const auto exports = elf::read_streamed(*first, fetch, [&](std::span<const std::uint8_t> image, const ByteRanges* present) {
        kept = present != nullptr ? present->total() : image.size();
        return abi::exports_of("libstdc++.so.6", elf::ElfFile::parse(image, present));
    });
    CHECK(names_of(exports) == names_of(whole));
    CHECK(fetches > 0);
    CHECK(fetched < bytes.size() / 4);  // the tables, not the file
    CHECK(kept < bytes.size() / 2);
}

TEST_CASE("a layout no fetching can satisfy ends in a whole read, never in a wrong answer") {
    const auto bytes = read_bytes(loaded_libstdcxx());
    const auto whole = abi::exports_of("libstdc++.so.6", elf::ElfFile::parse(bytes));
    const auto first = stream_elf(bytes, 1 << 20, elf::StreamedElf::Needs::dynamic_linking);
    int fetches = 0, whole_reads = 0;
    const elf::Fetch fetch = [&](const ByteRanges& ranges, const elf::FetchSink& sink) {
        ++fetches;
        if (ranges.covers(0, bytes.size())) ++whole_reads;
        for (const auto& [begin, end] : ranges.ranges())
            sink(std::span<const std::uint8_t>(bytes).subspan(begin, end - begin), begin);
    };
    // A reader that always finds something missing on a partial image (a new range
    // in the middle of .text each time, which it then gets: the rounds run out).
    int round = 0;
    const auto exports = elf::read_streamed(*first, fetch, [&](std::span<const std::uint8_t> image, const ByteRanges* present) {
        if (present != nullptr) {
            ++round;
            throw BytesNotKept(image.size() / 3 + 4096 * round, image.size() / 3 + 4096 * (round + 1));
        }
        return abi::exports_of("libstdc++.so.6", elf::ElfFile::parse(image));
    });
    CHECK(names_of(exports) == names_of(whole));
    CHECK(round == elf::StreamedElf::kMaxRounds);
    CHECK(whole_reads == 1);
}

TEST_CASE("MemberImage::read: a trusted image ends a hopeless layout in a whole read, a far view gives up") {
    const auto bytes = read_bytes(loaded_libstdcxx());
    const auto whole = abi::exports_of("libstdc++.so.6", elf::ElfFile::parse(bytes));
    int whole_reads = 0;
    const elf::Fetch fetch = [&](const ByteRanges& ranges, const elf::FetchSink& sink) {
        if (ranges.covers(0, bytes.size())) ++whole_reads;
        for (const auto& [begin, end] : ranges.ranges())
            sink(std::span<const std::uint8_t>(bytes).subspan(begin, end - begin), begin);
    };
    int rounds = 0;
    auto hopeless = [&](std::span<const std::uint8_t> image, const ByteRanges* present) {
        if (present != nullptr) {
            ++rounds;
            throw BytesNotKept(image.size() / 3 + 4096 * rounds, image.size() / 3 + 4096 * (rounds + 1));
        }
        return abi::exports_of("libstdc++.so.6", elf::ElfFile::parse(image));
    };
    wheel::MemberImage bounded(wheel::ReadWay::bounded, stream_elf(bytes, 1 << 20, elf::StreamedElf::Needs::dynamic_linking), fetch);
    CHECK(bounded.trusted());
    CHECK(names_of(bounded.read(hopeless)) == names_of(whole));
    CHECK(rounds == elf::StreamedElf::kMaxRounds);
    CHECK(whole_reads == 1);
    CHECK(bounded.present()->covers(0, bytes.size()));  // the whole member is in the image now

    rounds = whole_reads = 0;
    wheel::MemberImage far(wheel::ReadWay::far_view, stream_elf(bytes, 1 << 20, elf::StreamedElf::Needs::dynamic_linking), fetch);
    CHECK_FALSE(far.trusted());
    CHECK_THROWS_AS((void)far.read(hopeless), BytesNotKept);
    CHECK(rounds == elf::StreamedElf::kMaxRounds);
    CHECK(whole_reads == 0);

    // A whole image has every byte: its reader runs once, on all of them.
    zip::InflatedMember inflated;
    inflated.data.assign(bytes.begin(), bytes.end());
    inflated.size = bytes.size();
    wheel::MemberImage held(std::move(inflated));
    rounds = 0;
    CHECK(held.present() == nullptr);
    CHECK(names_of(held.read(hopeless)) == names_of(whole));
    CHECK(rounds == 0);
}

TEST_CASE("a stream that is not ELF keeps nothing") {
    std::vector<std::uint8_t> text(100000, 'x');
    const auto streamed = stream_elf(text, 4096, elf::StreamedElf::Needs::inspection, true);
    CHECK_FALSE(streamed->is_elf());
    CHECK(streamed->kept_bytes() <= 64);
}

TEST_CASE("fatbin scan: every nvcc fixture's entries from the kept headers, any chunking and placement") {
    for (const auto& [file, name] : fatbin_fixtures()) {
        const auto section = section_of(file, name);
        for (std::size_t before : {std::size_t(0), std::size_t(1), std::size_t(4096 - 5), std::size_t(70001)})
            for (std::size_t chunk : {std::size_t(1), std::size_t(3), std::size_t(4096), std::size_t(1) << 20}) {
                CAPTURE(file);
                CAPTURE(before);
                CAPTURE(chunk);
                std::uint64_t kept = 0;
                const auto [partial, whole] = scan_in_junk(section, before, chunk, &kept);
                REQUIRE(std::holds_alternative<std::vector<EntryFields>>(whole));
                CHECK(partial == whole);
                const auto entries = std::get<std::vector<EntryFields>>(whole).size();
                CHECK(kept <= 16 * 8 + 64 * entries + 64 * 8);  // headers and a little padding, not payloads
            }
    }
}

TEST_CASE("fatbin scan: zero padding before, between and after containers") {
    const auto one = section_of("sgl_like_size.o", ".nv_fatbin");
    std::vector<std::uint8_t> padded(40, 0);
    padded.insert(padded.end(), one.begin(), one.end());
    padded.insert(padded.end(), 8, 0);
    padded.insert(padded.end(), one.begin(), one.end());
    padded.insert(padded.end(), 300000, 0);
    for (std::size_t chunk : {std::size_t(5), std::size_t(4096), std::size_t(1) << 20}) {
        CAPTURE(chunk);
        const auto [partial, whole] = scan_in_junk(padded, 1000, chunk);
        REQUIRE(std::holds_alternative<std::vector<EntryFields>>(whole));
        CHECK(std::get<std::vector<EntryFields>>(whole).size() == 6);
        CHECK(partial == whole);
    }
}

TEST_CASE("fatbin scan: hostile sections give the whole section's error or ask to be read again") {
    const auto good = section_of("sgl_like_size.o", ".nv_fatbin");
    std::uint64_t state = 0x9E3779B97F4A7C15u;
    int same_error = 0;
    for (int round = 0; round < 600; ++round) {
        auto bytes = good;
        for (int k = 0; k < 3; ++k) {
            const std::size_t at = (k == 0 ? xorshift(state) % 64 : xorshift(state) % bytes.size());
            bytes[at] = static_cast<std::uint8_t>(xorshift(state));
        }
        if (round % 3 == 0) bytes.resize(xorshift(state) % bytes.size());
        const auto [partial, whole] = scan_in_junk(bytes, 100 + round, round % 2 == 0 ? 4096 : 7);
        CAPTURE(round);
        if (partial != whole) CHECK(partial == Outcome(std::string("not kept")));
        if (std::holds_alternative<std::string>(whole) && partial == whole) ++same_error;
    }
    CHECK(same_error > 100);
}

TEST_CASE("inspect's report from a streamed image equals the whole file's") {
    std::vector<std::string> paths = {kFatbinDir + "nvcc_linked.so", kFatbinDir + "two_objects.so", loaded_libstdcxx()};
    for (const auto& path : paths) {
        CAPTURE(path);
        const auto bytes = read_bytes(path);
        const auto whole = analysis::analyze_elf("lib.so", bytes, 1);
        for (std::size_t chunk : {std::size_t(4093), std::size_t(1) << 20}) {
            const auto streamed = stream_elf(bytes, chunk, elf::StreamedElf::Needs::inspection, true);
            const auto partial = analysis::analyze_elf("lib.so", streamed->image(), 1, &streamed->kept());
            CHECK(partial.needed == whole.needed);
            CHECK(partial.soname == whole.soname);
            CHECK(partial.runpath == whole.runpath);
            CHECK(partial.rpath == whole.rpath);
            CHECK(partial.honest_tag == whole.honest_tag);
            CHECK(partial.needs.glibc == whole.needs.glibc);
            CHECK(partial.needs.glibcxx == whole.needs.glibcxx);
            CHECK(partial.defined_symbols == whole.defined_symbols);
            CHECK(partial.undefined_symbols == whole.undefined_symbols);
            CHECK(fields_of(partial.fatbin) == fields_of(whole.fatbin));
            if (bytes.size() > (1 << 20)) CHECK(streamed->kept_bytes() < bytes.size() / 2);
        }
        if (path.find("fatbin") != std::string::npos) CHECK_FALSE(whole.fatbin.empty());
    }
}
