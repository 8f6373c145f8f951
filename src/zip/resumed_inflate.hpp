// A raw inflate of a member's stored bytes from its start or resumed at a deflate
// block boundary inside it: the one loop that decodes a member for Archive::stream,
// again from a Window (zip/seekable_member.hpp), or from a far reader's entry
// (zip/far_read.hpp). Internal to the zip layer.
#pragma once

#include "wheelfix/util/error.hpp"
#include "wheelfix/zip/archive.hpp"
#include "wheelfix/zip/codec.hpp"
#include "wheelfix/zip/seekable_member.hpp"

#include <algorithm>
#include <span>
#include <string>
#include <vector>

namespace wheelfix::zip {

// A raw inflate (zip/codec.hpp) primed to start at `window` (or at the stream's
// start), fed from the member's stored bytes. Corrupt or truncated data is an
// InputError naming the archive and member.
class ResumedInflate {
public:
    ResumedInflate(const Archive& archive, const Member& member, const Window* window)
        : archive_(archive),
          member_(member),
          raw_(archive.open_raw(member)),
          input_(std::clamp<std::uint64_t>(member.compressed_size, 1, kInputChunk)) {
        if (window == nullptr) return;
        raw_.skip_to(inflater_.resume(window->point.compressed_bit, window->point.partial_byte, window->dictionary));
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
    static constexpr std::size_t kInputChunk = std::size_t(256) << 10;

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
inline void deliver_part(std::span<const std::uint8_t> chunk, std::uint64_t at, std::uint64_t begin, std::uint64_t end,
                         const RangeSink& sink) {
    const std::uint64_t from = std::max(begin, at), to = std::min(end, at + chunk.size());
    if (from < to) sink(chunk.subspan(static_cast<std::size_t>(from - at), static_cast<std::size_t>(to - from)), from);
}

}  // namespace wheelfix::zip
