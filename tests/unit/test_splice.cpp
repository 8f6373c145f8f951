// inflate_indexed, plan_splice, parallel_deflate and FarReader on real ELF bytes.
//
// The splice is proven the only way that counts: the pieces are concatenated
// (original ones read from the archive's stored stream) and raw-inflated, and the
// result must equal apply_edits(original, edits), with the CRC-32, SHA-256 and
// size the plan announced. The originals come from several deflaters (zlib at
// levels 0/1/6/9 as python's zipfile calls it, libzip, our own parallel deflate)
// so block boundaries land everywhere, aligned and not.
#include "wheelfix/util/byte_edit.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/thread_budget.hpp"
#include "wheelfix/util/timings.hpp"
#include "wheelfix/zip/archive.hpp"
#include "wheelfix/zip/far_read.hpp"
#include "wheelfix/zip/inflate_index.hpp"
#include "wheelfix/zip/seekable_member.hpp"
#include "wheelfix/zip/splice.hpp"

#include "scoped_thread_budget.hpp"
#include "zip_test_support.hpp"

#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <map>
#include <set>
#include <thread>

using namespace wheelfix;
using namespace wheelfix::test;
using wheelfix::zip::Archive;
using wheelfix::zip::InflatedMember;
using wheelfix::zip::PrecompressedMember;

namespace {

using Bytes = std::vector<std::uint8_t>;

// ---- real data ------------------------------------------------------------------

bool is_elf_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    return in.read(magic, 4) && std::memcmp(magic, "\x7f" "ELF", 4) == 0;
}

std::vector<fs::path> elf_candidates() {
    std::vector<fs::path> files;
    for (const char* big : {"/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcudnn_ops.so.9",
                            "/usr/local/cuda/lib64/libcupti.so.13"})
        files.emplace_back(big);
    for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"}) {
        std::error_code ec;
        std::vector<fs::path> found;
        for (const auto& entry : fs::directory_iterator(dir, ec))
            if (entry.is_regular_file(ec) && !entry.is_symlink(ec) && entry.path().string().find(".so") != std::string::npos)
                found.push_back(entry.path());
        std::sort(found.begin(), found.end());
        files.insert(files.end(), found.begin(), found.end());
    }
    return files;
}

// `wanted` bytes of real shared libraries (one big one if there is one, else
// several concatenated), or nothing when the machine has too few.
std::optional<Bytes> real_elf_bytes(std::size_t wanted) {
    Bytes bytes;
    for (const auto& path : elf_candidates()) {
        std::error_code ec;
        if (!fs::exists(path, ec) || !is_elf_file(path)) continue;
        std::ifstream in(path, std::ios::binary);
        std::size_t take = std::min<std::size_t>(wanted - bytes.size(), fs::file_size(path, ec));
        std::size_t at = bytes.size();
        bytes.resize(at + take);
        in.read(reinterpret_cast<char*>(bytes.data() + at), static_cast<std::streamsize>(take));
        if (bytes.size() == wanted) return bytes;
    }
    return std::nullopt;
}

const Bytes* elf_sample() {
    static const std::optional<Bytes> sample = real_elf_bytes(std::size_t(4) << 20);
    return sample ? &*sample : nullptr;
}

// ---- deflaters and a python-style zip writer -----------------------------------

Bytes zlib_raw_deflate(std::span<const std::uint8_t> data, int level) {
    z_stream stream{};
    REQUIRE(deflateInit2(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    Bytes out(deflateBound(&stream, data.size()));
    stream.next_in = const_cast<Bytef*>(data.data());
    stream.avail_in = static_cast<uInt>(data.size());
    stream.next_out = out.data();
    stream.avail_out = static_cast<uInt>(out.size());
    REQUIRE(deflate(&stream, Z_FINISH) == Z_STREAM_END);
    out.resize(stream.total_out);
    deflateEnd(&stream);
    return out;
}

std::uint32_t crc_of(std::span<const std::uint8_t> data) {
    return static_cast<std::uint32_t>(crc32_z(0, data.data(), data.size()));
}

Bytes concatenated(const PrecompressedMember& member, const Bytes& original_stream) {
    Bytes out;
    for (const auto& piece : member.pieces) {
        if (piece.from_original) {
            REQUIRE(piece.original_offset + piece.length <= original_stream.size());
            auto begin = original_stream.begin() + static_cast<std::ptrdiff_t>(piece.original_offset);
            out.insert(out.end(), begin, begin + static_cast<std::ptrdiff_t>(piece.length));
        } else {
            REQUIRE(piece.bytes.size() == piece.length);
            out.insert(out.end(), piece.bytes.begin(), piece.bytes.end());
        }
    }
    return out;
}

// Inflates a complete raw deflate stream; it must end exactly at its last byte.
Bytes raw_inflate_all(const Bytes& stream_bytes) {
    z_stream stream{};
    REQUIRE(inflateInit2(&stream, -15) == Z_OK);
    Bytes out, buffer(1 << 20);
    stream.next_in = const_cast<Bytef*>(stream_bytes.data());
    stream.avail_in = static_cast<uInt>(stream_bytes.size());
    int status = Z_OK;
    while (status == Z_OK) {
        stream.next_out = buffer.data();
        stream.avail_out = static_cast<uInt>(buffer.size());
        status = inflate(&stream, Z_NO_FLUSH);
        out.insert(out.end(), buffer.begin(), buffer.end() - stream.avail_out);
    }
    CHECK(status == Z_STREAM_END);
    CHECK(stream.avail_in == 0);
    inflateEnd(&stream);
    return out;
}

struct StoredMember {
    std::string name;
    Bytes stored;  // as it goes into the file: raw deflate or plain bytes
    std::uint16_t method = 8;
    std::uint32_t crc = 0;
    std::uint64_t size = 0;
};

void put16(std::string& out, unsigned value) {
    out += static_cast<char>(value & 0xff);
    out += static_cast<char>((value >> 8) & 0xff);
}
void put32(std::string& out, std::uint32_t value) {
    put16(out, value & 0xffff);
    put16(out, value >> 16);
}

// A zip the way python's zipfile writes one: no extra fields, sizes in the local
// header, unix mode 0644. Lets a test store any deflate stream, CRC and size.
void write_python_style_zip(const fs::path& path, const std::vector<StoredMember>& members) {
    std::string file, central;
    for (const auto& member : members) {
        auto header = [&](std::string& out, bool central_entry) {
            put32(out, central_entry ? 0x02014b50 : 0x04034b50);
            if (central_entry) put16(out, (3 << 8) | 20);
            put16(out, 20);
            put16(out, 0);
            put16(out, member.method);
            put16(out, 0);
            put16(out, (1 << 5) | 1);  // 1980-01-01
            put32(out, member.crc);
            put32(out, static_cast<std::uint32_t>(member.stored.size()));
            put32(out, static_cast<std::uint32_t>(member.size));
            put16(out, static_cast<unsigned>(member.name.size()));
            put16(out, 0);
        };
        std::uint32_t offset = static_cast<std::uint32_t>(file.size());
        header(file, false);
        file += member.name;
        file.append(member.stored.begin(), member.stored.end());
        header(central, true);
        put16(central, 0);
        put16(central, 0);
        put16(central, 0);
        put32(central, 0100644u << 16);
        put32(central, offset);
        central += member.name;
    }
    std::uint32_t central_offset = static_cast<std::uint32_t>(file.size());
    file += central;
    put32(file, 0x06054b50);
    put32(file, 0);
    put16(file, static_cast<unsigned>(members.size()));
    put16(file, static_cast<unsigned>(members.size()));
    put32(file, static_cast<std::uint32_t>(central.size()));
    put32(file, central_offset);
    put16(file, 0);
    write_bytes(path, file);
}

StoredMember deflated_member(const std::string& name, std::span<const std::uint8_t> data, Bytes deflated) {
    return {name, std::move(deflated), 8, crc_of(data), data.size()};
}

// An original member to splice: its archive, its index and inflated bytes.
struct Original {
    TempDir dir;
    std::optional<Archive> archive;
    InflatedMember inflated;
    Bytes stream;  // the stored bytes, for checking

    const zip::Member& member() const { return archive->members().front(); }
};

enum class Producer { zlib0, zlib1, zlib6, zlib9, libzip, parallel };

const char* name_of(Producer producer) {
    switch (producer) {
        case Producer::zlib0: return "zlib level 0";
        case Producer::zlib1: return "zlib level 1";
        case Producer::zlib6: return "zlib level 6";
        case Producer::zlib9: return "zlib level 9";
        case Producer::libzip: return "libzip";
        case Producer::parallel: return "parallel_deflate";
    }
    return "?";
}

Bytes flatten(const PrecompressedMember& member) { return concatenated(member, {}); }

std::unique_ptr<Original> make_original(const Bytes& data, Producer producer) {
    auto original = std::make_unique<Original>();
    auto path = original->dir / "original.zip";
    switch (producer) {
        case Producer::zlib0: write_python_style_zip(path, {deflated_member("lib.so", data, zlib_raw_deflate(data, 0))}); break;
        case Producer::zlib1: write_python_style_zip(path, {deflated_member("lib.so", data, zlib_raw_deflate(data, 1))}); break;
        case Producer::zlib6: write_python_style_zip(path, {deflated_member("lib.so", data, zlib_raw_deflate(data, 6))}); break;
        case Producer::zlib9: write_python_style_zip(path, {deflated_member("lib.so", data, zlib_raw_deflate(data, 9))}); break;
        case Producer::libzip: write_zip(path, {{"lib.so", std::string(data.begin(), data.end())}}); break;
        case Producer::parallel:
            write_python_style_zip(path, {deflated_member("lib.so", data, flatten(zip::parallel_deflate(data, {zip::Backend::zlib, 6}, 2)))});
            break;
    }
    original->archive.emplace(Archive::open(path));
    REQUIRE(original->member().method == zip::Method::deflated);
    original->inflated = zip::inflate_indexed(*original->archive, original->member(), [](auto) {}, {.keep = true});
    original->stream = original->archive->read_raw(original->member());
    return original;
}

// One original per producer for the whole run (deflating 4 MB at level 9 is not free).
const Original& cached_original(const Bytes& data, Producer producer) {
    static std::map<Producer, std::unique_ptr<Original>> cache;
    auto& slot = cache[producer];
    if (!slot) slot = make_original(data, producer);
    return *slot;
}

// The splice must inflate to the edited content and carry its size, CRC and hash.
PrecompressedMember check_splice(const Original& original, const ByteEdits& edits) {
    Bytes seen;  // what the content sink got: the new content, in order, once
    auto spliced = zip::plan_splice(original.inflated, edits,
                                    [&](std::span<const std::uint8_t> chunk) { seen.insert(seen.end(), chunk.begin(), chunk.end()); });
    auto expected = apply_edits(original.inflated.data, edits);
    CHECK(seen == expected);
    auto stream = concatenated(spliced, original.stream);
    CHECK(stream.size() == spliced.compressed_size);
    CHECK(raw_inflate_all(stream) == expected);
    CHECK(spliced.size == expected.size());
    CHECK(spliced.crc32 == crc_of(expected));
    CHECK(spliced.sha256 == sha256(expected));
    // The bounded splice (the original's bytes not kept, read again from windows
    // every 64 KiB) gives the very same stream, size, CRC and hash, whichever
    // inflater indexed the first read: zlib (every block start recorded) or ISA-L
    // (one per window, as wheel/scan.cpp streams a member for the executor; the
    // splice finds the exact starts around its edits again from a window).
    for (auto backend : zip::compiled_backends()) {
        CAPTURE(zip::backend_name(backend));
        auto index = zip::inflate_indexed(*original.archive, original.member(), [](auto) {},
                                          zip::InflateOptions{.window_every = 64 << 10, .backend = backend});
        CHECK(index.data.empty());
        if (backend == zip::Backend::zlib) CHECK(index.blocks.size() == original.inflated.blocks.size());
        else CHECK(index.blocks.size() <= original.inflated.blocks.size());
        const zip::InflatedMember counted = [&] {
            zip::InflatedMember copy;
            copy.member = index.member;
            copy.blocks = index.blocks;
            copy.size = index.size;
            copy.crc32 = index.crc32;
            return copy;
        }();
        const zip::SeekableMember source(*original.archive, original.member(), std::move(index));
        Bytes seen_bounded;
        auto bounded = zip::plan_splice(counted, source, edits, [&](std::span<const std::uint8_t> chunk) {
            seen_bounded.insert(seen_bounded.end(), chunk.begin(), chunk.end());
        });
        CHECK(seen_bounded == expected);
        CHECK(concatenated(bounded, original.stream) == stream);
        CHECK(bounded.size == spliced.size);
        CHECK(bounded.crc32 == spliced.crc32);
        CHECK(bounded.sha256 == spliced.sha256);
        CHECK(bounded.recompressed_bytes == spliced.recompressed_bytes);
        // The digests computed while the original passed (the executor's one pass,
        // repair/plan.hpp) stand in for the splice's own pass: the same stream, and
        // a CRC-32 that is not the headers' is refused.
        zip::EditedDigest passing(edits);
        for (std::size_t at = 0, step = 1; at < original.inflated.data.size(); at += step, step = step * 3 + 1)
            passing.take(std::span(original.inflated.data).subspan(at, std::min(step, original.inflated.data.size() - at)));
        const auto digests = passing.finish(original.inflated.size);
        CHECK(digests.sha256 == spliced.sha256);
        CHECK(digests.crc32 == spliced.crc32);
        auto known = zip::plan_splice(counted, source, edits, digests);
        CHECK(concatenated(known, original.stream) == stream);
        CHECK(known.sha256 == spliced.sha256);
        CHECK(known.crc32 == spliced.crc32);
        auto wrong = digests;
        wrong.crc32 ^= 1;
        CHECK_THROWS_AS(zip::plan_splice(counted, source, edits, wrong), std::logic_error);
    }
    return spliced;
}

std::size_t fresh_pieces(const PrecompressedMember& member) {
    return static_cast<std::size_t>(std::count_if(member.pieces.begin(), member.pieces.end(),
                                                  [](const auto& piece) { return !piece.from_original; }));
}

ByteEdit replace(std::uint64_t offset, std::uint64_t length, std::uint8_t fill = 0xa5) {
    return {offset, length, Bytes(length, fill)};
}
ByteEdit insert(std::uint64_t offset, std::size_t count, std::uint8_t fill = 0x5a) { return {offset, 0, Bytes(count, fill)}; }

// The first access point (past the first 64 KiB and before the last 64 KiB) whose
// bit offset is not a multiple of 8, if any.
const zip::AccessPoint* unaligned_point(const InflatedMember& inflated) {
    for (const auto& point : inflated.blocks)
        if (point.compressed_bit % 8 && point.uncompressed > (64 << 10) && point.uncompressed + (64 << 10) < inflated.size)
            return &point;
    return nullptr;
}

}  // namespace

// ---- inflate_indexed ----------------------------------------------------------------

TEST_CASE("inflate_indexed: every access point restarts inflation (zran-style) where it says") {
    const Bytes* data = elf_sample();
    if (!data) {
        MESSAGE("skipped: no real ELF libraries on this machine");
        return;
    }
    for (auto producer : {Producer::zlib1, Producer::zlib6, Producer::libzip, Producer::parallel}) {
        CAPTURE(std::string(name_of(producer)));
        const Original& original = cached_original(*data, producer);
        const auto& inflated = original.inflated;
        CHECK(std::ranges::equal(inflated.data, *data));
        CHECK(inflated.size == data->size());
        CHECK(inflated.crc32 == original.member().crc32);
        REQUIRE(inflated.blocks.size() > 10);
        CHECK(inflated.blocks.front().compressed_bit == 0);
        CHECK(inflated.blocks.front().uncompressed == 0);
        std::size_t unaligned = 0;
        for (std::size_t i = 0; i < inflated.blocks.size(); ++i) {
            const auto& point = inflated.blocks[i];
            if (i > 0) {
                CHECK(point.compressed_bit > inflated.blocks[i - 1].compressed_bit);
                CHECK(point.uncompressed >= inflated.blocks[i - 1].uncompressed);
            }
            if (point.compressed_bit % 8) ++unaligned;
            if (i % 7 != 3) continue;  // decode from a sample of them
            // Resume inflation at the point: the unread high bits of its partial
            // byte, then the bytes after it, with the 32 KiB before it as window.
            z_stream stream{};
            REQUIRE(inflateInit2(&stream, -15) == Z_OK);
            int used = static_cast<int>(point.compressed_bit % 8);
            if (used) REQUIRE(inflatePrime(&stream, 8 - used, point.partial_byte >> used) == Z_OK);
            CHECK(point.partial_byte == (used ? original.stream[point.compressed_bit / 8] : 0));
            std::uint64_t window = std::min<std::uint64_t>(point.uncompressed, 32768);
            REQUIRE(inflateSetDictionary(&stream, data->data() + point.uncompressed - window, static_cast<uInt>(window)) == Z_OK);
            std::uint64_t next_byte = point.compressed_bit / 8 + (used ? 1 : 0);
            stream.next_in = const_cast<Bytef*>(original.stream.data() + next_byte);
            stream.avail_in = static_cast<uInt>(original.stream.size() - next_byte);
            Bytes out(std::min<std::uint64_t>(4096, data->size() - point.uncompressed));
            stream.next_out = out.data();
            stream.avail_out = static_cast<uInt>(out.size());
            int status = inflate(&stream, Z_NO_FLUSH);
            CHECK((status == Z_OK || status == Z_STREAM_END));
            CHECK(std::equal(out.begin(), out.end(), data->begin() + static_cast<std::ptrdiff_t>(point.uncompressed)));
            inflateEnd(&stream);
        }
        if (producer != Producer::parallel) CHECK(unaligned > 0);
    }
}

TEST_CASE("inflate_indexed: prefix CRCs give every span's CRC between access points (crc32_combine linearity)") {
    const Bytes* data = elf_sample();
    if (!data) {
        MESSAGE("skipped: no real ELF libraries on this machine");
        return;
    }
    for (auto producer : {Producer::zlib0, Producer::zlib6, Producer::libzip, Producer::parallel}) {
        CAPTURE(std::string(name_of(producer)));
        const auto& inflated = cached_original(*data, producer).inflated;
        // Boundaries: every access point, then the member's end (prefix CRC: the member's).
        std::vector<std::pair<std::uint64_t, std::uint32_t>> points;
        for (const auto& point : inflated.blocks) points.emplace_back(point.uncompressed, point.prefix_crc32);
        points.emplace_back(inflated.size, inflated.crc32);
        REQUIRE(points.size() > 10);
        CHECK(points.front().second == 0);
        std::uint32_t running = 0;
        for (std::size_t i = 1; i < points.size(); ++i) {  // each prefix CRC is the CRC of the prefix
            auto from = static_cast<std::ptrdiff_t>(points[i - 1].first), to = static_cast<std::ptrdiff_t>(points[i].first);
            if (to > from) running = static_cast<std::uint32_t>(crc32_z(running, data->data() + from, static_cast<std::size_t>(to - from)));
            CHECK(points[i].second == running);
        }
        // Every pair s < e: crc([s, e)) = prefix(e) ^ combine(prefix(s), 0, e - s), checked
        // against crc32 run incrementally from s over the span.
        std::size_t pairs = 0, mismatches = 0;
        for (std::size_t s = 0; s < points.size(); ++s) {
            std::uint32_t direct = 0;
            for (std::size_t e = s + 1; e < points.size(); ++e) {
                std::uint64_t at = points[e - 1].first, length = points[e].first - points[s].first;
                direct = static_cast<std::uint32_t>(crc32_z(direct, data->data() + at, points[e].first - at));
                auto derived = points[e].second ^ static_cast<std::uint32_t>(crc32_combine(points[s].second, 0, static_cast<z_off_t>(length)));
                ++pairs;
                if (derived != direct) ++mismatches;
            }
        }
        CAPTURE(pairs);
        CHECK(mismatches == 0);
    }
}

TEST_CASE("index_blocks_from: from any window, exactly the full index's block starts and prefix CRCs, up to the first past `until`") {
    const Bytes* data = elf_sample();
    if (!data) {
        MESSAGE("skipped: no real ELF libraries on this machine");
        return;
    }
    auto same = [](const zip::AccessPoint& a, const zip::AccessPoint& b) {
        return a.compressed_bit == b.compressed_bit && a.uncompressed == b.uncompressed &&
               a.partial_byte == b.partial_byte && a.prefix_crc32 == b.prefix_crc32;
    };
    for (auto producer : {Producer::zlib1, Producer::zlib6, Producer::libzip, Producer::parallel}) {
        CAPTURE(std::string(name_of(producer)));
        const Original& original = cached_original(*data, producer);
        const auto& full = original.inflated.blocks;  // zlib's: every block start
        for (auto backend : zip::compiled_backends()) {
            CAPTURE(zip::backend_name(backend));
            auto index = zip::inflate_indexed(*original.archive, original.member(), [](auto) {},
                                              zip::InflateOptions{.window_every = 256 << 10, .backend = backend});
            REQUIRE(index.windows.size() >= 2);
            std::vector<const zip::Window*> starts{nullptr};
            for (const auto& window : index.windows) {
                // A window's point is one of the full index's, prefix CRC included.
                CHECK(std::any_of(full.begin(), full.end(), [&](const auto& point) { return same(point, window.point); }));
                starts.push_back(&window);
            }
            for (const zip::Window* from : starts) {
                const std::uint64_t at = from ? from->point.uncompressed : 0;
                for (std::uint64_t until : {at, at + 100000, at + 700000, std::uint64_t(data->size()) + 1}) {
                    auto local = zip::index_blocks_from(*original.archive, original.member(), from, until);
                    REQUIRE(!local.empty());
                    auto first = std::find_if(full.begin(), full.end(), [&](const auto& point) { return same(point, local.front()); });
                    REQUIRE(first != full.end());
                    // The same run of block starts as the full index, ending at the first at or past `until`.
                    auto last = std::find_if(first + 1, full.end(), [&](const auto& point) { return point.uncompressed >= until; });
                    const std::size_t expected = static_cast<std::size_t>((last == full.end() ? last : last + 1) - first);
                    CHECK(local.size() == expected);
                    std::size_t differing = 0;
                    for (std::size_t i = 0; i < std::min(local.size(), expected); ++i)
                        if (!same(local[i], first[static_cast<std::ptrdiff_t>(i)])) ++differing;
                    CHECK(differing == 0);
                }
            }
        }
    }
}

TEST_CASE("inflate_indexed: streams to the sink without keeping; stored members have no index") {
    TempDir dir;
    Bytes text(300000);
    for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<std::uint8_t>("wheelfix "[i % 9] + (i / 5000) % 3);
    write_python_style_zip(dir / "a.zip", {deflated_member("text.txt", text, zlib_raw_deflate(text, 6)),
                                           {"plain.bin", text, 0, crc_of(text), text.size()}});
    auto archive = Archive::open(dir / "a.zip");
    for (const auto& member : archive.members()) {
        CAPTURE(member.name);
        Bytes seen;
        auto inflated = zip::inflate_indexed(archive, member, [&](auto chunk) { seen.insert(seen.end(), chunk.begin(), chunk.end()); }, {});
        CHECK(seen == text);
        CHECK(inflated.data.empty());
        CHECK(inflated.member == &member);
        CHECK(inflated.size == text.size());
        CHECK(inflated.crc32 == crc_of(text));
        CHECK(inflated.blocks.empty() == (member.method == zip::Method::stored));
    }
}

TEST_CASE("inflate_indexed: wrong CRC, wrong size, corrupt and truncated streams are InputErrors naming the member") {
    TempDir dir;
    Bytes text(200000);
    for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<std::uint8_t>((i * 7919) >> 5);
    Bytes good = zlib_raw_deflate(text, 6);
    Bytes corrupt = good;
    REQUIRE(corrupt.size() > 120);
    std::fill(corrupt.begin() + 100, corrupt.begin() + 120, std::uint8_t{0xff});  // an invalid code somewhere
    Bytes truncated(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2));
    struct Case {
        StoredMember member;
        const char* problem;
    };
    std::vector<Case> cases{
        {{"crc.so", good, 8, crc_of(text) ^ 1, text.size()}, "CRC mismatch"},
        {{"big.so", good, 8, crc_of(text), text.size() + 10}, "size mismatch"},
        {{"small.so", good, 8, crc_of(text), text.size() - 10}, "size mismatch"},
        {{"corrupt.so", corrupt, 8, crc_of(text), text.size()}, "corrupt compressed data"},
        {{"cut.so", truncated, 8, crc_of(text), text.size()}, "truncated"},
    };
    for (const auto& [stored, problem] : cases) {
        CAPTURE(stored.name);
        write_python_style_zip(dir / "bad.zip", {stored});
        auto archive = Archive::open(dir / "bad.zip");
        try {
            zip::inflate_indexed(archive, archive.members()[0], [](auto) {}, {.keep = true});
            FAIL("no InputError");
        } catch (const InputError& error) {
            CHECK(error.file() == (dir / "bad.zip").string());
            CHECK(error.problem().find("member " + stored.name + ": ") == 0);
            CHECK(error.problem().find(problem) != std::string::npos);
        }
    }
}

namespace {

// `size` bytes that deflate to many blocks of varied kinds: real ELF bytes where
// there are some, else a mixed pattern.
Bytes varied_bytes(std::size_t size) {
    const Bytes* elf = elf_sample();
    Bytes bytes(size);
    for (std::size_t i = 0; i < size; ++i)
        bytes[i] = elf && (i >> 20) % 2 == 0 ? (*elf)[i % elf->size()]
                                              : static_cast<std::uint8_t>((i * 2654435761u) >> ((i >> 12) % 24));
    return bytes;
}

// The threads of this process now (/proc/self/task).
std::size_t threads_in_process() {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator("/proc/self/task"), fs::directory_iterator{}));
}

}  // namespace

TEST_CASE("inflate_indexed: the follower is a second thread only when the thread budget spares one") {
    TempDir dir;
    Bytes big = varied_bytes(static_cast<std::size_t>(zip::kFollowedFrom) * 2);
    write_python_style_zip(dir / "a.zip", {deflated_member("big.so", big, zlib_raw_deflate(big, 6))});
    auto archive = Archive::open(dir / "a.zip");
    for (unsigned budget : {1u, 2u}) {
        CAPTURE(budget);
        ScopedThreadBudget scoped(budget);
        const std::size_t before = threads_in_process();
        std::size_t most = 0;
        auto sink = [&](auto) { most = std::max(most, threads_in_process()); };
        auto kept = zip::inflate_indexed(archive, archive.members()[0], sink, zip::InflateOptions{.keep = true, .sha256 = true});
        CHECK(most == before + budget - 1);
        CHECK(*kept.sha256 == sha256(big));
        CHECK(kept.crc32 == crc_of(big));
    }
}

TEST_CASE("SeekableMember::read_all: every byte in order from windows inflated on several threads; a sink's throw stops it") {
    TempDir dir;
    Bytes big = varied_bytes(std::size_t(6) << 20);
    write_python_style_zip(dir / "a.zip", {deflated_member("big.so", big, zlib_raw_deflate(big, 6)),
                                           {"big.bin", big, 0, crc_of(big), big.size()}});
    auto archive = Archive::open(dir / "a.zip");
    for (const auto& member : archive.members())
    for (auto backend : zip::compiled_backends())
    for (unsigned budget : {1u, 2u, 4u}) {
        CAPTURE(member.name);
        CAPTURE(zip::backend_name(backend));
        CAPTURE(budget);
        ScopedThreadBudget scoped(budget);
        auto index = zip::inflate_indexed(archive, member, {}, zip::InflateOptions{.window_every = 128 << 10, .backend = backend});
        if (member.method == zip::Method::deflated) CHECK(index.windows.size() >= 4);  // several spans, taken by every thread
        const zip::SeekableMember source(archive, member, std::move(index));
        Bytes seen;
        std::set<std::thread::id> handing;
        source.read_all([&](std::span<const std::uint8_t> chunk, std::uint64_t at) {
            CHECK(at == seen.size());
            seen.insert(seen.end(), chunk.begin(), chunk.end());
            handing.insert(std::this_thread::get_id());
        });
        CHECK(seen == big);
        CHECK(handing.size() <= budget);
        // The sink fails on its third call: the failure comes out, the helpers stop.
        int calls = 0;
        const std::size_t threads_before = threads_in_process();
        CHECK_THROWS_WITH_AS(source.read_all([&](auto, auto) {
            if (++calls == 3) throw std::runtime_error("sink gave up");
        }), "sink gave up", std::runtime_error);
        if (member.method == zip::Method::deflated) CHECK(calls == 3);
        CHECK(threads_in_process() == threads_before);
    }
}

TEST_CASE("inflate_indexed: the sha256 option gives the SHA-256 of the data, digested here or on the follower") {
    TempDir dir;
    Bytes big = varied_bytes(static_cast<std::size_t>(zip::kFollowedFrom) + (std::size_t(3) << 20));  // followed when kept
    Bytes small = varied_bytes(300000);
    write_python_style_zip(dir / "a.zip", {deflated_member("big.so", big, zlib_raw_deflate(big, 6)),
                                           deflated_member("small.so", small, zlib_raw_deflate(small, 1)),
                                           {"big.bin", big, 0, crc_of(big), big.size()},
                                           {"empty.bin", {}, 0, crc_of({}), 0}});
    auto archive = Archive::open(dir / "a.zip");
    std::map<std::string, const Bytes*> expected{{"big.so", &big}, {"small.so", &small}, {"big.bin", &big}};
    Bytes empty;
    for (auto backend : zip::compiled_backends())
    for (const auto& member : archive.members()) {
        CAPTURE(member.name);
        CAPTURE(zip::backend_name(backend));
        const Bytes& data = expected.count(member.name) ? *expected[member.name] : empty;
        Bytes seen;
        auto sink = [&](auto chunk) { seen.insert(seen.end(), chunk.begin(), chunk.end()); };
        auto kept = zip::inflate_indexed(archive, member, sink, zip::InflateOptions{.keep = true, .sha256 = true, .backend = backend});
        CHECK(seen == data);  // the sink sees every byte in order when keeping too
        REQUIRE(kept.sha256.has_value());
        CHECK(*kept.sha256 == sha256(data));
        CHECK(kept.size == data.size());
        CHECK(kept.crc32 == crc_of(data));
        CHECK(std::ranges::equal(kept.data, data));
        // Streamed (digested on this thread): the same digest and the same index.
        auto streamed = zip::inflate_indexed(archive, member, {}, zip::InflateOptions{.keep = false, .sha256 = true, .backend = backend});
        CHECK(streamed.data.empty());
        CHECK(streamed.sha256 == kept.sha256);
        CHECK(streamed.crc32 == kept.crc32);
        if (backend == zip::Backend::isal) {
            // ISA-L's block starts depend on where its output room ends: each must be
            // one of zlib's (which finds them all), the same in every field.
            auto exact = zip::inflate_indexed(archive, member, {}, zip::InflateOptions{.backend = zip::Backend::zlib});
            auto is_exact = [&](const zip::AccessPoint& point) {
                return std::ranges::any_of(exact.blocks, [&](const zip::AccessPoint& e) {
                    return e.compressed_bit == point.compressed_bit && e.uncompressed == point.uncompressed &&
                           e.partial_byte == point.partial_byte && e.prefix_crc32 == point.prefix_crc32;
                });
            };
            for (const auto& point : kept.blocks) CHECK(is_exact(point));
            for (const auto& point : streamed.blocks) CHECK(is_exact(point));
            if (member.method == zip::Method::deflated) CHECK(kept.blocks.size() > member.size / (2u << 20));
            continue;
        }
        REQUIRE(streamed.blocks.size() == kept.blocks.size());
        for (std::size_t i = 0; i < kept.blocks.size(); ++i) {
            CHECK(streamed.blocks[i].compressed_bit == kept.blocks[i].compressed_bit);
            CHECK(streamed.blocks[i].uncompressed == kept.blocks[i].uncompressed);
            CHECK(streamed.blocks[i].prefix_crc32 == kept.blocks[i].prefix_crc32);
            auto at = static_cast<std::size_t>(kept.blocks[i].uncompressed);
            CHECK(kept.blocks[i].prefix_crc32 == static_cast<std::uint32_t>(crc32_z(0, data.data(), at)));
        }
        if (member.method == zip::Method::deflated) CHECK(kept.blocks.size() > (member.size > (1 << 20) ? 10u : 2u));
        CHECK_FALSE(zip::inflate_indexed(archive, member, {}, {.keep = true}).sha256.has_value());  // not asked
    }
}

TEST_CASE("inflate_indexed: a big kept member failing mid-way stops the follower cleanly") {
    // Run under ASan too (the asan preset): the follower must never read the image
    // after a failure freed it, and every failure must be an InputError naming the member.
    TempDir dir;
    Bytes data = varied_bytes(static_cast<std::size_t>(zip::kFollowedFrom) * 2);
    Bytes good = zlib_raw_deflate(data, 6);
    Bytes corrupt = good;
    for (std::size_t i = good.size() / 2; i < good.size() / 2 + 64; ++i) corrupt[i] = 0xff;
    Bytes truncated(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2));
    struct Case {
        StoredMember member;
        std::vector<const char*> problems;  // any of them
    };
    std::vector<Case> cases{
        {{"corrupt.so", corrupt, 8, crc_of(data), data.size()}, {"corrupt compressed data", "CRC mismatch", "size mismatch"}},
        {{"cut.so", truncated, 8, crc_of(data), data.size()}, {"truncated"}},
        {{"crc.so", good, 8, crc_of(data) ^ 1, data.size()}, {"CRC mismatch"}},
        {{"short.so", good, 8, crc_of(data), data.size() - 1}, {"size mismatch (inflates to more than"}},
        {{"long.so", good, 8, crc_of(data), data.size() + 1}, {"size mismatch (central directory says"}},
    };
    for (const auto& [stored, problems] : cases) {
        CAPTURE(stored.name);
        write_python_style_zip(dir / "bad.zip", {stored});
        auto archive = Archive::open(dir / "bad.zip");
        std::size_t seen = 0;
        try {
            zip::inflate_indexed(archive, archive.members()[0], [&](auto chunk) { seen += chunk.size(); },
                                 zip::InflateOptions{.keep = true, .sha256 = true});
            FAIL("no InputError");
        } catch (const InputError& error) {
            CHECK(error.problem().find("member " + stored.name + ": ") == 0);
            CHECK(std::any_of(problems.begin(), problems.end(),
                              [&](const char* problem) { return error.problem().find(problem) != std::string::npos; }));
        }
        CHECK(seen > (std::size_t(1) << 20));  // it failed mid-way, with the follower at work
    }
    // The caller's sink throwing mid-way unwinds through the follower the same way.
    write_python_style_zip(dir / "good.zip", {deflated_member("good.so", data, good)});
    auto archive = Archive::open(dir / "good.zip");
    std::size_t seen = 0;
    auto throwing = [&](auto chunk) {
        if ((seen += chunk.size()) > data.size() / 2) throw std::runtime_error("sink gave up");
    };
    CHECK_THROWS_WITH(zip::inflate_indexed(archive, archive.members()[0], throwing, zip::InflateOptions{.keep = true, .sha256 = true}),
                      "sink gave up");
    auto fine = zip::inflate_indexed(archive, archive.members()[0], {}, zip::InflateOptions{.keep = true, .sha256 = true});
    CHECK(fine.sha256 == sha256(data));
}

// ---- plan_splice ----------------------------------------------------------------------

constexpr Producer kAllProducers[] = {Producer::zlib0, Producer::zlib1, Producer::zlib6,
                                      Producer::zlib9, Producer::libzip, Producer::parallel};

TEST_CASE("plan_splice: edits anywhere, from every deflater, inflate to apply_edits") {
    const Bytes* data = elf_sample();
    if (!data) {
        MESSAGE("skipped: no real ELF libraries on this machine");
        return;
    }
    const std::uint64_t n = data->size();
    for (auto producer : kAllProducers) {
        CAPTURE(std::string(name_of(producer)));
        const Original& original = cached_original(*data, producer);

        SUBCASE("no edits: the original stream, one piece") {
            auto spliced = check_splice(original, {});
            REQUIRE(spliced.pieces.size() == 1);
            CHECK(spliced.pieces[0].from_original);
            CHECK(spliced.pieces[0].length == original.member().compressed_size);
            CHECK(spliced.recompressed_bytes == 0);
        }
        SUBCASE("inside the first block") {
            auto spliced = check_splice(original, {replace(0, 16), replace(100, 8)});
            CHECK(spliced.pieces.front().from_original == false);
            CHECK(spliced.recompressed_bytes < n / 8);
        }
        SUBCASE("in the middle, in place") {
            auto spliced = check_splice(original, {replace(n / 2, 40)});
            CHECK(spliced.pieces.size() == 3);
            CHECK(fresh_pieces(spliced) == 1);
            CHECK(spliced.recompressed_bytes < n / 8);
        }
        SUBCASE("inside the last block: re-deflated to the end") {
            auto spliced = check_splice(original, {replace(n - 10, 10)});
            CHECK(spliced.pieces.size() == 2);
            CHECK_FALSE(spliced.pieces.back().from_original);
            CHECK(spliced.recompressed_bytes < n / 8);
        }
        SUBCASE("several close together merge into one region") {
            auto spliced = check_splice(original, {replace(n / 3, 8), replace(n / 3 + 100, 30), replace(n / 3 + 5000, 4)});
            CHECK(fresh_pieces(spliced) == 1);
        }
        SUBCASE("far apart stay separate regions") {
            auto spliced = check_splice(original, {replace(n / 4, 8), replace(3 * n / 4, 8)});
            CHECK(fresh_pieces(spliced) == 2);
            CHECK(spliced.pieces.size() == 5);
        }
        SUBCASE("growing: 64 KiB appended at the end") {
            auto spliced = check_splice(original, {insert(n, 64 << 10)});
            CHECK(spliced.size == n + (64 << 10));
            CHECK(spliced.pieces.front().from_original);
        }
        SUBCASE("growing and shrinking in the middle") {
            check_splice(original, {insert(n / 2, 1000), {n / 2 + 200000, 5000, {}}, {n / 2 + 400000, 3, Bytes(70000, 1)}});
        }
        SUBCASE("restarting at a block boundary that is not byte aligned: the partial byte is primed") {
            const auto* point = unaligned_point(original.inflated);
            if (!point) {
                CHECK(producer == Producer::zlib0);  // stored blocks always end aligned
                return;
            }
            auto spliced = check_splice(original, {replace(point->uncompressed, 4)});
            REQUIRE(spliced.pieces.size() >= 2);
            CHECK(spliced.pieces[0].from_original);
            CHECK(spliced.pieces[0].length == point->compressed_bit / 8);
        }
        SUBCASE("an edit over everything is a parallel deflate") {
            auto spliced = check_splice(original, {replace(0, n)});
            CHECK(fresh_pieces(spliced) == spliced.pieces.size());
            CHECK(spliced.recompressed_bytes == n);
        }
    }
}

TEST_CASE("plan_splice: many regions, edits at both ends: CRC folded from the index, hash from the thread") {
    const Bytes* data = elf_sample();
    if (!data) {
        MESSAGE("skipped: no real ELF libraries on this machine");
        return;
    }
    const std::uint64_t n = data->size();
    for (auto producer : kAllProducers) {
        CAPTURE(std::string(name_of(producer)));
        const Original& original = cached_original(*data, producer);
        ByteEdits edits{replace(0, 3)};
        for (std::uint64_t at = n / 17; at + 300 < n - 10; at += n / 17)
            edits.push_back(at % 2 ? insert(at, 100) : replace(at, 200, static_cast<std::uint8_t>(at)));
        edits.push_back({n - 10, 10, {}});
        auto spliced = check_splice(original, edits);
        CHECK(fresh_pieces(spliced) < spliced.pieces.size());  // the original is reused between regions
        // An edit exactly at an access point: the restart is that point itself.
        const auto& blocks = original.inflated.blocks;
        if (blocks.size() > 4) check_splice(original, {replace(blocks[blocks.size() / 2].uncompressed, 1)});
    }
}

TEST_CASE("plan_splice: the original resumes at the first boundary a window past the edit, aligned or not") {
    const Bytes* data = elf_sample();
    if (!data) {
        MESSAGE("skipped: no real ELF libraries on this machine");
        return;
    }
    std::set<int> offsets_in_byte;
    for (auto producer : {Producer::zlib1, Producer::zlib6, Producer::libzip}) {
        CAPTURE(std::string(name_of(producer)));
        const Original& original = cached_original(*data, producer);
        const auto& blocks = original.inflated.blocks;
        // One boundary per bit position within its byte, for each deflater: what the
        // join depends on (each further boundary at a position already joined repeats
        // the same splice, at the cost of a whole check_splice).
        std::set<int> joined_here;
        for (std::size_t qi = 3; qi + 1 < blocks.size(); ++qi) {
            // An edit ending exactly one window before q makes q the resume point.
            const auto& q = blocks[qi];
            if (q.uncompressed - blocks[qi - 1].uncompressed < 64 || q.uncompressed < (32 << 10) + 64) continue;
            int used = static_cast<int>(q.compressed_bit % 8);
            if (!joined_here.insert(used).second) continue;
            std::uint64_t edit_end = q.uncompressed - (32 << 10);
            CAPTURE(qi);
            auto spliced = check_splice(original, {replace(edit_end - 64, 64, static_cast<std::uint8_t>(qi))});
            REQUIRE(spliced.pieces.back().from_original);
            CHECK(spliced.pieces.back().original_offset == q.compressed_bit / 8 + (used ? 1 : 0));
            std::size_t pi = std::upper_bound(blocks.begin(), blocks.end(), edit_end - 64,
                                              [](std::uint64_t at, const auto& point) { return at < point.uncompressed; }) -
                             blocks.begin() - 1;
            CHECK(spliced.recompressed_bytes == q.uncompressed - blocks[pi].uncompressed);
            offsets_in_byte.insert(used);
        }
    }
    CHECK(offsets_in_byte.size() == 8);  // q at every bit position within its byte was joined
}

TEST_CASE("check_splice: a re-deflated region that does not decode to the edit, or does not join the original, is refused") {
    const Bytes* data = elf_sample();
    if (!data) {
        MESSAGE("skipped: no real ELF libraries on this machine");
        return;
    }
    const std::uint64_t n = data->size();
    for (auto producer : {Producer::zlib1, Producer::zlib6, Producer::libzip}) {
        CAPTURE(std::string(name_of(producer)));
        const Original& original = cached_original(*data, producer);
        const ByteEdits edits{replace(n / 3, 40), replace(n - 10, 10)};
        const auto good = zip::plan_splice(original.inflated, edits);
        REQUIRE(good.regions.size() == 2);
        CHECK_NOTHROW(zip::check_splice(good, original.inflated.data, edits));
        const auto& middle = good.regions.front();
        REQUIRE_FALSE(middle.final);
        REQUIRE(good.regions.back().final);
        auto corrupt = [&](std::size_t piece, std::size_t at, std::uint8_t mask) {
            auto bad = good;
            REQUIRE(at < bad.pieces[piece].bytes.size());
            bad.pieces[piece].bytes[at] ^= mask;
            return bad;
        };
        const auto& middle_bytes = good.pieces[middle.piece].bytes;
        // A flipped bit inside the region, in its last bits (the join), in the
        // original's bits of the rebuilt byte, in the final region.
        CHECK_THROWS_AS(zip::check_splice(corrupt(middle.piece, middle_bytes.size() / 2, 0x10), original.inflated.data, edits),
                        std::logic_error);
        const int tail = middle.tail_bits;
        const std::uint8_t ours = static_cast<std::uint8_t>(tail == 0 ? 0x80 : 1u << (tail - 1));
        CHECK_THROWS_AS(zip::check_splice(corrupt(middle.piece, middle_bytes.size() - 1, ours), original.inflated.data, edits),
                        std::logic_error);
        if (tail != 0)
            CHECK_THROWS_AS(zip::check_splice(corrupt(middle.piece, middle_bytes.size() - 1, 0x80), original.inflated.data, edits),
                            std::logic_error);
        const auto& last = good.regions.back();
        CHECK_THROWS_AS(zip::check_splice(corrupt(last.piece, good.pieces[last.piece].bytes.size() / 2, 0x04),
                                          original.inflated.data, edits),
                        std::logic_error);
        // A region one byte short, and the intended content changed under it.
        auto shorter = good;
        shorter.pieces[middle.piece].bytes.pop_back();
        CHECK_THROWS_AS(zip::check_splice(shorter, original.inflated.data, edits), std::logic_error);
        auto other_edits = edits;
        other_edits.front().bytes[7] ^= 1;
        CHECK_THROWS_AS(zip::check_splice(good, original.inflated.data, other_edits), std::logic_error);
    }
}

TEST_CASE("plan_splice: an in-place edit in a 20 MB member re-deflates well under 1 MiB") {
    auto data = real_elf_bytes(std::size_t(20) << 20);
    if (!data) {
        MESSAGE("skipped: less than 20 MB of real ELF libraries on this machine");
        return;
    }
    auto original = make_original(*data, Producer::zlib6);
    auto spliced = check_splice(*original, {replace(data->size() / 2, 64), replace(data->size() / 2 + 4096, 200)});
    CHECK(spliced.recompressed_bytes < (1u << 20));
    CHECK(spliced.recompressed_bytes > 0);
    std::uint64_t before = original->member().compressed_size;
    CHECK(spliced.compressed_size < before + before / 1000 + 64);
    CHECK(spliced.compressed_size > before - before / 1000);
}

TEST_CASE("plan_splice: stored originals and bad arguments") {
    TempDir dir;
    Bytes data(100000);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i % 251);
    write_python_style_zip(dir / "s.zip", {{"plain.bin", data, 0, crc_of(data), data.size()}});
    auto archive = Archive::open(dir / "s.zip");
    auto inflated = zip::inflate_indexed(archive, archive.members()[0], [](auto) {}, {.keep = true});
    ByteEdits edits{replace(10, 5), insert(50000, 7)};
    auto spliced = zip::plan_splice(inflated, edits);
    auto expected = apply_edits(data, edits);
    CHECK(fresh_pieces(spliced) == spliced.pieces.size());
    CHECK(raw_inflate_all(flatten(spliced)) == expected);
    CHECK(spliced.crc32 == crc_of(expected));
    CHECK(spliced.sha256 == sha256(expected));
    CHECK(inflated.blocks.empty());
    for (const ByteEdits& more : {ByteEdits{}, ByteEdits{replace(0, 1)}, ByteEdits{insert(data.size(), 3)}}) {
        auto again = zip::plan_splice(inflated, more);
        auto wanted = apply_edits(data, more);
        CHECK(raw_inflate_all(flatten(again)) == wanted);
        CHECK(again.size == wanted.size());
        CHECK(again.crc32 == crc_of(wanted));
        CHECK(again.sha256 == sha256(wanted));
    }

    CHECK_THROWS_AS(zip::plan_splice(inflated, {replace(99999, 2)}), std::invalid_argument);  // past the end
    CHECK_THROWS_AS(zip::plan_splice(inflated, {replace(500, 2), replace(10, 2)}), std::invalid_argument);  // unsorted
    auto not_kept = zip::inflate_indexed(archive, archive.members()[0], [](auto) {}, {});
    CHECK_THROWS_AS(zip::plan_splice(not_kept, {replace(10, 5)}), std::invalid_argument);
}

// ---- parallel_deflate ---------------------------------------------------------------------

TEST_CASE("parallel_deflate: round trips at every size, same bytes whatever the thread count") {
    const Bytes* elf = elf_sample();
    Bytes big(std::size_t(10) << 20);
    for (std::size_t i = 0; i < big.size(); ++i)  // real bytes where there are some, else a mixed pattern
        big[i] = elf ? (*elf)[i % elf->size()] : static_cast<std::uint8_t>((i * 2654435761u) >> ((i >> 12) % 24));
    for (std::size_t size : {std::size_t(0), std::size_t(1), std::size_t(32767), std::size_t(32768), std::size_t(32769),
                             (std::size_t(1) << 20) + 1, big.size()}) {
        CAPTURE(size);
        std::span<const std::uint8_t> data(big.data(), size);
        Bytes expected(data.begin(), data.end());
        std::optional<Bytes> first;
        for (unsigned threads : {1u, 2u, 4u}) {
            CAPTURE(threads);
            auto deflated = zip::parallel_deflate(data, {zip::Backend::zlib, 6}, threads);
            auto stream = flatten(deflated);
            CHECK(stream.size() == deflated.compressed_size);
            CHECK(raw_inflate_all(stream) == expected);
            CHECK(deflated.size == size);
            CHECK(deflated.crc32 == crc_of(data));
            CHECK(deflated.sha256 == sha256(data));
            CHECK(deflated.recompressed_bytes == size);
            if (first)
                CHECK(stream == *first);
            else
                first = stream;
        }
        for (unsigned budget : {1u, 3u}) {  // threads = 0: as many as the thread budget spares
            CAPTURE(budget);
            ScopedThreadBudget scoped(budget);
            CHECK(flatten(zip::parallel_deflate(data, {zip::Backend::zlib, 6})) == *first);
        }
        CHECK(zip::parallel_deflate(data, {zip::Backend::zlib, 6}, 2).pieces.size() == std::max<std::size_t>(1, (size + (1 << 20) - 1) >> 20));
    }
    // The chunks share their windows: the ratio stays that of one stream.
    std::span<const std::uint8_t> all(big);
    auto single = zlib_raw_deflate(all, 6);
    CHECK(zip::parallel_deflate(all, {zip::Backend::zlib, 6}, 2).compressed_size < single.size() + single.size() / 100 + 1000);
    CHECK_THROWS_AS(zip::parallel_deflate(all.first(100), {zip::Backend::zlib, 12}, 1), std::invalid_argument);
}

// ---- far reads: shapes of a linked library ---------------------------------------------------------------------------

namespace {

// Real ELF bytes, then what ends a linked library: zero padding, a table of
// repeated records and a string table (nvcc's .dynamic, section headers and
// .shstrtab come after hundreds of MB of device code).
Bytes library_like(std::size_t elf_bytes) {
    const Bytes* sample = elf_sample();
    REQUIRE(sample != nullptr);
    Bytes data;
    while (data.size() < elf_bytes) data.insert(data.end(), sample->begin(), sample->begin() + static_cast<std::ptrdiff_t>(std::min(sample->size(), elf_bytes - data.size())));
    data.resize(data.size() + 150000, 0);
    for (std::uint32_t i = 0; i < 4000; ++i)
        for (std::uint32_t word : {i * 64u, 0x70000000u + (i % 7), i * 1234567u, 0u, 64u, 24u})
            for (int b = 0; b < 4; ++b) data.push_back(static_cast<std::uint8_t>(word >> (8 * b)));
    for (const char* name : {".dynamic", ".got", ".data", ".bss", ".comment", ".shstrtab", ".nv_fatbin"})
        data.insert(data.end(), name, name + std::strlen(name) + 1);
    return data;
}

}  // namespace

namespace {

// `data` deflated by every producer a member may come from: zlib at `levels`,
// parallel_deflate (zlib 6, two chunks), and with ISA-L in the build its Deflater
// at level 1 in one stream and parallel_deflate's ISA-L level 1.
std::vector<std::pair<std::string, Bytes>> deflated_by_each(const Bytes& data, std::initializer_list<int> levels) {
    std::vector<std::pair<std::string, Bytes>> streams;
    for (int level : levels) streams.emplace_back("zlib level " + std::to_string(level), zlib_raw_deflate(data, level));
    streams.emplace_back("parallel_deflate", flatten(zip::parallel_deflate(data, {zip::Backend::zlib, 6}, 2)));
    for (zip::Backend backend : zip::compiled_backends())
        if (backend != zip::Backend::zlib) {
            zip::Deflater deflater(backend, 1);
            Bytes stream;
            deflater.start();
            deflater.feed(data, stream);
            deflater.end(true, stream);
            streams.emplace_back("ISA-L level 1", std::move(stream));
            streams.emplace_back("parallel_deflate, ISA-L", flatten(zip::parallel_deflate(data, {backend, 1}, 2)));
        }
    return streams;
}

}  // namespace

// ---- FarReader -----------------------------------------------------------------------------

namespace {

// What a linked CUDA library looks like to FarReader: compressible ELF bytes up to
// past the wanted offset, then tens of MiB of incompressible ones (.ldata's packed
// kernels), so a guess proportional to the compressed size lands far too late.
Bytes far_shaped(std::size_t head, std::size_t noise) {
    Bytes data = library_like(head);
    std::uint64_t state = 7;
    for (std::size_t i = 0; i < noise; ++i)
        data.push_back(static_cast<std::uint8_t>((state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 56));
    return data;
}

// Every byte a read delivers, checked against the content in order, range by range.
struct DeliveredBytes {
    explicit DeliveredBytes(const Bytes& bytes) : content(bytes) {}
    const Bytes& content;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;  // [begin, end) of each chunk
    bool all_equal = true;

    zip::RangeSink sink() {
        return [this](std::span<const std::uint8_t> chunk, std::uint64_t offset) {
            if (!seen.empty() && seen.back().second == offset) seen.back().second += chunk.size();
            else seen.emplace_back(offset, offset + chunk.size());
            all_equal = all_equal && offset + chunk.size() <= content.size() &&
                        std::equal(chunk.begin(), chunk.end(), content.begin() + static_cast<std::ptrdiff_t>(offset));
        };
    }
};

// Reads `wanted` (sorted, apart, within the member) through `reader` in one call:
// every byte must be `content`'s, each range delivered whole and in order.
void check_reads(const zip::FarReader& reader, const Bytes& content,
                 const std::vector<std::pair<std::uint64_t, std::uint64_t>>& wanted) {
    ByteRanges ranges;
    for (const auto& [begin, end] : wanted) ranges.add(begin, end);
    DeliveredBytes delivered(content);
    reader.read(ranges, delivered.sink());
    CHECK(delivered.all_equal);
    CHECK(delivered.seen == wanted);
}

}  // namespace

TEST_CASE("FarReader: ranges far from a member's end, exactly its bytes, whoever deflated it") {
    const Bytes data = far_shaped(std::size_t(10) << 20, std::size_t(17) << 20);
    const std::uint64_t size = data.size();
    const std::uint64_t lowest = std::uint64_t(19) << 19;  // 9.5 MiB: in the compressible part, more than the ring from the end
    for (const auto& [producer, stream] : deflated_by_each(data, {1, 6, 9})) {
        CAPTURE(producer);
        TempDir dir;
        write_python_style_zip(dir / "a.zip", {deflated_member("big.so", data, stream)});
        const Archive archive = Archive::open(dir / "a.zip");
        const zip::Member& member = archive.members().front();
        const auto reader = zip::FarReader::open(archive, member, lowest);
        REQUIRE(reader.has_value());
        CHECK(reader->known_from() <= lowest);
        CHECK(reader->known_from() > 0);
        // The proportional guess lands in the incompressible part: a second entry, further back, was needed.
        CHECK(reader->stats().entries >= 2);
        CHECK(reader->stats().inflated <= 2 * (size - lowest) + zip::FarReader::kBudgetSlack);
        // Before the ring, across its first byte, inside it, and the member's last bytes, in one read.
        const std::uint64_t ring_begin = size - zip::FarReader::kRing;
        ByteRanges ranges;
        ranges.add(lowest, lowest + 640);
        ranges.add(lowest + 1000000, lowest + 1000001);
        ranges.add(ring_begin - 70000, ring_begin + 5000);
        ranges.add(size - 300000, size - 200000);
        ranges.add(size - 10, size + 1000);  // clamped to the member's end
        DeliveredBytes delivered(data);
        reader->read(ranges, delivered.sink());
        CHECK(delivered.all_equal);
        const std::vector<std::pair<std::uint64_t, std::uint64_t>> expected{
            {lowest, lowest + 640}, {lowest + 1000000, lowest + 1000001}, {ring_begin - 70000, ring_begin + 5000},
            {size - 300000, size - 200000}, {size - 10, size}};
        CHECK(delivered.seen == expected);
        // Anything before known_from() is not to be had from this reader.
        ByteRanges too_early;
        too_early.add(reader->known_from() - 1, lowest);
        CHECK_THROWS_AS(reader->read(too_early, [](auto, auto) {}), std::invalid_argument);
    }
}

TEST_CASE("FarReader: a stored member is read in place; noise, cut streams and a size that lies give nothing") {
    const Bytes data = far_shaped(std::size_t(3) << 20, std::size_t(2) << 20);
    const std::uint64_t size = data.size();
    const Bytes good = zlib_raw_deflate(data, 6);
    Bytes cut = good;
    cut.resize(cut.size() - 100);
    Bytes noise(std::size_t(4) << 20);
    std::uint64_t state = 99;
    for (auto& byte : noise) byte = static_cast<std::uint8_t>((state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 56);
    TempDir dir;
    write_python_style_zip(dir / "a.zip", {{"stored.so", data, 0, crc_of(data), size},
                                           deflated_member("good.so", data, good),
                                           deflated_member("cut.so", data, cut),
                                           {"noise.so", noise, 8, 0, size},
                                           {"zeros.so", Bytes(std::size_t(4) << 20, 0), 8, 0, size},
                                           {"short.so", good, 8, crc_of(data), 100000},
                                           {"long.so", good, 8, crc_of(data), 10 * size}});
    const Archive archive = Archive::open(dir / "a.zip");
    const std::uint64_t lowest = std::uint64_t(3) << 20;

    const auto stored = zip::FarReader::open(archive, *archive.find("stored.so"), lowest);
    REQUIRE(stored.has_value());
    CHECK(stored->known_from() == 0);
    ByteRanges ranges;
    ranges.add(5, 70000);
    ranges.add(lowest, lowest + 100);
    DeliveredBytes delivered(data);
    stored->read(ranges, delivered.sink());
    CHECK(delivered.all_equal);
    CHECK(delivered.seen == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{5, 70000}, {lowest, lowest + 100}});

    // A member smaller than the ring: all of it from memory; from offset 0, the whole stream.
    // --timings' inflate phase counts every byte both decoders gave.
    for (const std::uint64_t from : {lowest, std::uint64_t(0)}) {
        CAPTURE(from);
        timings::enable();
        const std::uint64_t inflated_before = timings::totals()[static_cast<std::size_t>(timings::Phase::inflate)].bytes;
        const auto reader = zip::FarReader::open(archive, *archive.find("good.so"), from);
        const std::uint64_t inflated_after = timings::totals()[static_cast<std::size_t>(timings::Phase::inflate)].bytes;
        timings::enable(false);
        REQUIRE(reader.has_value());
        CHECK(inflated_after - inflated_before == reader->stats().inflated);
        CHECK(reader->stats().inflated >= size - reader->stats().entry_offset);
        CHECK(reader->known_from() <= from);
        check_reads(*reader, data, {{from, from + 100}, {size - 50, size}});
    }
    // Past the end: a reader with nothing to give (every range clamps to empty).
    const auto past = zip::FarReader::open(archive, *archive.find("good.so"), size + 5);
    REQUIRE(past.has_value());
    CHECK(past->known_from() == size);

    CHECK_FALSE(zip::FarReader::open(archive, *archive.find("cut.so"), lowest).has_value());
    CHECK_FALSE(zip::FarReader::open(archive, *archive.find("noise.so"), lowest).has_value());
    CHECK_FALSE(zip::FarReader::open(archive, *archive.find("zeros.so"), lowest).has_value());  // no bit passes the header test
    // Central directory sizes that lie: far fewer bytes than the stream holds (a decode from
    // the middle already gives more), and ten times as many (every entry's offset, counted
    // back from the declared end, lands past the wanted one, however far back it goes).
    CHECK_FALSE(zip::FarReader::open(archive, *archive.find("short.so"), 50000).has_value());
    CHECK_FALSE(zip::FarReader::open(archive, *archive.find("long.so"), lowest).has_value());
}

TEST_CASE("FarReader: a locator places the entry where it recognizes the bytes; its decode stops there") {
    // A marker in the compressible part; 17 MiB of noise after it.
    Bytes data = far_shaped(std::size_t(10) << 20, std::size_t(17) << 20);
    const std::uint64_t size = data.size();
    const std::uint64_t marked = (std::uint64_t(19) << 19) + 1001;  // 9.5 MiB + 1001: no alignment to lean on
    const std::string marker = "wheelfix far-read locator marker 7f3a";
    std::copy(marker.begin(), marker.end(), data.begin() + static_cast<std::ptrdiff_t>(marked));
    TempDir dir;
    write_python_style_zip(dir / "a.zip", {deflated_member("big.so", data, zlib_raw_deflate(data, 6))});
    const Archive archive = Archive::open(dir / "a.zip");
    const zip::Member& member = archive.members().front();
    int calls = 0;
    const zip::FarReader::Locator locate = [&](std::span<const std::uint8_t> bytes, std::uint64_t count) -> std::optional<std::uint64_t> {
        ++calls;
        const auto found = std::search(bytes.begin(), bytes.end(), marker.begin(), marker.end());
        if (found == bytes.end()) return std::nullopt;
        return marked - (count + static_cast<std::uint64_t>(found - bytes.begin()));
    };
    const auto reader = zip::FarReader::open(archive, member, marked, locate);
    const auto plain = zip::FarReader::open(archive, member, marked);
    REQUIRE(reader.has_value());
    REQUIRE(plain.has_value());
    CHECK(reader->stats().located);
    CHECK(calls > 0);
    CHECK(reader->known_from() <= marked);
    // The first entry, too late, decodes to the end either way (the marker is not in
    // it); the second stops at the marker, short of the 17.5 MiB after it.
    CHECK(reader->stats().entries == plain->stats().entries);
    CHECK(reader->stats().inflated + (size - marked) / 2 < plain->stats().inflated);
    CHECK(reader->in_memory(marked, marked + marker.size()));
    CHECK_FALSE(reader->in_memory(size - 1000, size));
    // From memory, and past where the decode stopped (inflated again from the entry), in one read.
    check_reads(*reader, data, {{marked, marked + 640}, {size - 1000, size}});

    // A locator that recognizes nothing: the decode goes to the stream's end, as without one.
    const auto unplaced = zip::FarReader::open(archive, member, marked, [](auto, auto) { return std::optional<std::uint64_t>{}; });
    REQUIRE(unplaced.has_value());
    CHECK_FALSE(unplaced->stats().located);
    CHECK(unplaced->stats().inflated == plain->stats().inflated);
    CHECK(unplaced->known_from() == plain->known_from());
    CHECK(unplaced->in_memory(size - 1000, size));
}

TEST_CASE("FarReader: a member's end is entered near it, however incompressible the end is") {
    const Bytes data = far_shaped(std::size_t(10) << 20, std::size_t(17) << 20);
    const std::uint64_t size = data.size(), lowest = size - 100000;
    TempDir dir;
    write_python_style_zip(dir / "a.zip", {deflated_member("big.so", data, zlib_raw_deflate(data, 6))});
    const Archive archive = Archive::open(dir / "a.zip");
    const auto reader = zip::FarReader::open(archive, archive.members().front(), lowest);
    REQUIRE(reader.has_value());
    CHECK(reader->known_from() <= lowest);
    // The entry lies kTailGuessSlack plus twice the proportional distance before the end:
    // 1.48 MB inflated by both decoders (a guess proportional from the start, times
    // kFirstGuessMargin, lay 2 MB back).
    CHECK(reader->stats().inflated <= zip::FarReader::kTailGuessSlack + 6 * (size - lowest));
    // Its ring holds what lies from `lowest` on (not kRing: kMinRing here), so the
    // read is served from memory.
    CHECK(reader->in_memory(lowest, size));
    CHECK_FALSE(reader->in_memory(size - zip::FarReader::kMinRing - 1, size));
    check_reads(*reader, data, {{lowest, size}});
}

TEST_CASE("FarReader::open_confirmed: a member's end from a block start near it, exactly its bytes, whoever deflated it") {
    const Bytes data = library_like(std::size_t(12) << 20);
    const std::uint64_t size = data.size();
    for (const auto& [producer, stream] : deflated_by_each(data, {0, 1, 6})) {
        CAPTURE(producer);
        TempDir dir;
        write_python_style_zip(dir / "a.zip", {deflated_member("big.so", data, stream)});
        const Archive archive = Archive::open(dir / "a.zip");
        const zip::Member& member = archive.members().front();
        for (std::uint64_t back : {std::uint64_t(1), std::uint64_t(70000), std::uint64_t(1) << 20}) {
            CAPTURE(back);
            const std::uint64_t lowest = size - back;
            const auto tail = zip::FarReader::open_confirmed(archive, member, lowest);
            REQUIRE(tail.has_value());
            CHECK(tail->known_from() <= lowest);
            CHECK(tail->known_from() > 0);
            CHECK(tail->in_memory(lowest, size));
            // Bounded as open() is: both decoders of the kept entry, every candidate.
            CHECK(tail->stats().inflated <= 2 * back + zip::FarReader::kBudgetSlack);
            check_reads(*tail, data, {{lowest, size}});
        }
        // The whole member is never had this way: an entry at offset 0 has nothing before
        // it to confirm it (the stream from its start is the caller's).
        CHECK_FALSE(zip::FarReader::open_confirmed(archive, member, 0).has_value());
    }
}

TEST_CASE("FarReader::open_confirmed: stored members are read in place; garbage, cut streams and spans past the ring give nothing") {
    const Bytes data = library_like(std::size_t(4) << 20);
    const std::uint64_t size = data.size();
    TempDir dir;
    Bytes cut = zlib_raw_deflate(data, 6);
    cut.resize(cut.size() - 100);
    Bytes noise(std::size_t(4) << 20);
    std::uint64_t state = 99;
    for (auto& byte : noise) byte = static_cast<std::uint8_t>((state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 56);
    const Bytes shaped = far_shaped(std::size_t(10) << 20, std::size_t(17) << 20);
    write_python_style_zip(dir / "a.zip", {{"stored.so", data, 0, crc_of(data), size},
                                           deflated_member("cut.so", data, cut),
                                           {"noise.so", noise, 8, 0, size},
                                           deflated_member("shaped.so", shaped, zlib_raw_deflate(shaped, 6))});
    const Archive archive = Archive::open(dir / "a.zip");
    const auto stored = zip::FarReader::open_confirmed(archive, *archive.find("stored.so"), size - 5000);
    REQUIRE(stored.has_value());
    check_reads(*stored, data, {{size - 5000, size}});
    CHECK_FALSE(zip::FarReader::open_confirmed(archive, *archive.find("cut.so"), size - 5000).has_value());
    CHECK_FALSE(zip::FarReader::open_confirmed(archive, *archive.find("noise.so"), size - 5000).has_value());
    // More than the ring from the end: not to be had this way (open() reads it, unconfirmed).
    const zip::Member& big = *archive.find("shaped.so");
    CHECK_FALSE(zip::FarReader::open_confirmed(archive, big, big.size - zip::FarReader::kRing - 1).has_value());
    const auto end = zip::FarReader::open_confirmed(archive, big, big.size - 100000);
    REQUIRE(end.has_value());
    check_reads(*end, shaped, {{big.size - 100000, big.size}});
}

TEST_CASE("EditedDigest: the edited content's digests from the original passing, and a pass that is not the original's is refused") {
    const Bytes original = varied_bytes(300000);
    const ByteEdits edits = {replace(10, 5), insert(150000, 70000), {original.size(), 0, Bytes(33, 0x11)}};
    const Bytes expected = apply_edits(original, edits);
    zip::EditedDigest digest(edits);
    digest.take(std::span(original).first(149999));
    digest.take(std::span(original).subspan(149999));
    const auto digests = digest.finish(original.size());
    CHECK(digests.sha256 == sha256(expected));
    CHECK(digests.crc32 == crc_of(expected));

    // The same, with the original's own SHA-256 fed beside it (the two hashes paired).
    zip::EditedDigest paired(edits);
    Sha256 original_hash;
    paired.take(std::span(original).first(64 * 1000 + 3), original_hash);
    paired.take(std::span(original).subspan(64 * 1000 + 3), original_hash);
    const auto paired_digests = paired.finish(original.size());
    CHECK(paired_digests.sha256 == sha256(expected));
    CHECK(paired_digests.crc32 == crc_of(expected));
    CHECK(original_hash.digest() == sha256(original));

    // With a content sink: it gets the new content, in order, all of it, either way of taking.
    for (const bool beside : {false, true}) {
        Bytes seen;
        zip::EditedDigest streaming(edits, [&](std::span<const std::uint8_t> bytes) { seen.insert(seen.end(), bytes.begin(), bytes.end()); });
        Sha256 beside_hash;
        for (std::size_t at = 0; at < original.size(); at += 7777) {
            const auto chunk = std::span(original).subspan(at, std::min<std::size_t>(7777, original.size() - at));
            if (beside) streaming.take(chunk, beside_hash);
            else streaming.take(chunk);
        }
        CHECK(streaming.finish(original.size()).sha256 == sha256(expected));
        CHECK(seen == expected);
    }

    zip::EditedDigest short_read(edits);
    short_read.take(std::span(original).first(1000));
    CHECK_THROWS_AS(short_read.finish(original.size()), std::logic_error);
    const ByteEdits beyond{insert(original.size() + 1, 4)};
    zip::EditedDigest past(beyond);
    past.take(original);
    CHECK_THROWS_AS(past.finish(original.size()), std::logic_error);
}
