// Inflating a member once while recording where its deflate blocks start.
//
// Contract: inflate_indexed() inflates the member's raw bytes (Archive::open_raw)
// with the codec (zip/codec.hpp), calling `sink` (when given) with each inflated
// chunk in order, and records deflate block boundaries as AccessPoints (the zran.c
// technique). zlib finds every boundary; ISA-L one at least every ~1 MiB of output
// (fed short slices until it stands at one), so a splice re-deflates a little more
// around an edit and windows lie a little further apart, for an inflate 1.4x
// faster: index_backend() picks. The CRC-32 and size are checked against the central
// directory; a mismatch, truncated or corrupt data is an InputError naming the
// archive and member. Stored members have no blocks (plan_splice then deflates the
// new content whole). An access point's partial byte lets a splice restarting there
// prime deflate (deflatePrime) without re-reading the archive, and its prefix CRC
// gives the CRC of any unchanged span between access points, or to the member's end,
// by crc32_combine instead of reading the span. Every byte is CRC'd exactly once.
//
// With InflateOptions::keep the bytes are inflated straight into InflatedMember::data,
// sized once: they never move while the inflate runs. From kFollowedFrom bytes on, when
// the thread budget spares a share (util/thread_budget.hpp), a second thread works
// beside the inflate: for a kept member it digests (CRC-32, prefix CRCs, SHA-256) the
// bytes as they become final and prefaults the pages just ahead; for a streamed one it
// runs the SHA-256 and the `sink` calls (zip/sink_pipeline.hpp; the CRC-32 stays on
// the inflating thread), the sink then called from that thread, in order, one call at
// a time. That thread belongs to the call: it is joined before inflate_indexed returns
// or throws, and its failure, or the sink's, comes out of inflate_indexed. Otherwise
// everything is digested on the calling thread as the bytes pass.
//
// Memory: the kept bytes (if any), the index (24 bytes per block, a block is
// typically 10-100 KB) and fixed buffers — the compressed stream is never held
// whole.
#pragma once

#include "wheelfix/util/sha256.hpp"
#include "wheelfix/zip/archive.hpp"
#include "wheelfix/zip/codec.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace wheelfix::zip {

struct AccessPoint {
    std::uint64_t compressed_bit = 0;  // bit offset in the compressed stream where the block starts
    std::uint64_t uncompressed = 0;    // offset in the inflated data the block starts at
    std::uint8_t partial_byte = 0;     // the compressed byte at compressed_bit / 8 (0 when aligned)
    std::uint32_t prefix_crc32 = 0;    // CRC-32 of the inflated bytes [0, uncompressed)
};

// An allocator whose value-less construct() leaves the bytes as they are: resizing
// a vector for bytes about to be written over does not zero (and so touch) them.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
    template <typename U>
    struct rebind {
        using other = UninitializedAllocator<U>;
    };
    UninitializedAllocator() = default;
    template <typename U>
    UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}

    template <typename U>
    void construct(U* at) noexcept(std::is_nothrow_default_constructible_v<U>) {
        ::new (static_cast<void*>(at)) U;
    }
    template <typename U, typename... Args>
    void construct(U* at, Args&&... args) {
        ::new (static_cast<void*>(at)) U(std::forward<Args>(args)...);
    }
};

using InflatedBytes = std::vector<std::uint8_t, UninitializedAllocator<std::uint8_t>>;

// An access point with the inflated bytes just before it (deflate's 32 KiB window,
// fewer at the start): enough to resume inflating there (zip/seekable_member.hpp).
// Its point is one of the member's blocks, prefix CRC included.
struct Window {
    AccessPoint point;
    std::vector<std::uint8_t> dictionary;
};

struct InflatedMember {
    const Member* member = nullptr;
    InflatedBytes data;                   // the inflated bytes with InflateOptions::keep, else empty
    std::vector<AccessPoint> blocks;      // in stream order; the first is {0, 0}
    std::vector<Window> windows;          // with InflateOptions::window_every, ascending
    std::uint64_t size = 0;               // inflated size
    std::uint32_t crc32 = 0;
    std::optional<std::array<std::uint8_t, 32>> sha256;  // with InflateOptions::sha256
};

struct InflateOptions {
    bool keep = false;    // keep the inflated bytes in InflatedMember::data
    bool sha256 = false;  // compute InflatedMember::sha256
    // When not 0: a Window at the first block start at least this many inflated
    // bytes past the previous one (32 KiB each; none for stored members).
    std::uint64_t window_every = 0;
    // Which inflater indexes the member: zlib finds every block start, ISA-L one at
    // least every ~512 KiB (zip/codec.hpp). Unset: index_backend() decides.
    std::optional<Backend> backend = std::nullopt;
    // Streaming to a sink on a second thread: how many bytes it may fall behind the
    // inflate, queued, before the inflate waits for it (zip/sink_pipeline.hpp). 0:
    // two buffers. For a sink that starts with work of its own (sink_start).
    std::uint64_t sink_may_lag = 0;
    // The same sink as inflate_indexed's `sink`, that also feeds each chunk it is
    // handed to the member's SHA-256 (the second argument), pairing that hash with
    // its own (Sha256::update_pair). With sha256 and a pipeline, the pass hands it
    // the chunks whose SHA-256 no thread has begun (SinkPipeline's fused job), and
    // `sink` the others. For a sink that hashes an edited copy of the member.
    std::function<void(std::span<const std::uint8_t>, Sha256&)> sink_hashing = {};
    // The sink's own work before its first chunk (its start job): on the
    // pipeline's thread while the inflate goes on, the chunks queuing for it (up
    // to sink_may_lag), else right before the sink's first call.
    std::function<void()> sink_start = {};
};

// Kept members (the ones a splice re-deflates around edits) are indexed by zlib: for
// a start every 256 KiB ISA-L's short slices cost more than its faster inflate saves
// (docs/decisions.md, "Compression backends"). Streams: the default backend.
Backend index_backend(const InflateOptions& options);

// Kept members from this size on are digested on a second thread (see above).
inline constexpr std::uint64_t kFollowedFrom = std::uint64_t(4) << 20;

using InflateSink = std::function<void(std::span<const std::uint8_t>)>;

InflatedMember inflate_indexed(const Archive& archive, const Member& member, const InflateSink& sink,
                               InflateOptions options);
// Every block start of the member from `from` (a window of this member's index;
// null: the stream's start) on, up to and including the first at or past inflated
// offset `until` (or to the stream's end), found by zlib (which stops at every one),
// each with its prefix CRC continuing from from->point.prefix_crc32; the first is
// `from`'s own point. An index whose inflater recorded only some block starts (ISA-L:
// one per window) gets the exact ones where a splice needs them (zip/splice.hpp)
// for the price of inflating from the window before them: the member's first read
// can run at ISA-L's speed. The bytes are not checked against the member's CRC-32
// (only a whole read can be); a corrupt stream is an InputError as above.
std::vector<AccessPoint> index_blocks_from(const Archive& archive, const Member& member, const Window* from,
                                           std::uint64_t until);

}  // namespace wheelfix::zip
