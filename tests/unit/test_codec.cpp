// zip/codec.hpp: the ISA-L and zlib backends agree with each other on real wheels
// and on edge-case data, whichever deflated and whichever inflates.
#include "wheelfix/zip/archive.hpp"
#include "wheelfix/zip/codec.hpp"
#include "wheelfix/zip/inflate_index.hpp"
#include "wheelfix/zip/splice.hpp"

#include "zip_test_support.hpp"

#include <doctest/doctest.h>
#include <zlib.h>

#include <random>

using namespace wheelfix;
using wheelfix::test::auditwheel_wheels;
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<std::uint8_t>;

// Streams `compressed` through a fresh inflater of `backend` in `step`-byte input
// pieces and 64 KiB of output room; fails the test on a stream that does not end.
Bytes inflate_all(zip::Backend backend, std::span<const std::uint8_t> compressed, std::size_t step = 64 << 10) {
    zip::Inflater inflater(backend);
    Bytes out;
    std::vector<std::uint8_t> room(64 << 10);
    std::span<const std::uint8_t> left = compressed;
    for (int stalls = 0; stalls < 3;) {
        auto piece = left.first(std::min(step, left.size()));
        auto result = inflater.inflate(piece, room);
        left = left.subspan(result.consumed);
        out.insert(out.end(), room.begin(), room.begin() + static_cast<std::ptrdiff_t>(result.produced));
        if (result.ended) return out;
        stalls = result.consumed == 0 && result.produced == 0 ? stalls + 1 : 0;
    }
    FAIL("the deflate stream did not end");
    return out;
}

Bytes deflate_all(zip::DeflateChoice choice, std::span<const std::uint8_t> data) {
    zip::Deflater deflater(choice.backend, choice.level);
    Bytes out;
    deflater.start();
    deflater.feed(data, out);
    deflater.end(true, out);
    return out;
}

Bytes random_bytes(std::size_t size, unsigned seed) {
    std::mt19937 random(seed);
    Bytes bytes(size);
    for (auto& byte : bytes) byte = static_cast<std::uint8_t>(random());
    return bytes;
}

Bytes file_bytes(const fs::path& path) {
    std::string text = test::read_bytes(path);
    return Bytes(text.begin(), text.end());
}

std::vector<zip::DeflateChoice> every_choice() {
    std::vector<zip::DeflateChoice> choices{{zip::Backend::zlib, 0}, {zip::Backend::zlib, 1}, {zip::Backend::zlib, 6},
                                            {zip::Backend::zlib, 9}};
    for (auto backend : zip::compiled_backends())
        if (backend == zip::Backend::isal)
            for (int level = 0; level <= 3; ++level) choices.push_back({backend, level});
    return choices;
}

// Every wheel the repository's tests use: the sample wheels, the fixtures under
// tests/data and auditwheel's own test wheels.
std::vector<fs::path> every_test_wheel() {
    std::vector<fs::path> wheels = auditwheel_wheels();
    for (const fs::path& root : {fs::path(WHEELFIX_TEST_DATA), fs::path(WHEELFIX_TEST_DATA) / "../../sample_wheels"})
        for (const auto& entry : fs::recursive_directory_iterator(root))
            if (entry.is_regular_file() && entry.path().extension() == ".whl" &&
                entry.path().string().find("auditwheel") == std::string::npos)
                wheels.push_back(entry.path());
    return wheels;
}

// The raw (compressed) bytes of a member.
Bytes raw_bytes(const zip::Archive& archive, const zip::Member& member) {
    Bytes bytes(static_cast<std::size_t>(member.compressed_size));
    auto reader = archive.open_raw(member);
    std::size_t at = 0;
    while (std::size_t got = reader.read(std::span(bytes).subspan(at))) at += got;
    bytes.resize(at);
    return bytes;
}

}  // namespace

TEST_CASE("codec: every member of the test wheels inflates to the same bytes and CRC with every backend") {
    auto wheels = every_test_wheel();
    REQUIRE(wheels.size() > 20);  // the auditwheel wheels are there
    std::size_t members_checked = 0;
    for (const auto& path : wheels) {
        CAPTURE(path.string());
        auto archive = zip::Archive::open(path);
        for (const auto& member : archive.members()) {
            if (member.method != zip::Method::deflated) continue;
            CAPTURE(member.name);
            Bytes compressed = raw_bytes(archive, member);
            Bytes oracle = inflate_all(zip::Backend::zlib, compressed);
            REQUIRE(oracle.size() == member.size);
            CHECK(static_cast<std::uint32_t>(::crc32_z(0, oracle.data(), oracle.size())) == member.crc32);
            for (auto backend : zip::compiled_backends()) {
                CAPTURE(zip::backend_name(backend));
                // Whole input at once, and in 1-byte and 7-byte pieces (state kept across calls).
                CHECK(inflate_all(backend, compressed) == oracle);
                if (compressed.size() < (64u << 10)) {
                    CHECK(inflate_all(backend, compressed, 1) == oracle);
                    CHECK(inflate_all(backend, compressed, 7) == oracle);
                }
                CHECK(zip::crc32_with(backend, 0, oracle) == member.crc32);
                // Through the zip layer: the index pass checks size and CRC itself.
                auto indexed = zip::inflate_indexed(archive, member, {}, zip::InflateOptions{.keep = true, .backend = backend});
                CHECK(std::ranges::equal(indexed.data, oracle));
                CHECK(indexed.crc32 == member.crc32);
            }
            ++members_checked;
        }
    }
    CHECK(members_checked > 100);
}

TEST_CASE("codec: what one backend deflates, every backend inflates, at every level") {
    const fs::path elf = fs::path(WHEELFIX_TEST_DATA) / "../../build/wheelfix";
    Bytes elf_bytes = fs::exists(elf) ? file_bytes(elf) : random_bytes(1 << 20, 3);
    elf_bytes.resize(std::min<std::size_t>(elf_bytes.size(), 3u << 20));
    Bytes half_random = random_bytes(700000, 1);
    std::fill(half_random.begin(), half_random.begin() + 350000, 0);
    const std::vector<std::pair<std::string, Bytes>> inputs{
        {"empty", {}},
        {"one byte", {0x42}},
        {"zeros", Bytes(5u << 20, 0)},
        {"random", random_bytes(2u << 20, 7)},
        {"half zeros, half random", half_random},
        {"ELF", elf_bytes},
    };
    for (const auto& [name, data] : inputs) {
        CAPTURE(name);
        for (auto choice : every_choice()) {
            CAPTURE(zip::backend_name(choice.backend));
            CAPTURE(choice.level);
            Bytes compressed = deflate_all(choice, data);
            for (auto backend : zip::compiled_backends()) {
                CAPTURE(zip::backend_name(backend));
                CHECK(inflate_all(backend, compressed) == data);
            }
            // Deterministic: the same input and choice give the same bytes.
            CHECK(deflate_all(choice, data) == compressed);
        }
    }
}

TEST_CASE("codec: parallel_deflate's sync-flushed chunks (dictionary-primed) inflate with every backend") {
    Bytes data = random_bytes(3u << 20, 11);
    for (std::size_t i = 0; i < data.size(); i += 3) data[i] = 0;  // compressible, with matches across chunk cuts
    for (auto choice : every_choice()) {
        CAPTURE(zip::backend_name(choice.backend));
        CAPTURE(choice.level);
        auto member = zip::parallel_deflate(data, choice, 2);
        Bytes joined;
        for (const auto& piece : member.pieces) joined.insert(joined.end(), piece.bytes.begin(), piece.bytes.end());
        CHECK(member.crc32 == static_cast<std::uint32_t>(::crc32_z(0, data.data(), data.size())));
        for (auto backend : zip::compiled_backends()) CHECK(inflate_all(backend, joined) == data);
        for (unsigned threads : {1u, 4u}) {  // threads do not matter: the same bytes, not only the same size
            CAPTURE(threads);
            Bytes again;
            for (const auto& piece : zip::parallel_deflate(data, choice, threads).pieces)
                again.insert(again.end(), piece.bytes.begin(), piece.bytes.end());
            CHECK(again == joined);
        }
    }
}

TEST_CASE("codec: a Deflater started again writes what a fresh one writes (parallel_deflate's threads reuse theirs)") {
    // Each parallel_deflate thread keeps one Deflater for every chunk it takes, and
    // which chunks those are is up to timing: a chunk's bytes must not depend on what
    // its Deflater deflated before (ISA-L's isal_deflate_reset keeps its history
    // buffer and hash tables), or the output would depend on the threads.
    Bytes data = random_bytes(3u << 20, 12);
    for (std::size_t i = 0; i < data.size(); i += 3) data[i] = 0;
    const std::span<const std::uint8_t> all(data);
    const auto dictionary = all.subspan((2u << 20) - (32u << 10), 32u << 10);
    const auto last = all.subspan(2u << 20);
    for (auto choice : every_choice()) {
        CAPTURE(zip::backend_name(choice.backend));
        CAPTURE(choice.level);
        Bytes expected;
        zip::Deflater fresh(choice.backend, choice.level);
        fresh.start(dictionary);
        fresh.feed(last, expected);
        fresh.end(true, expected);
        // After another chunk (the first, unrelated; the second, whose end is the dictionary).
        for (auto before : {all.first(1u << 20), all.subspan(1u << 20, 1u << 20)}) {
            zip::Deflater reused(choice.backend, choice.level);
            Bytes ignored, got;
            reused.start(before.data() == data.data() ? std::span<const std::uint8_t>() : all.subspan((1u << 20) - (32u << 10), 32u << 10));
            reused.feed(before, ignored);
            reused.end(false, ignored);
            reused.start(dictionary);
            reused.feed(last, got);
            reused.end(true, got);
            CHECK(got == expected);
        }
    }
}

TEST_CASE("codec: CRC-32 agrees with zlib's at every length and alignment, and combines") {
    Bytes data = random_bytes(100000, 5);
    for (auto backend : zip::compiled_backends()) {
        CAPTURE(zip::backend_name(backend));
        for (std::size_t offset : {0u, 1u, 3u, 7u})
            for (std::size_t length : {0u, 1u, 2u, 15u, 16u, 63u, 64u, 65u, 4096u, 99000u}) {
                auto piece = std::span(data).subspan(offset, length);
                CHECK(zip::crc32_with(backend, 0, piece) ==
                      static_cast<std::uint32_t>(::crc32_z(0, piece.data(), piece.size())));
                CHECK(zip::crc32_with(backend, 0x12345678u, piece) ==
                      static_cast<std::uint32_t>(::crc32_z(0x12345678u, piece.data(), piece.size())));
            }
        auto first = std::span(data).first(40000), second = std::span(data).subspan(40000);
        CHECK(zip::crc32_combine(zip::crc32_with(backend, 0, first), zip::crc32_with(backend, 0, second), second.size()) ==
              zip::crc32_with(backend, 0, data));
    }
}

TEST_CASE("codec: an inflater resumed at a block start (bits and window) decodes the rest, either backend") {
    Bytes data = random_bytes(3u << 20, 9);
    for (std::size_t i = 0; i < data.size(); ++i)
        if (i % 5 != 0) data[i] = static_cast<std::uint8_t>(i / 4096);
    test::TempDir dir;
    // A zip with one member deflated by zlib 6 (blocks at every bit alignment).
    Bytes compressed = deflate_all({zip::Backend::zlib, 6}, data);
    auto exact = [&] {
        // Every block start, by zlib with Z_BLOCK over the raw bytes.
        std::vector<zip::AccessPoint> points;
        z_stream stream{};
        REQUIRE(inflateInit2(&stream, -15) == Z_OK);
        Bytes out(data.size() + 1);
        stream.next_in = compressed.data();
        stream.avail_in = static_cast<uInt>(compressed.size());
        stream.next_out = out.data();
        stream.avail_out = static_cast<uInt>(out.size());
        int status = Z_OK;
        while (status == Z_OK) {
            status = inflate(&stream, Z_BLOCK);
            if ((stream.data_type & 128) && !(stream.data_type & 64)) {
                std::uint64_t bit = stream.total_in * 8 - static_cast<unsigned>(stream.data_type & 7);
                points.push_back({bit, stream.total_out, compressed[bit / 8], 0});
            }
        }
        inflateEnd(&stream);
        return points;
    }();
    REQUIRE(exact.size() > 20);
    int unaligned = 0;
    for (std::size_t i = 1; i < exact.size(); i += exact.size() / 12) {
        const auto& point = exact[i];
        const int used = static_cast<int>(point.compressed_bit % 8);
        unaligned += used != 0;
        const auto at = static_cast<std::size_t>(point.uncompressed);
        auto dictionary = std::span(data).subspan(at - std::min<std::size_t>(at, 32768), std::min<std::size_t>(at, 32768));
        for (auto backend : zip::compiled_backends()) {
            CAPTURE(zip::backend_name(backend));
            CAPTURE(point.compressed_bit);
            zip::Inflater inflater(backend);
            const auto next = inflater.resume(point.compressed_bit, point.partial_byte, dictionary);
            Bytes out;
            std::vector<std::uint8_t> room(1 << 16);
            auto left = std::span(compressed).subspan(static_cast<std::size_t>(next));
            for (bool ended = false; !ended;) {
                auto step = inflater.inflate(left, room);
                REQUIRE((step.consumed != 0 || step.produced != 0 || step.ended));
                left = left.subspan(step.consumed);
                out.insert(out.end(), room.begin(), room.begin() + static_cast<std::ptrdiff_t>(step.produced));
                ended = step.ended;
            }
            CHECK(std::ranges::equal(out, std::span(data).subspan(at)));
        }
    }
    CHECK(unaligned > 0);
}

TEST_CASE("codec: a corrupt or truncated stream is a CodecError or a stall, never a crash") {
    Bytes data = random_bytes(200000, 2);
    std::fill(data.begin(), data.begin() + 100000, 'a');
    Bytes compressed = deflate_all({zip::Backend::zlib, 6}, data);
    for (auto backend : zip::compiled_backends()) {
        CAPTURE(zip::backend_name(backend));
        Bytes bad = compressed;
        bad[0] = 0xff;  // BTYPE 11: reserved
        zip::Inflater inflater(backend);
        std::vector<std::uint8_t> room(1 << 16);
        CHECK_THROWS_AS(
            [&] {
                for (int i = 0; i < 100; ++i) inflater.inflate(i == 0 ? std::span<const std::uint8_t>(bad) : std::span<const std::uint8_t>(), room);
            }(),
            zip::CodecError);
        // Truncated: the output stops short and the inflater stalls without ending.
        zip::Inflater cut(backend);
        auto half = std::span<const std::uint8_t>(compressed).first(compressed.size() / 2);
        std::size_t produced = 0;
        bool ended = false;
        for (int i = 0; i < 200 && !ended; ++i) {
            auto step = cut.inflate(half, room);
            half = half.subspan(step.consumed);
            produced += step.produced;
            ended = step.ended;
        }
        CHECK_FALSE(ended);
        CHECK(produced < data.size());
    }
    CHECK_THROWS_AS(zip::Deflater(zip::Backend::zlib, 10), std::invalid_argument);
    for (auto backend : zip::compiled_backends())
        if (backend == zip::Backend::isal) CHECK_THROWS_AS(zip::Deflater(backend, 4), std::invalid_argument);
}

TEST_CASE("codec: a stream past 4 GiB of output (ISA-L counts in 32 bits) inflates whole with every backend") {
    // 4.25 GiB of a repeating pattern, deflated streaming in 16 MiB pieces; the
    // inflated bytes are checked piece by piece, never held.
    constexpr std::size_t kPiece = std::size_t(16) << 20;
    constexpr std::size_t kPieces = 272;  // 4.25 GiB
    Bytes piece(kPiece);
    for (std::size_t i = 0; i < piece.size(); ++i) piece[i] = static_cast<std::uint8_t>((i * 7) >> 12);
    const auto choice = zip::member_deflate();
    zip::Deflater deflater(choice.backend, choice.level);
    Bytes compressed;
    deflater.start();
    for (std::size_t i = 0; i < kPieces; ++i) deflater.feed(piece, compressed);
    deflater.end(true, compressed);
    const std::uint32_t piece_crc = zip::crc32(0, piece);
    std::uint32_t expected_crc = 0;
    for (std::size_t i = 0; i < kPieces; ++i) expected_crc = zip::crc32_combine(expected_crc, piece_crc, kPiece);
    for (auto backend : zip::compiled_backends()) {
        CAPTURE(zip::backend_name(backend));
        zip::Inflater inflater(backend);
        std::vector<std::uint8_t> room(kPiece);
        std::span<const std::uint8_t> left = compressed;
        std::uint64_t total = 0;
        std::uint32_t crc = 0;
        bool same = true, ended = false;
        for (int stalls = 0; !ended && stalls < 3;) {
            auto step = inflater.inflate(left.first(std::min<std::size_t>(left.size(), 1 << 20)), room);
            left = left.subspan(step.consumed);
            auto out = std::span(room).first(step.produced);
            for (std::size_t i = 0; i < out.size() && same; i += 4099)
                same = out[i] == piece[(total + i) % kPiece];
            crc = zip::crc32(crc, out);
            total += out.size();
            ended = step.ended;
            stalls = step.consumed == 0 && step.produced == 0 ? stalls + 1 : 0;
        }
        CHECK(ended);
        CHECK(same);
        CHECK(total == std::uint64_t(kPiece) * kPieces);
        CHECK(crc == expected_crc);
    }
}
