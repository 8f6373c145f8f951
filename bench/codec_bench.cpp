// codec_bench: the figures behind zip/codec.hpp's choices, on this machine, in one run.
//
//   codec_bench levels FILE [MAX_MB]    deflate the file's first MAX_MB (all by
//       default) with ISA-L 0-3 and zlib 1 and 6 on one thread: seconds, size,
//       ratio; then inflate zlib 6's stream with each backend; CRC-32 with each.
//   codec_bench member WHEEL MEMBER     one streaming inflate of the member's raw
//       bytes with each backend (the floor of any command that reads it), and the
//       block-indexed inflate (inflate_indexed) with each backend, with the number
//       of block starts found.
//   codec_bench inflate WHEEL MEMBER isa-l|zlib   one streaming inflate of the
//       member from the file with CRC-32 and nothing else: a floor for bench.py.
//   codec_bench far WHEEL MEMBER OFFSET LENGTH   zip::FarReader::open at OFFSET and
//       read of [OFFSET, OFFSET + LENGTH): seconds, entries and candidates tried,
//       bytes inflated, known_from(); then the same bytes from a full streaming
//       inflate, compared.
// Prints a markdown table (bench/README.md, "Compression").
#include "wheelfix/zip/archive.hpp"
#include "wheelfix/zip/codec.hpp"
#include "wheelfix/zip/far_read.hpp"
#include "wheelfix/zip/inflate_index.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace wheelfix;
using Bytes = std::vector<std::uint8_t>;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Bytes deflate_with(zip::DeflateChoice choice, const Bytes& data) {
    zip::Deflater deflater(choice.backend, choice.level);
    Bytes out;
    out.reserve(data.size() / 2);
    deflater.start();
    constexpr std::size_t kFeed = std::size_t(1) << 20;
    for (std::size_t at = 0; at < data.size(); at += kFeed)
        deflater.feed(std::span(data).subspan(at, std::min(kFeed, data.size() - at)), out);
    deflater.end(true, out);
    return out;
}

// Streaming inflate of `compressed` in 256 KiB pieces into a 1 MiB buffer; returns the bytes out.
std::uint64_t stream_inflate(zip::Backend backend, std::span<const std::uint8_t> compressed, std::uint32_t& crc) {
    zip::Inflater inflater(backend);
    std::vector<std::uint8_t> room(1 << 20);
    std::uint64_t total = 0;
    crc = 0;
    for (bool ended = false; !ended;) {
        auto step = inflater.inflate(compressed.first(std::min<std::size_t>(compressed.size(), 256 << 10)), room);
        compressed = compressed.subspan(step.consumed);
        crc = zip::crc32_with(backend, crc, std::span(room).first(step.produced));
        total += step.produced;
        ended = step.ended;
        if (!ended && step.consumed == 0 && step.produced == 0) {
            std::fprintf(stderr, "truncated stream\n");
            std::exit(1);
        }
    }
    return total;
}

int levels(const char* path, std::size_t max_mb) {
    std::ifstream in(path, std::ios::binary);
    Bytes data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (max_mb != 0 && data.size() > (max_mb << 20)) data.resize(max_mb << 20);
    std::printf("%s: %zu bytes\n\n| codec | level | deflate s | MB/s | compressed bytes | ratio |\n|---|---:|---:|---:|---:|---:|\n",
                path, data.size());
    std::vector<zip::DeflateChoice> choices;
    for (auto backend : zip::compiled_backends())
        if (backend == zip::Backend::isal)
            for (int level = 0; level <= 3; ++level) choices.push_back({backend, level});
    choices.push_back({zip::Backend::zlib, 1});
    choices.push_back({zip::Backend::zlib, 6});
    Bytes zlib6;
    for (auto choice : choices) {
        auto start = std::chrono::steady_clock::now();
        Bytes out = deflate_with(choice, data);
        double took = seconds_since(start);
        std::printf("| %s | %d | %.3f | %.0f | %zu | %.3f |\n", std::string(zip::backend_name(choice.backend)).c_str(),
                    choice.level, took, data.size() / 1e6 / took, out.size(), double(out.size()) / double(data.size()));
        if (choice.backend == zip::Backend::zlib && choice.level == 6) zlib6 = std::move(out);
    }
    std::printf("\n| work | codec | s | MB/s (inflated) |\n|---|---|---:|---:|\n");
    for (auto backend : zip::compiled_backends()) {
        std::uint32_t crc = 0;
        auto start = std::chrono::steady_clock::now();
        std::uint64_t total = stream_inflate(backend, zlib6, crc);
        double took = seconds_since(start);
        std::printf("| inflate of zlib 6's stream (CRC-32 included) | %s | %.3f | %.0f |\n",
                    std::string(zip::backend_name(backend)).c_str(), took, total / 1e6 / took);
    }
    for (auto backend : zip::compiled_backends()) {
        auto start = std::chrono::steady_clock::now();
        volatile std::uint32_t crc = zip::crc32_with(backend, 0, data);
        (void)crc;
        double took = seconds_since(start);
        std::printf("| CRC-32 | %s | %.3f | %.0f |\n", std::string(zip::backend_name(backend)).c_str(), took,
                    data.size() / 1e6 / took);
    }
    return 0;
}

int member(const char* wheel, const char* name) {
    auto archive = zip::Archive::open(wheel);
    const zip::Member* found = archive.find(name);
    if (!found) {
        std::fprintf(stderr, "%s: no member %s\n", wheel, name);
        return 2;
    }
    Bytes raw = archive.read_raw(*found);
    std::printf("%s: %llu bytes, %llu compressed\n\n| work | codec | s | block starts |\n|---|---|---:|---:|\n", name,
                static_cast<unsigned long long>(found->size), static_cast<unsigned long long>(raw.size()));
    for (auto backend : zip::compiled_backends()) {
        std::uint32_t crc = 0;
        auto start = std::chrono::steady_clock::now();
        stream_inflate(backend, raw, crc);
        double took = seconds_since(start);
        std::printf("| streaming inflate + CRC-32 (from memory) | %s | %.3f | |\n",
                    std::string(zip::backend_name(backend)).c_str(), took);
        if (crc != found->crc32) std::printf("CRC MISMATCH\n");
    }
    for (auto backend : zip::compiled_backends()) {
        auto start = std::chrono::steady_clock::now();
        auto inflated = zip::inflate_indexed(archive, *found, {}, zip::InflateOptions{.backend = backend});
        double took = seconds_since(start);
        std::printf("| inflate_indexed, streaming (from the file) | %s | %.3f | %zu |\n",
                    std::string(zip::backend_name(backend)).c_str(), took, inflated.blocks.size());
    }
    return 0;
}

// One streaming inflate of the member, read from the file in 256 KiB pieces.
int inflate_floor(const char* wheel, const char* name, const std::string& codec) {
    auto archive = zip::Archive::open(wheel);
    const zip::Member* found = archive.find(name);
    if (!found) return 2;
    const auto backend = codec == "zlib" ? zip::Backend::zlib : zip::Backend::isal;
    auto raw = archive.open_raw(*found);
    zip::Inflater inflater(backend);
    std::vector<std::uint8_t> input(256 << 10), room(1 << 20);
    std::span<const std::uint8_t> pending;
    std::uint32_t crc = 0;
    for (bool ended = false; !ended;) {
        if (pending.empty()) pending = std::span<const std::uint8_t>(input.data(), raw.read(input));
        auto step = inflater.inflate(pending, room);
        pending = pending.subspan(step.consumed);
        crc = zip::crc32_with(backend, crc, std::span(room).first(step.produced));
        ended = step.ended;
        if (!ended && step.consumed == 0 && step.produced == 0 && pending.empty()) return 1;
    }
    return crc == found->crc32 ? 0 : 1;
}

// FarReader's open and read of one range, timed, and checked against a full inflate.
int far(const char* wheel, const char* name, std::uint64_t offset, std::uint64_t length) {
    auto archive = zip::Archive::open(wheel);
    const zip::Member* found = archive.find(name);
    if (!found) {
        std::fprintf(stderr, "%s: no member %s\n", wheel, name);
        return 2;
    }
    ByteRanges ranges;
    ranges.add(offset, offset + length);
    Bytes far_bytes;
    auto start = std::chrono::steady_clock::now();
    auto reader = zip::FarReader::open(archive, *found, offset);
    const double opened = seconds_since(start);
    if (!reader) {
        std::printf("FarReader::open: nullopt after %.3f s\n", opened);
        return 1;
    }
    reader->read(ranges, [&](std::span<const std::uint8_t> chunk, std::uint64_t) { far_bytes.insert(far_bytes.end(), chunk.begin(), chunk.end()); });
    const double took = seconds_since(start);
    const auto& stats = reader->stats();
    std::printf("%s: %llu bytes, %llu compressed\n", name, static_cast<unsigned long long>(found->size),
                static_cast<unsigned long long>(found->compressed_size));
    std::printf("open %.3f s, open + read %.3f s; entries %d, candidates %d, inflated %llu bytes;\n"
                "entry at content %llu (compressed bit %llu), known_from %llu\n",
                opened, took, stats.entries, stats.candidates, static_cast<unsigned long long>(stats.inflated),
                static_cast<unsigned long long>(stats.entry_offset), static_cast<unsigned long long>(stats.entry_bit),
                static_cast<unsigned long long>(reader->known_from()));
    Bytes full_bytes;
    std::uint64_t at = 0;
    archive.stream(*found, [&](std::span<const std::uint8_t> chunk) {
        const std::uint64_t begin = std::max(at, offset), end = std::min(at + chunk.size(), offset + length);
        if (begin < end) full_bytes.insert(full_bytes.end(), chunk.begin() + static_cast<std::ptrdiff_t>(begin - at),
                                           chunk.begin() + static_cast<std::ptrdiff_t>(end - at));
        at += chunk.size();
    });
    const bool same = far_bytes == full_bytes;
    std::printf("%zu bytes read; a full inflate gives %s\n", far_bytes.size(), same ? "the same bytes" : "OTHER BYTES");
    return same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "levels" && argc >= 3) return levels(argv[2], argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 0);
    if (mode == "member" && argc == 4) return member(argv[2], argv[3]);
    if (mode == "inflate" && argc == 5) return inflate_floor(argv[2], argv[3], argv[4]);
    if (mode == "far" && argc == 6)
        return far(argv[2], argv[3], std::strtoull(argv[4], nullptr, 10), std::strtoull(argv[5], nullptr, 10));
    std::fprintf(stderr, "usage: codec_bench levels FILE [MAX_MB] | member WHEEL MEMBER | inflate WHEEL MEMBER isa-l|zlib\n"
                         "       | far WHEEL MEMBER OFFSET LENGTH\n");
    return 2;
}
