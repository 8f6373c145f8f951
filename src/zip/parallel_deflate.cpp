// parallel_deflate: one raw deflate stream made of independently compressed chunks.
//
// Technique (pigz; mold's lib/compress.cc): deflate output can be joined by plain
// concatenation when every piece but the last ends with a sync flush, which closes
// the current block and pads it to a byte boundary with an empty stored block.
// Each 1 MiB chunk is deflated on its own, primed with the 32 KiB that precede it
// as a dictionary, so matches may still reach back across the cut and the ratio
// stays that of a single stream. The last chunk ends with the final block. The
// deflater is zip/codec.hpp's (ISA-L or zlib, as the caller chooses). The chunking
// does not depend on the thread count, so the output is the same on any machine.
// Helper threads, as many as the thread budget spares (util/thread_budget.hpp),
// take chunks in any order; the caller's thread meanwhile computes the SHA-256
// (which cannot be split), then takes chunks too. The chunk CRCs are joined with
// crc32_combine.
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/thread_budget.hpp"
#include "wheelfix/util/timings.hpp"
#include "wheelfix/zip/splice.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

namespace wheelfix::zip {
namespace {

constexpr std::size_t kChunkSize = std::size_t(1) << 20;
constexpr std::size_t kWindow = std::size_t(32) << 10;

struct Chunk {
    std::span<const std::uint8_t> dictionary;
    std::span<const std::uint8_t> data;
    bool last = false;
    std::vector<std::uint8_t> deflated;
    std::uint32_t crc32 = 0;
};

std::vector<Chunk> split(std::span<const std::uint8_t> data) {
    std::vector<Chunk> chunks;
    std::size_t at = 0;
    do {
        Chunk chunk;
        std::size_t window_start = at - std::min(at, kWindow);
        chunk.dictionary = data.subspan(window_start, at - window_start);
        chunk.data = data.subspan(at, std::min(kChunkSize, data.size() - at));
        at += chunk.data.size();
        chunk.last = at == data.size();
        chunks.push_back(std::move(chunk));
    } while (at < data.size());
    return chunks;
}

void deflate_chunk(Deflater& deflater, Chunk& chunk) {
    const timings::Scope timer(timings::Phase::deflate);
    deflater.start(chunk.dictionary);
    deflater.feed(chunk.data, chunk.deflated);
    deflater.end(chunk.last, chunk.deflated);
    chunk.crc32 = crc32(0, chunk.data);
}

// Runs deflate_chunk over all chunks on `helpers` threads and, once it has hashed
// `data`, the calling thread; rethrows the first failure.
void deflate_all(std::vector<Chunk>& chunks, DeflateChoice choice, std::size_t helpers, Sha256& hash,
                 std::span<const std::uint8_t> data) {
    std::atomic<std::size_t> next{0};
    std::vector<std::exception_ptr> failures(helpers + 1);
    auto work = [&](std::size_t id) {
        try {
            Deflater deflater(choice.backend, choice.level);
            for (std::size_t i; (i = next.fetch_add(1)) < chunks.size();) deflate_chunk(deflater, chunks[i]);
        } catch (...) {
            failures[id] = std::current_exception();
            next = chunks.size();
        }
    };
    {
        std::vector<std::jthread> workers;
        for (std::size_t id = 1; id <= helpers; ++id) workers.emplace_back(work, id);
        hash.update(data);
        work(0);
    }
    for (auto& failure : failures)
        if (failure) std::rethrow_exception(failure);
}

}  // namespace

PrecompressedMember parallel_deflate(std::span<const std::uint8_t> data, DeflateChoice choice, unsigned threads) {
    Deflater(choice.backend, choice.level);  // a bad choice fails here, on the caller's thread
    auto chunks = split(data);
    // The helpers' shares of the thread budget, held until they are joined.
    std::vector<ThreadClaim> claims;
    std::size_t helpers = 0;
    if (threads == 0) {
        claims = try_claim_threads(chunks.size() - 1);
        helpers = claims.size();
    } else {
        helpers = std::min<std::size_t>(threads, chunks.size()) - 1;
    }
    Sha256 hash;
    deflate_all(chunks, choice, helpers, hash, data);

    PrecompressedMember result;
    result.size = data.size();
    result.recompressed_bytes = data.size();
    result.sha256 = hash.digest();
    for (auto& chunk : chunks) {
        result.crc32 = crc32_combine(result.crc32, chunk.crc32, chunk.data.size());
        result.compressed_size += chunk.deflated.size();
        CompressedPiece piece;
        piece.length = chunk.deflated.size();
        piece.bytes = std::move(chunk.deflated);
        result.pieces.push_back(std::move(piece));
    }
    return result;
}

}  // namespace wheelfix::zip
