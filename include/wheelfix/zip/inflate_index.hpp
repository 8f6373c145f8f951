// Inflating a member once while recording where its deflate blocks start.
//
// Contract: inflate_indexed() streams the member's raw (compressed) bytes from the
// archive and inflates them with zlib (raw deflate, Z_BLOCK), calling `sink` with
// each inflated chunk in order (hash it there), keeping the inflated bytes only
// when `keep` is true, and recording every deflate block boundary as an
// AccessPoint (the zran.c technique: the compressed bit offset where a block starts
// and the uncompressed offset it decodes to). The CRC-32 and size are checked
// against the central directory; a mismatch, truncated or corrupt data is an
// InputError naming the archive and member. Stored members have no blocks: their
// index is empty (plan_splice then deflates the new content whole). Each access
// point also keeps the compressed byte its block starts in, whose low bits end the
// previous block: a splice restarting there needs them (deflatePrime) and so never
// re-reads the archive. Each access point also carries the CRC-32 of the inflated
// bytes before it (computed as they pass, not in a second pass), so a splice gets
// the CRC of any unchanged span between access points, or between one and the
// member's end (whose prefix CRC is the member's CRC), with crc32_combine
// arithmetic instead of reading the span. Memory: the kept bytes (if any), the index (24 bytes per
// block, a block is typically 10-100 KB) and fixed buffers — the compressed stream
// is never held whole.
#pragma once

#include "wheelfix/zip/archive.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace wheelfix::zip {

struct AccessPoint {
    std::uint64_t compressed_bit = 0;  // bit offset in the compressed stream where the block starts
    std::uint64_t uncompressed = 0;    // offset in the inflated data the block starts at
    std::uint8_t partial_byte = 0;     // the compressed byte at compressed_bit / 8 (0 when aligned)
    std::uint32_t prefix_crc32 = 0;    // CRC-32 of the inflated bytes [0, uncompressed)
};

struct InflatedMember {
    const Member* member = nullptr;
    std::vector<std::uint8_t> data;       // the inflated bytes when kept, else empty
    std::vector<AccessPoint> blocks;      // in stream order; the first is {0, 0}
    std::uint64_t size = 0;               // inflated size
    std::uint32_t crc32 = 0;
};

InflatedMember inflate_indexed(const Archive& archive, const Member& member,
                               const std::function<void(std::span<const std::uint8_t>)>& sink, bool keep);

}  // namespace wheelfix::zip
