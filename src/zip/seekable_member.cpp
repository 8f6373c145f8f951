// SeekableMember: stream once with windows, then inflate any range again from the
// nearest one (seekable_member.hpp has the contract).
#include "wheelfix/zip/seekable_member.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/thread_budget.hpp"
#include "wheelfix/util/timings.hpp"

#include "resumed_inflate.hpp"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>

namespace wheelfix::zip {

namespace {

constexpr std::size_t kChunk = std::size_t(256) << 10;

// read_all's shared state: spans are taken in order by whichever thread is free,
// inflated into a buffer of their own, and handed to the sink in order by whichever
// thread finds the next one ready while nobody is handing. At most `in_flight`
// spans are taken and not yet handed on (their buffers are the memory).
class OrderedSpans {
public:
    using Inflate = std::function<void(std::size_t span, std::vector<std::uint8_t>& into)>;

    OrderedSpans(std::vector<std::uint64_t> starts, std::uint64_t size, std::size_t in_flight, Inflate inflate,
                 const RangeSink& sink)
        : starts_(std::move(starts)), size_(size), in_flight_(in_flight), inflate_(std::move(inflate)), sink_(sink) {}

    // One thread's share: hand on or inflate until every span is handed on.
    void work() noexcept {
        std::unique_lock lock(mutex_);
        while (!failure_ && handed_ < starts_.size()) {
            if (!handing_ && ready_.contains(handed_)) {
                hand_on(lock);
            } else if (taken_ < starts_.size() && taken_ - handed_ < in_flight_) {
                inflate_next(lock);
            } else {
                changed_.wait(lock);
            }
        }
        changed_.notify_all();
    }

    void rethrow() const {
        if (failure_) std::rethrow_exception(failure_);
    }

private:
    std::uint64_t end_of(std::size_t span) const { return span + 1 < starts_.size() ? starts_[span + 1] : size_; }

    void hand_on(std::unique_lock<std::mutex>& lock) {
        const std::size_t span = handed_;
        auto bytes = std::move(ready_.at(span));
        ready_.erase(span);
        handing_ = true;
        lock.unlock();
        std::exception_ptr failure;
        try {
            sink_(bytes, starts_[span]);
        } catch (...) {
            failure = std::current_exception();
        }
        lock.lock();
        handing_ = false;
        ++handed_;
        spare_.push_back(std::move(bytes));
        fail_with(failure);
        changed_.notify_all();
    }

    void inflate_next(std::unique_lock<std::mutex>& lock) {
        const std::size_t span = taken_++;
        std::vector<std::uint8_t> bytes;
        if (!spare_.empty()) {
            bytes = std::move(spare_.back());
            spare_.pop_back();
        }
        lock.unlock();
        std::exception_ptr failure;
        try {
            bytes.resize(static_cast<std::size_t>(end_of(span) - starts_[span]));
            inflate_(span, bytes);
        } catch (...) {
            failure = std::current_exception();
        }
        lock.lock();
        ready_.emplace(span, std::move(bytes));
        fail_with(failure);
        changed_.notify_all();
    }

    void fail_with(std::exception_ptr failure) {
        if (failure && !failure_) failure_ = failure;
    }

    const std::vector<std::uint64_t> starts_;
    const std::uint64_t size_;
    const std::size_t in_flight_;
    const Inflate inflate_;
    const RangeSink& sink_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::size_t taken_ = 0, handed_ = 0;  // spans taken for inflating, spans handed on
    bool handing_ = false;
    std::map<std::size_t, std::vector<std::uint8_t>> ready_;  // inflated, waiting for their turn
    std::vector<std::vector<std::uint8_t>> spare_;            // buffers handed on, to be filled again
    std::exception_ptr failure_;
};

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

void SeekableMember::read_all(const RangeSink& sink) const {
    std::vector<std::uint64_t> starts{0};
    for (const auto& window : windows_) starts.push_back(window.point.uncompressed);
    bool spans_fit = true;
    for (std::size_t i = 0; i < starts.size(); ++i)
        spans_fit = spans_fit && (i + 1 < starts.size() ? starts[i + 1] : size_) - starts[i] <= kMaxSpan;
    if (member_.method != Method::deflated || !spans_fit || starts.size() == 1) {
        ByteRanges everything;
        everything.add(0, size_);
        read(everything, sink);
        return;
    }
    auto inflate = [&](std::size_t span, std::vector<std::uint8_t>& into) {
        const timings::Scope timer(timings::Phase::inflate);
        ResumedInflate inflater(archive_, member_, span == 0 ? nullptr : &windows_[span - 1]);
        for (std::size_t filled = 0; filled < into.size();) {
            const std::size_t count = inflater.next(std::span(into).subspan(filled));
            if (count == 0)
                throw InputError(archive_.path().string(), "member " + member_.name +
                                                               ": truncated compressed data (the stream ends inside the span read again)");
            filled += count;
        }
    };
    auto helpers = try_claim_threads(3);
    OrderedSpans spans(std::move(starts), size_, helpers.size() + 2, inflate, sink);
    {
        std::vector<std::jthread> threads;
        for (auto& claim : helpers) {
            try {
                threads.emplace_back([&spans, claim = std::move(claim)] { spans.work(); });
            } catch (const std::system_error&) {
                break;  // no thread to be had: the others do its share
            }
        }
        spans.work();
    }
    spans.rethrow();
}

std::uint64_t SeekableMember::read(const ByteRanges& ranges, const RangeSink& sink) const {
    if (member_.method == Method::stored) return read_stored(archive_, member_, ranges, sink);
    const timings::Scope timer(timings::Phase::inflate);
    std::uint64_t inflated = 0;
    std::unique_ptr<ResumedInflate> inflater;
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
            inflater = std::make_unique<ResumedInflate>(archive_, member_, window);
            chunk_at = inflater->produced();
            chunk_size = 0;
        }
        while (true) {
            deliver_part(std::span<const std::uint8_t>(out.data(), chunk_size), chunk_at, begin, end, sink);
            if (chunk_at + chunk_size >= end) break;
            chunk_at = inflater->produced();
            chunk_size = inflater->next(out);
            inflated += chunk_size;
            if (chunk_size == 0) return inflated;  // the stream ended early: the first read would have failed
        }
    }
    return inflated;
}

std::uint64_t read_stored(const Archive& archive, const Member& member, const ByteRanges& ranges, const RangeSink& sink) {
    std::uint64_t read = 0;
    std::vector<std::uint8_t> buffer;
    for (auto [begin, end] : ranges.ranges()) {
        end = std::min(end, member.size);
        if (begin >= end) continue;
        RawReader raw = archive.open_raw(member);
        raw.skip_to(begin);
        buffer.resize(static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, end - begin)));
        for (std::uint64_t at = begin; at < end;) {
            auto into = std::span(buffer).first(static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), end - at)));
            const std::size_t got = raw.read(into);
            if (got == 0) throw InputError(archive.path().string(), "member " + member.name + ": ends early");
            sink(into.first(got), at);
            at += got;
        }
        read += end - begin;
    }
    return read;
}

}  // namespace wheelfix::zip
