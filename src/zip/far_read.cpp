// Bytes far from a deflated member's start without inflating from its start
// (far_read.hpp: the contract, its bounds, and what its answer may be used for).
//
// Entry: from a proportional guess of `lowest`'s compressed offset, with margins
// (guess_entry), the bit offsets of at most kEntryScanBytes compressed bytes are
// tried in order as the start of a deflate block (block_header.hpp: a dynamic header
// zlib would accept, or a stored block's LEN/NLEN; never a fixed-Huffman block, which
// any bits can start). A candidate, inflated after a 32 KiB window of 0x00 bytes
// (counting, not keeping, the output), is the entry when its stream ends exactly at
// the member's last compressed byte having given no more than the member's size: its
// content offset is then size - count. At most kMaxCandidates per entry. A second
// decoder inflates the same bits in lockstep after a window of 0xff bytes: every byte
// that derives from the unknown window differs between the two, and once their last
// 32 KiB agree every later byte does; known_from() is the entry's offset plus the
// count after the last byte that differed. An entry that begins too late teaches the
// next guess, further back; at most kMaxEntries entries.
#include "wheelfix/zip/far_read.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/timings.hpp"
#include "wheelfix/zip/codec.hpp"

#include "block_header.hpp"
#include "resumed_inflate.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace wheelfix::zip {

// File-local, and named so that its names stay apart from other files' in a unity
// build's translation unit.
namespace {
namespace far_search {

using Bytes = std::span<const std::uint8_t>;

constexpr std::size_t kWindow = 32768;
constexpr std::size_t kInputChunk = std::size_t(1) << 20;
constexpr std::size_t kOutputStep = std::size_t(256) << 10;

// A member's compressed bytes from some byte on, in chunks: first what the caller
// already read (`ahead`, the bytes from `from` on), then from a RawReader opened on
// the first call that needs it.
class CompressedFeed {
public:
    CompressedFeed(const Archive& archive, const Member& member, std::uint64_t from, Bytes ahead)
        : archive_(archive), member_(member), ahead_(ahead), next_(from + ahead.size()) {}

    // The next chunk; empty at the end of the member's compressed bytes.
    Bytes next() {
        if (!ahead_.empty()) return std::exchange(ahead_, Bytes{});
        if (next_ >= member_.compressed_size) return {};
        if (!reader_) {
            reader_.emplace(archive_.open_raw(member_));
            reader_->skip_to(next_);
            buffer_.resize(static_cast<std::size_t>(std::min<std::uint64_t>(kInputChunk, member_.compressed_size - next_)));
        }
        const std::size_t got = reader_->read(buffer_);
        next_ += got;
        return Bytes(buffer_.data(), got);
    }

private:
    const Archive& archive_;
    const Member& member_;
    Bytes ahead_;
    std::uint64_t next_;  // compressed offset of the first byte not yet handed out
    std::optional<RawReader> reader_;
    std::vector<std::uint8_t> buffer_;
};

// An inflater resumed at bit `bit` of the compressed bytes, `ahead` holding the
// bytes from byte bit / 8 on, after a window of `fill` bytes. Returns the feed
// positioned after the bit's byte.
CompressedFeed resume_at(Inflater& inflater, const Archive& archive, const Member& member, std::uint64_t bit, Bytes ahead,
                         std::uint8_t fill) {
    const std::vector<std::uint8_t> window(kWindow, fill);
    const auto skip = static_cast<std::size_t>(inflater.resume(bit, ahead.empty() ? 0 : ahead[0], window) - bit / 8);
    return CompressedFeed(archive, member, bit / 8 + skip, ahead.subspan(std::min(skip, ahead.size())));
}

// The last index + 1 at which two equally long buffers differ (0: equal).
std::size_t last_difference(const std::uint8_t* a, const std::uint8_t* b, std::size_t size) {
    constexpr std::size_t kStep = 4096;
    std::size_t end = size;
    while (end >= kStep && std::memcmp(a + end - kStep, b + end - kStep, kStep) == 0) end -= kStep;
    while (end > 0 && a[end - 1] == b[end - 1]) --end;
    return end;
}

struct Budget {
    std::uint64_t inflated;  // bytes both decoders may still produce, every candidate together
    int candidates = FarReader::kMaxCandidates;
};

enum class Outcome { entered, rejected, spent };

// What a candidate that inflated to the stream's exact end, or that the locator
// placed, gave.
struct Entry {
    std::uint64_t bit = 0;         // in the member's compressed bytes
    std::uint64_t count = 0;       // bytes it inflated (to the stream's end, or until located)
    std::uint64_t independent = 0; // count at which the window-independent bytes begin
    std::uint64_t offset = 0;      // the entry's content offset: size - count, or the locator's
    bool located = false;
    std::uint8_t byte = 0;         // the compressed byte `bit` lies in
};

// Hands the locator the window-independent bytes as they come, each piece after
// the last kLocatorOverlap bytes of the ones before (so that what it looks for
// may straddle two steps), and keeps its answer.
class LocatorFeed {
public:
    explicit LocatorFeed(const FarReader::Locator& locate) : locate_(locate) {}

    // bytes: decoded [count, count + size); independent: where such bytes begin.
    std::optional<std::uint64_t> offer(std::span<const std::uint8_t> bytes, std::uint64_t count, std::uint64_t independent) {
        if (!locate_) return std::nullopt;
        if (count + bytes.size() <= independent) return std::nullopt;
        if (count < independent) {
            bytes = bytes.subspan(static_cast<std::size_t>(independent - count));
            count = independent;
        }
        if (carry_end_ != count) carry_.clear();  // not contiguous with what came before
        const std::uint64_t first = count - carry_.size();
        carry_.insert(carry_.end(), bytes.begin(), bytes.end());
        auto found = locate_(carry_, first);
        const std::size_t keep = std::min(carry_.size(), FarReader::kLocatorOverlap);
        carry_.erase(carry_.begin(), carry_.end() - static_cast<std::ptrdiff_t>(keep));
        carry_end_ = count + bytes.size();
        return found;
    }

private:
    const FarReader::Locator& locate_;
    std::vector<std::uint8_t> carry_;
    std::uint64_t carry_end_ = 0;
};

// The ring: the last ring.size() bytes of a decode, byte c of it at ring[c % size].
struct Ring {
    std::vector<std::uint8_t> bytes;
    std::span<std::uint8_t> room(std::uint64_t count) {
        const std::size_t at = static_cast<std::size_t>(count % bytes.size());
        return std::span(bytes).subspan(at, std::min(kOutputStep, bytes.size() - at));
    }
};

// Inflates a candidate entry at `bit` (`ahead`: the compressed bytes from bit / 8
// on, as far as they were read) with a 0x00 window into the ring and, until they
// converge, a 0xff window beside it. The file's head says when it is an entry.
Outcome try_entry(const Archive& archive, const Member& member, std::uint64_t bit, Bytes ahead, Ring& ring, Budget& budget,
                  const FarReader::Locator& locate, FarReader::Stats& stats, Entry& entry) {
    Inflater zeros, ones;
    CompressedFeed feed = resume_at(zeros, archive, member, bit, ahead, 0x00);
    resume_at(ones, archive, member, bit, ahead, 0xff);
    std::vector<std::uint8_t> other(kOutputStep);
    std::uint64_t count = 0, independent = 0;
    bool converged = false;
    Bytes input;
    bool input_left = true;
    LocatorFeed locator(locate);
    ++stats.candidates;
    try {
        while (true) {
            if (input.empty() && input_left) {
                input = feed.next();
                input_left = !input.empty();
            }
            const auto room = ring.room(count);
            const Inflater::Step step = zeros.inflate(input, room);
            if (!converged) {
                const Inflater::Step twin = ones.inflate(input, std::span(other).first(room.size()));
                if (twin.consumed != step.consumed || twin.produced != step.produced || twin.ended != step.ended)
                    return Outcome::rejected;
                const std::size_t differs = last_difference(room.data(), other.data(), step.produced);
                if (differs != 0) independent = count + differs;
            }
            const std::uint64_t cost = step.produced * (converged ? 1u : 2u);
            stats.inflated += cost;
            if (cost > budget.inflated) return Outcome::spent;
            budget.inflated -= cost;
            count += step.produced;
            input = input.subspan(step.consumed);
            if (count > member.size) return Outcome::rejected;
            converged = converged || count - independent >= kWindow;
            if (converged && !step.ended) {
                const auto placed = locator.offer(room.first(step.produced), count - step.produced, independent);
                if (placed && *placed <= member.size && count <= member.size - *placed) {
                    entry = Entry{bit, count, independent, *placed, true, ahead[0]};
                    return Outcome::entered;
                }
            }
            if (step.ended) break;
            if (step.consumed == 0 && step.produced == 0 && (!input.empty() || !input_left))
                return Outcome::rejected;  // stuck, or the stream is cut short
        }
    } catch (const CodecError&) {
        return Outcome::rejected;
    }
    // The stream must end with the member's compressed bytes. Unconverged, the decoders
    // compared every byte: what follows the last difference is independent all the same.
    if (!input.empty() || (input_left && !feed.next().empty())) return Outcome::rejected;
    entry = Entry{bit, count, independent, member.size - count, false, ahead[0]};
    return Outcome::entered;
}

// The compressed offset to enter at for content offset `lowest`: the first time,
// proportional, with a margin on the distance from the start (kFirstGuessMargin)
// or, when that lies closer, on the distance from the end (kTailGuessMargin, plus
// kTailGuessSlack: a member's end, often less compressible than the whole, is
// entered near it); after an entry that began too late, back from it by the
// distance still to go, at the ratio of the bytes after it (of the whole member,
// for an entry the locator placed), with the convergence distance it took as a margin.
std::uint64_t guess_entry(const Member& member, std::uint64_t lowest, const std::optional<Entry>& late) {
    if (!late) {
        const double share = static_cast<double>(lowest) / static_cast<double>(member.size);
        const double proportional = static_cast<double>(member.compressed_size) * share;
        const double to_end = static_cast<double>(member.compressed_size) - proportional;
        const double from_end = static_cast<double>(member.compressed_size) - to_end * FarReader::kTailGuessMargin -
                                static_cast<double>(FarReader::kTailGuessSlack);
        return static_cast<std::uint64_t>(std::max({proportional * FarReader::kFirstGuessMargin, from_end, 0.0}));
    }
    const std::uint64_t at = late->bit / 8;
    const std::uint64_t offset = late->offset;
    const std::uint64_t known = offset + late->independent;
    const double ratio = late->located ? static_cast<double>(member.compressed_size) / static_cast<double>(member.size)
                                       : static_cast<double>(member.compressed_size - at) /
                                             static_cast<double>(std::max<std::uint64_t>(late->count, 1));
    const std::uint64_t content_back = (known - lowest) + late->independent + (std::uint64_t(64) << 10);
    const double back = static_cast<double>(content_back) * ratio * 1.25 + 65536.0;
    return static_cast<double>(at) > back ? at - static_cast<std::uint64_t>(back) : 0;
}

// The first candidate from compressed byte `from` on that is an entry.
Outcome find_entry(const Archive& archive, const Member& member, std::uint64_t from, Ring& ring, Budget& budget,
                   const FarReader::Locator& locate, FarReader::Stats& stats, Entry& entry) {
    std::vector<std::uint8_t> ahead;
    {
        const timings::Scope scope(timings::Phase::read);
        ahead.resize(static_cast<std::size_t>(std::min<std::uint64_t>(kInputChunk + FarReader::kEntryScanBytes,
                                                                      member.compressed_size - from)));
        RawReader reader = archive.open_raw(member);
        reader.skip_to(from);
        if (reader.read(ahead) != ahead.size()) return Outcome::rejected;
    }
    const timings::Scope scope(timings::Phase::inflate);
    const Bytes scanned(ahead);
    const std::uint64_t scan_end = 8 * std::min<std::uint64_t>(scanned.size(), FarReader::kEntryScanBytes);
    for (std::uint64_t at = 0; at < scan_end; ++at) {
        if (!block_header::could_start_block(scanned, at)) continue;
        if (budget.candidates-- <= 0) return Outcome::rejected;
        const Outcome outcome = try_entry(archive, member, 8 * from + at, scanned.subspan(static_cast<std::size_t>(at / 8)), ring,
                                          budget, locate, stats, entry);
        if (outcome != Outcome::rejected) return outcome;
    }
    return Outcome::rejected;
}

}  // namespace far_search
}  // namespace

std::optional<FarReader> FarReader::open(const Archive& archive, const Member& member, std::uint64_t lowest,
                                         const Locator& locate) {
    return open_from(archive, member, lowest, locate, std::nullopt);
}

std::optional<FarReader> FarReader::open_from(const Archive& archive, const Member& member, std::uint64_t lowest,
                                              const Locator& locate, std::optional<std::uint64_t> first_from) {
    lowest = std::min(lowest, member.size);
    FarReader reader(archive, member);
    if (member.method == Method::stored) return reader;
    if (lowest == member.size) {  // nothing to read: every range clamps to empty
        reader.known_from_ = reader.entry_offset_ = reader.ring_begin_ = reader.decoded_end_ = member.size;
        return reader;
    }
    far_search::Ring ring;
    // No more than the stream can give (deflate's limit is 1032 bytes out per byte in):
    // a size that lies costs no memory.
    constexpr std::uint64_t kMaxRatio = 1032;
    const std::uint64_t can_give = member.compressed_size < kRing ? member.compressed_size * kMaxRatio + 1 : kRing;
    const std::uint64_t span = member.size - lowest;
    // A cache of the decode's end: no bigger than what lies from `lowest` on (a
    // read near the end needs little), nor so small that it cuts inflate steps short.
    ring.bytes.resize(static_cast<std::size_t>(std::min({kRing, std::max(span, kMinRing), member.size, can_give})));
    // A zip64 size may be anything: saturate.
    far_search::Budget budget{span < (std::uint64_t(1) << 62) ? 2 * span + kBudgetSlack : ~std::uint64_t(0)};
    std::optional<far_search::Entry> late;
    for (int entries = 0; entries < kMaxEntries; ++entries) {
        const std::uint64_t from = entries == 0 && first_from ? *first_from : far_search::guess_entry(member, lowest, late);
        if (late && from >= late->bit / 8) return std::nullopt;
        budget.candidates = kMaxCandidates;
        ++reader.stats_.entries;
        far_search::Entry entry;
        if (far_search::find_entry(archive, member, from, ring, budget, locate, reader.stats_, entry) !=
            far_search::Outcome::entered)
            return std::nullopt;
        const std::uint64_t offset = entry.offset;
        if (offset + entry.independent > lowest) {
            late = entry;
            continue;
        }
        reader.known_from_ = offset + entry.independent;
        reader.entry_bit_ = entry.bit;
        reader.entry_offset_ = offset;
        reader.entry_byte_ = entry.byte;
        reader.decoded_end_ = offset + entry.count;
        reader.ring_begin_ = reader.decoded_end_ - std::min<std::uint64_t>(entry.count, ring.bytes.size());
        reader.ring_ = std::move(ring.bytes);
        reader.stats_.entry_offset = offset;
        reader.stats_.entry_bit = entry.bit;
        reader.stats_.located = entry.located;
        return reader;
    }
    return std::nullopt;
}

std::optional<FarReader> FarReader::open_confirmed(const Archive& archive, const Member& member, std::uint64_t lowest) {
    lowest = std::min(lowest, member.size);
    if (member.size - lowest > kRing) return std::nullopt;
    // A first entry closer to the end than open()'s (kConfirmedTailSlack): the
    // confirmation decodes as far again.
    const double to_end = static_cast<double>(member.compressed_size) * static_cast<double>(member.size - lowest) /
                          std::max(1.0, static_cast<double>(member.size));
    const double first = static_cast<double>(member.compressed_size) - to_end * kTailGuessMargin -
                         static_cast<double>(kConfirmedTailSlack);
    auto near = open_from(archive, member, lowest, {}, static_cast<std::uint64_t>(std::max(first, 0.0)));
    if (!near || member.method == Method::stored || lowest == member.size) return near;
    if (near->entry_offset_ == 0) return std::nullopt;
    // The second entry: scanned for from as far before the first as the first lies
    // before the end (in compressed bytes). Bits that only look like a block header
    // almost never inflate to the stream's exact end; if they did and then fell into
    // step with the real blocks, a decode from a real boundary further back disagrees.
    const std::uint64_t near_byte = near->entry_bit_ / 8, back = member.compressed_size - near_byte;
    const auto far = open_from(archive, member, lowest, {}, near_byte > back ? near_byte - back : 0);
    if (!far || far->entry_bit_ >= near->entry_bit_) return std::nullopt;
    // Both serve [lowest, size) from memory (their rings hold at least that much).
    ByteRanges span;
    span.add(lowest, member.size);
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(member.size - lowest));
    near->read(span, [&](std::span<const std::uint8_t> chunk, std::uint64_t at) {
        std::copy(chunk.begin(), chunk.end(), bytes.begin() + static_cast<std::ptrdiff_t>(at - lowest));
    });
    bool agree = true;
    far->read(span, [&](std::span<const std::uint8_t> chunk, std::uint64_t at) {
        agree = agree && std::equal(chunk.begin(), chunk.end(), bytes.begin() + static_cast<std::ptrdiff_t>(at - lowest));
    });
    if (!agree) return std::nullopt;
    return near;
}

void FarReader::read(const ByteRanges& ranges, const RangeSink& sink) const {
    const std::uint64_t size = member_->size;
    for (const auto& [begin, end] : ranges.ranges())
        if (begin < std::min(end, size) && begin < known_from_)
            throw std::invalid_argument("FarReader::read: range at " + std::to_string(begin) + " starts before " +
                                        std::to_string(known_from_));
    if (member_->method == Method::stored) {
        read_stored(*archive_, *member_, ranges, sink);
        return;
    }
    // In order: what lies before the ring inflated again from the entry, then the
    // ring's; with anything past where the decode stopped, all in one sweep.
    std::vector<ByteRanges::Range> all, swept, in_ring;
    for (auto [begin, end] : ranges.ranges()) {
        end = std::min(end, size);
        if (begin >= end) continue;
        all.emplace_back(begin, end);
        if (begin < ring_begin_) swept.emplace_back(begin, std::min(end, ring_begin_));
        if (end > ring_begin_) in_ring.emplace_back(std::max(begin, ring_begin_), end);
    }
    if (!all.empty() && all.back().second > decoded_end_) return read_by_sweep(all, sink);
    if (!swept.empty()) read_by_sweep(swept, sink);
    for (auto [begin, end] : in_ring) {
        while (begin < end) {
            const auto at = static_cast<std::size_t>((begin - entry_offset_) % ring_.size());
            const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(end - begin, ring_.size() - at));
            sink(std::span<const std::uint8_t>(ring_.data() + at, count), begin);
            begin += count;
        }
    }
}

// One sweep from the entry, with the same 0x00 window as open()'s decode (so the
// same bytes), delivering the parts of `parts` (sorted, outside the ring).
void FarReader::read_by_sweep(const std::vector<ByteRanges::Range>& parts, const RangeSink& sink) const {
    const timings::Scope scope(timings::Phase::inflate);
    const Window entry{{entry_bit_, entry_offset_, entry_byte_, 0}, std::vector<std::uint8_t>(far_search::kWindow, 0x00)};
    ResumedInflate inflater(*archive_, *member_, &entry);
    std::vector<std::uint8_t> out(far_search::kOutputStep);
    for (std::size_t part = 0; part < parts.size();) {
        const std::uint64_t at = inflater.produced();
        const std::size_t count = inflater.next(out);
        if (count == 0)
            throw InputError(archive_->path().string(), "member " + member_->name + ": the stream ends before the bytes read again");
        const std::span<const std::uint8_t> chunk(out.data(), count);
        for (; part < parts.size() && parts[part].first < at + count; ++part) {
            deliver_part(chunk, at, parts[part].first, parts[part].second, sink);
            if (parts[part].second > at + count) break;
        }
    }
}

}  // namespace wheelfix::zip
