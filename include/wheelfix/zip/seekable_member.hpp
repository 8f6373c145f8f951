// A member streamed once, then readable again at any offset for the price of a few
// MiB of inflate instead of the whole member (the technique of zlib's
// examples/zran.c). Why: a streaming reader (elf/streamed_elf.hpp) learns which
// ranges of an ELF file it needs from headers that may come last (patchelf, and our
// own editor when a grown table needs a new segment, move them to the file's end).
//
// Contract: SeekableMember(archive, member, sink) streams the member to `sink` as
// inflate_indexed does in streaming mode (chunks in order; size and CRC-32 checked at
// the end; InputError naming archive and member otherwise), recording a Window at the
// first deflate block boundary every spacing() inflated bytes: kMinSpacing, or more
// for members over kMaxWindows * kMinSpacing (1 GiB), so memory stays bounded: at
// most kMaxWindows windows (8 MiB), plus fixed buffers. read(ranges, sink) then
// delivers each range's bytes (clamped to the member) as sink(chunk, offset) in
// order, inflating from the last window at or before a range's start: a range costs
// at most spacing() plus its size, and a thousand small ranges in one sweep cost what
// their span costs. A stored member is read in place. The bytes of a second read are
// not CRC-checked again (only whole reads can be): a file changed between the two
// reads is not detected. The Archive must outlive this.
#pragma once

#include "wheelfix/util/byte_ranges.hpp"
#include "wheelfix/zip/archive.hpp"
#include "wheelfix/zip/inflate_index.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace wheelfix::zip {

using RangeSink = std::function<void(std::span<const std::uint8_t> chunk, std::uint64_t offset)>;

// A stored member's ranges (clamped to its size) read in place, delivered as
// sink(chunk, offset) in order; returns how many bytes were read.
std::uint64_t read_stored(const Archive& archive, const Member& member, const ByteRanges& ranges, const RangeSink& sink);

class SeekableMember {
public:
    static constexpr std::uint64_t kMinSpacing = std::uint64_t(4) << 20;
    static constexpr std::uint64_t kMaxWindows = 256;
    // The distance between windows for a member of `size` inflated bytes (as the
    // central directory declares it).
    static std::uint64_t spacing(std::uint64_t size) { return std::max(kMinSpacing, size / kMaxWindows + 1); }

    SeekableMember(const Archive& archive, const Member& member, const InflateSink& sink);
    // From a read already made: `indexed` came from inflate_indexed of this member
    // with InflateOptions::window_every (its windows and size are taken; the bytes
    // need not have been kept): a big member read once with bounded memory.
    SeekableMember(const Archive& archive, const Member& member, InflatedMember&& indexed);

    // Every range of `ranges`, in order, in one forward sweep: inflating on through
    // a gap, and resuming from a later window only where one lies in the gap.
    // Returns how many bytes were inflated (or read, for a stored member) to do it.
    std::uint64_t read(const ByteRanges& ranges, const RangeSink& sink) const;
    // What read([0, size())) delivers, inflated by several threads at once: the spans
    // between windows are independent, so the caller and the helpers the thread budget
    // spares (util/thread_budget.hpp) each inflate one into a buffer of its own, and
    // whichever finds the next span in order ready hands it to the sink: in order, one
    // call at a time, from any of these threads (each call sees what the earlier ones
    // did). Memory: a few spans' buffers (at most kMaxSpan each: ~5 x 40 MiB with three
    // helpers; a member whose windows lie further apart, over ~10 GB, is read by read()
    // on one thread). A stream that ends before its span does is an InputError naming
    // the member; what the sink throws stops the others and comes out of here.
    void read_all(const RangeSink& sink) const;
    static constexpr std::uint64_t kMaxSpan = std::uint64_t(40) << 20;
    // Every deflate block start from the last window at or before `begin` up to the
    // first at or past `until` (zip::index_blocks_from: zlib, prefix CRCs). A
    // deflated member only (else std::invalid_argument).
    std::vector<AccessPoint> block_starts(std::uint64_t begin, std::uint64_t until) const;
    std::uint64_t size() const { return size_; }
    std::size_t window_count() const { return windows_.size(); }

private:
    const Window* window_before(std::uint64_t offset) const;

    const Archive& archive_;
    const Member& member_;
    std::uint64_t size_ = 0;
    std::vector<Window> windows_;
};

}  // namespace wheelfix::zip
