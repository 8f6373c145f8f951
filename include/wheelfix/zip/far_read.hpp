// Bytes far from a deflated member's start without inflating from its start: the
// one way wheelfix enters a deflate stream in its middle.
//
// Why: what a loader reads of an ELF library lies far from the file's start
// (PT_DYNAMIC and the section headers, after hundreds of MB of nvcc's device code),
// and inflating from the start to reach them is most of a full inflate (1.1 s with
// ISA-L for an 852 MB member). A FarReader enters the stream a margin before a guess
// of where they lie and decodes to the end, or, with a locator that recognizes what
// it looks for (elf/dynamic_array.hpp), to there only (far_read.cpp: how).
//
// Contract: FarReader::open(archive, member, lowest, locate) returns a reader for the
// member's content from known_from() <= lowest on, or nullopt when that cannot be had
// for about the cost of inflating from a little before `lowest` to the member's end:
// the caller then reads the member from its start, as it would have without this. A
// stored member is read in place (known_from() 0). The Archive and the Member must
// outlive the reader; read() is const and keeps no state between calls (threads may
// share a reader).
//   - `locate` is handed the decoded bytes that do not depend on the unknown window
//     before the entry (after the last kLocatorOverlap bytes of those before them),
//     with their decode position; when it names the entry's content offset (one that
//     leaves the bytes decoded within the size), the decode stops there, and ranges
//     past it are inflated again from the entry. A locator that names nothing changes
//     nothing; its answer is trusted as the end-of-stream count is.
//   - The last kRing bytes decoded are kept (fewer when the member's bytes from
//     `lowest` on are fewer: kMinRing at least, the member at most): read() serves
//     ranges there from memory (in_memory()) and inflates the others again from the
//     entry, in one sweep.
//   - Bounded whatever the bytes: one open() inflates at most 2 x (size - lowest) +
//     kBudgetSlack bytes in all (a budget spent is nullopt); memory is the ring plus
//     a few MiB of buffers. Random bytes and cut streams give nullopt; so does a
//     central directory size smaller than a decode from the entry gives, or so much
//     larger that no entry's offset reaches back to `lowest`. A size that lies by less
//     shifts every offset by the lie: nothing short of a whole read can tell. A file
//     that cannot be read is InputError. Inflated bytes count in --timings' inflate
//     phase, the work in its inflate and read scopes.
//   - The bytes are not CRC-checked (only a whole read can be), and a false entry
//     that happened to inflate to the stream's exact end would give wrong bytes:
//     open()'s answer is for a caller that checks it against the real pass
//     afterwards, never where the member's integrity is the question.
//
// open_confirmed(archive, member, lowest) is for a caller that uses the bytes without
// such a check: open() without a locator (a first guess nearer the end:
// kConfirmedTailSlack), for a span the ring holds (size - lowest <= kRing, else
// nullopt), confirmed by a second entry further back, which must begin at an earlier
// bit and give the same bytes from `lowest` to the end. An entry at content offset 0
// has nothing before it to confirm it: nullopt. A stored member needs no confirmation.
#pragma once

#include "wheelfix/util/byte_ranges.hpp"
#include "wheelfix/zip/archive.hpp"
#include "wheelfix/zip/seekable_member.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace wheelfix::zip {

class FarReader {
public:
    static constexpr double kFirstGuessMargin = 0.9;
    static constexpr double kTailGuessMargin = 2.0;
    static constexpr std::uint64_t kTailGuessSlack = std::uint64_t(1) << 20;       // compressed bytes
    static constexpr std::uint64_t kConfirmedTailSlack = std::uint64_t(256) << 10; // open_confirmed's
    static constexpr std::size_t kLocatorOverlap = std::size_t(64) << 10;          // bytes a locator sees again
    static constexpr std::uint64_t kEntryScanBytes = std::uint64_t(2) << 20;  // compressed bytes scanned per entry
    static constexpr int kMaxCandidates = 64;                                 // candidates inflated per entry
    static constexpr int kMaxEntries = 3;
    static constexpr std::uint64_t kRing = std::uint64_t(16) << 20;           // last bytes kept in memory, at most
    static constexpr std::uint64_t kMinRing = std::uint64_t(1) << 20;         // ... and at least (or the member)
    static constexpr std::uint64_t kBudgetSlack = std::uint64_t(64) << 20;    // inflated beyond 2 x (size - lowest)

    // Where decoded bytes lie: given the window-independent bytes from decode
    // position `count` on (position 0: the entry), the entry's content offset when
    // it recognizes them, else nullopt.
    using Locator = std::function<std::optional<std::uint64_t>(std::span<const std::uint8_t> bytes, std::uint64_t count)>;

    static std::optional<FarReader> open(const Archive& archive, const Member& member, std::uint64_t lowest,
                                         const Locator& locate = {});
    static std::optional<FarReader> open_confirmed(const Archive& archive, const Member& member, std::uint64_t lowest);

    // The first content offset read() can give (<= the `lowest` open() was given).
    std::uint64_t known_from() const { return known_from_; }
    // Whether read() serves [begin, end) from memory, without inflating again.
    bool in_memory(std::uint64_t begin, std::uint64_t end) const {
        return member_->method == Method::stored || (begin >= ring_begin_ && end <= decoded_end_);
    }
    // Delivers each range (clamped to the member's size; every non-empty range must
    // start at or after known_from(), else std::invalid_argument before anything is
    // delivered) as sink(chunk, offset), in order.
    void read(const ByteRanges& ranges, const RangeSink& sink) const;

    // What open() did, for tests and codec_bench: entries tried, candidates
    // inflated, bytes inflated by both decoders together.
    struct Stats {
        int entries = 0;
        int candidates = 0;
        std::uint64_t inflated = 0;
        std::uint64_t entry_offset = 0;  // content offset of the kept entry
        std::uint64_t entry_bit = 0;     // its bit offset in the compressed bytes
        bool located = false;            // the locator placed it (its decode stopped there)
    };
    const Stats& stats() const { return stats_; }

private:
    FarReader(const Archive& archive, const Member& member) : archive_(&archive), member_(&member) {}
    // open(), its first entry scanned for from compressed byte `first_from` when given.
    static std::optional<FarReader> open_from(const Archive& archive, const Member& member, std::uint64_t lowest,
                                              const Locator& locate, std::optional<std::uint64_t> first_from);
    void read_by_sweep(const std::vector<ByteRanges::Range>& parts, const RangeSink& sink) const;

    const Archive* archive_;
    const Member* member_;
    std::uint64_t known_from_ = 0;
    std::uint64_t entry_bit_ = 0;     // where the entry block starts in the compressed bytes
    std::uint64_t entry_offset_ = 0;  // its content offset
    std::uint8_t entry_byte_ = 0;     // the compressed byte entry_bit_ lies in
    std::uint64_t ring_begin_ = 0;    // content offset of the ring's first byte
    std::uint64_t decoded_end_ = 0;   // and past its last: the member's size, or where a located decode stopped
    // The last bytes of the entry's decode, circular: content offset x at (x - entry_offset_) % ring_.size().
    std::vector<std::uint8_t> ring_;
    Stats stats_;
};

}  // namespace wheelfix::zip
