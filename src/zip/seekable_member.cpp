// SeekableMember: stream once with windows, then inflate any range again from the
// nearest one (seekable_member.hpp has the contract).
#include "wheelfix/zip/seekable_member.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/timings.hpp"

#include <zlib.h>

#include <algorithm>
#include <memory>
#include <new>
#include <string>

namespace wheelfix::zip {

namespace {

constexpr std::size_t kChunk = std::size_t(256) << 10;

// A raw inflate primed to start at `window` (or at the stream's start), fed from
// the member's stored bytes.
class Resumed {
public:
    Resumed(const Archive& archive, const Member& member, const Window* window)
        : archive_(archive), member_(member), raw_(archive.open_raw(member)), input_(kChunk) {
        if (inflateInit2(&stream_, -MAX_WBITS) != Z_OK) throw std::bad_alloc();
        if (window == nullptr) return;
        const std::uint64_t bit = window->point.compressed_bit;
        const unsigned used = static_cast<unsigned>(bit % 8);  // bits of the boundary byte the previous block took
        raw_.skip_to(bit / 8 + (used != 0 ? 1 : 0));
        if (used != 0 && inflatePrime(&stream_, static_cast<int>(8 - used), window->point.partial_byte >> used) != Z_OK)
            fail("cannot resume inflating (inflatePrime)");
        if (inflateSetDictionary(&stream_, window->dictionary.data(), static_cast<uInt>(window->dictionary.size())) != Z_OK)
            fail("cannot resume inflating (inflateSetDictionary)");
        produced_ = window->point.uncompressed;
    }
    ~Resumed() { inflateEnd(&stream_); }
    Resumed(const Resumed&) = delete;
    Resumed& operator=(const Resumed&) = delete;

    std::uint64_t produced() const { return produced_; }

    // Inflates the next bytes into `out`; returns how many (0 only at the stream's end).
    std::size_t next(std::span<std::uint8_t> out) {
        stream_.next_out = out.data();
        stream_.avail_out = static_cast<uInt>(out.size());
        while (stream_.avail_out == out.size() && !ended_) {
            refill();
            const uInt in_before = stream_.avail_in;
            const int status = inflate(&stream_, Z_NO_FLUSH);
            ended_ = status == Z_STREAM_END;
            if (status == Z_BUF_ERROR && stream_.avail_in == 0 && in_before == 0)
                fail("truncated compressed data (the deflate stream has no end)");
            if (status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR)
                fail(std::string("corrupt compressed data (") + (stream_.msg ? stream_.msg : "inflate failed") + ")");
        }
        const std::size_t count = out.size() - stream_.avail_out;
        produced_ += count;
        return count;
    }

private:
    void refill() {
        if (stream_.avail_in != 0) return;
        const std::size_t got = raw_.read(input_);
        stream_.next_in = input_.data();
        stream_.avail_in = static_cast<uInt>(got);
    }

    [[noreturn]] void fail(const std::string& problem) const {
        throw InputError(archive_.path().string(), "member " + member_.name + ": " + problem);
    }

    const Archive& archive_;
    const Member& member_;
    RawReader raw_;
    std::vector<std::uint8_t> input_;
    z_stream stream_{};
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
