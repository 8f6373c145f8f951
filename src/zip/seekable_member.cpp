// SeekableMember: stream once with windows, then inflate any range again from the
// nearest one (seekable_member.hpp has the contract).
#include "wheelfix/zip/seekable_member.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/timings.hpp"

#include "wheelfix/zip/codec.hpp"

#include <algorithm>
#include <memory>
#include <new>
#include <string>

namespace wheelfix::zip {

namespace {

constexpr std::size_t kChunk = std::size_t(256) << 10;

// A raw inflate (zip/codec.hpp) primed to start at `window` (or at the stream's
// start), fed from the member's stored bytes.
class Resumed {
public:
    Resumed(const Archive& archive, const Member& member, const Window* window)
        : archive_(archive), member_(member), raw_(archive.open_raw(member)), input_(kChunk) {
        if (window == nullptr) return;
        const std::uint64_t bit = window->point.compressed_bit;
        const unsigned used = static_cast<unsigned>(bit % 8);  // bits of the boundary byte the previous block took
        raw_.skip_to(bit / 8 + (used != 0 ? 1 : 0));
        inflater_.resume(static_cast<int>(used), window->point.partial_byte, window->dictionary);
        produced_ = window->point.uncompressed;
    }

    std::uint64_t produced() const { return produced_; }

    // Inflates the next bytes into `out`; returns how many (0 only at the stream's end).
    std::size_t next(std::span<std::uint8_t> out) {
        std::size_t count = 0;
        while (count == 0 && !ended_) {
            const bool refilled = refill();
            Inflater::Step step;
            try {
                step = inflater_.inflate(pending_, out);
            } catch (const CodecError& error) {
                fail(error.what());
            }
            pending_ = pending_.subspan(step.consumed);
            count = step.produced;
            ended_ = step.ended;
            if (!ended_ && step.consumed == 0 && step.produced == 0 && pending_.empty() && !refilled)
                fail("truncated compressed data (the deflate stream has no end)");
        }
        produced_ += count;
        return count;
    }

private:
    // More compressed bytes when the last are used; whether any came.
    bool refill() {
        if (!pending_.empty()) return true;
        const std::size_t got = raw_.read(input_);
        pending_ = std::span<const std::uint8_t>(input_.data(), got);
        return got != 0;
    }

    [[noreturn]] void fail(const std::string& problem) const {
        throw InputError(archive_.path().string(), "member " + member_.name + ": " + problem);
    }

    const Archive& archive_;
    const Member& member_;
    RawReader raw_;
    std::vector<std::uint8_t> input_;
    std::span<const std::uint8_t> pending_;  // read, not yet taken by the inflater
    Inflater inflater_;
    std::uint64_t produced_ = 0;
    bool ended_ = false;
};

// Hands the part of `chunk` (inflated bytes from `at` on) inside [begin, end) to the sink.
void deliver(std::span<const std::uint8_t> chunk, std::uint64_t at, std::uint64_t begin, std::uint64_t end,
             const RangeSink& sink) {
    const std::uint64_t from = std::max(begin, at), to = std::min(end, at + chunk.size());
    if (from < to) sink(chunk.subspan(static_cast<std::size_t>(from - at), static_cast<std::size_t>(to - from)), from);
}

}  // namespace

SeekableMember::SeekableMember(const Archive& archive, const Member& member, const InflateSink& sink)
    : archive_(archive), member_(member) {
    auto inflated = inflate_indexed(archive, member, sink, InflateOptions{.window_every = spacing(member.size)});
    size_ = inflated.size;
    windows_ = std::move(inflated.windows);
}

SeekableMember::SeekableMember(const Archive& archive, const Member& member, InflatedMember&& indexed)
    : archive_(archive), member_(member), size_(indexed.size), windows_(std::move(indexed.windows)) {}

const Window* SeekableMember::window_before(std::uint64_t offset) const {
    auto after = std::upper_bound(windows_.begin(), windows_.end(), offset,
                                  [](std::uint64_t at, const Window& window) { return at < window.point.uncompressed; });
    return after == windows_.begin() ? nullptr : &*std::prev(after);
}

std::vector<AccessPoint> SeekableMember::block_starts(std::uint64_t begin, std::uint64_t until) const {
    return index_blocks_from(archive_, member_, window_before(begin), until);
}

std::uint64_t SeekableMember::read(const ByteRanges& ranges, const RangeSink& sink) const {
    if (member_.method != Method::stored) return read_deflated(ranges, sink);
    std::uint64_t read = 0;
    for (const auto& [begin, end] : ranges.ranges()) {
        if (begin >= std::min(end, size_)) continue;
        read_stored(begin, std::min(end, size_), sink);
        read += std::min(end, size_) - begin;
    }
    return read;
}

std::uint64_t SeekableMember::read_deflated(const ByteRanges& ranges, const RangeSink& sink) const {
    const timings::Scope timer(timings::Phase::inflate);
    std::uint64_t inflated = 0;
    std::unique_ptr<Resumed> inflater;
    std::vector<std::uint8_t> out(kChunk);
    std::uint64_t chunk_at = 0;  // `out` holds the inflated bytes [chunk_at, chunk_at + chunk_size)
    std::size_t chunk_size = 0;
    for (auto [begin, end] : ranges.ranges()) {
        end = std::min(end, size_);
        if (begin >= end) continue;
        // Inflate on from the bytes at hand unless a window lies between them and `begin`.
        const Window* window = window_before(begin);
        const std::uint64_t window_at = window != nullptr ? window->point.uncompressed : 0;
        if (!inflater || begin < chunk_at || window_at > chunk_at + chunk_size) {
            inflater = std::make_unique<Resumed>(archive_, member_, window);
            chunk_at = inflater->produced();
            chunk_size = 0;
        }
        while (true) {
            deliver(std::span<const std::uint8_t>(out.data(), chunk_size), chunk_at, begin, end, sink);
            if (chunk_at + chunk_size >= end) break;
            chunk_at = inflater->produced();
            chunk_size = inflater->next(out);
            inflated += chunk_size;
            if (chunk_size == 0) return inflated;  // the stream ended early: the first read would have failed
        }
    }
    return inflated;
}

void SeekableMember::read_stored(std::uint64_t begin, std::uint64_t end, const RangeSink& sink) const {
    RawReader raw = archive_.open_raw(member_);
    raw.skip_to(begin);
    std::vector<std::uint8_t> buffer(static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, end - begin)));
    for (std::uint64_t at = begin; at < end;) {
        auto into = std::span(buffer).first(static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), end - at)));
        const std::size_t got = raw.read(into);
        if (got == 0) break;
        sink(into.first(got), at);
        at += got;
    }
}

}  // namespace wheelfix::zip
