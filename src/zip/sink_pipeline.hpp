// SinkPipeline: hands inflated chunks to sinks on a second thread, so the sinks'
// work (SHA-256 for RECORD, copying an ELF image, writing a file) overlaps the
// inflate of the next chunk instead of following it.
//
// Contract: the producer asks for room() (a buffer of `chunk` bytes it may fill),
// then deliver(count) hands the first `count` bytes on and returns; room() is then
// the next buffer. Two sinks see every chunk, each in order, one call at a time:
// - `sink` runs on the helper thread when the thread budget (util/thread_budget.hpp)
//   spares one, else on the producer's thread right inside deliver();
// - `shared` (optional; the caller keeps it, as it keeps `sink`) is work of its own
//   order (a second SHA-256) that either thread runs: the helper when it has caught
//   up with `sink`, the producer when it would otherwise wait (for a free buffer,
//   or in finish()). Without a helper it runs inside deliver(), before `sink`;
// - `fused` (optional, with `shared`; kept by the caller too) does both on one
//   chunk in one call (a sink that hashes an edited copy of the member pairs that
//   hash with the member's own: Sha256::update_pair). While the producer is busy, the
//   helper runs it on a chunk whose `shared` no thread has begun, in place of
//   the two; so does deliver() without a helper. Other chunks get `sink` alone
//   (the producer, waiting, runs their `shared`: two threads beat one pairing).
// - `start` (optional) is the sink's own work before its first chunk (a start job,
//   e.g. planning what to do with the bytes): the helper runs it first, holding nothing, so that the
//   producer goes on inflating and hashes what queues meanwhile; without a
//   helper, the first deliver() runs it.
// finish() waits until both have seen everything. A sink that throws stops the
// pipeline: the exception is rethrown by the next deliver() or by finish(), on the
// producer's thread. Destruction without finish() abandons what is queued and joins.
// Buffers: two (the producer fills one while the sinks read the other); with
// `may_lag` bytes, sinks that lag (one busy with its start job before its first
// chunk) have up to that many more bytes queued for them, in buffers made only
// when the producer would otherwise wait, before the producer waits.
#pragma once

#include "wheelfix/util/thread_budget.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <utility>
#include <vector>

namespace wheelfix::zip {

// SinkPipeline's optional jobs beside `sink` (each null or empty: none); the caller keeps them.
struct SinkJobs {
    const std::function<void(std::span<const std::uint8_t>)>* shared = nullptr;
    const std::function<void(std::span<const std::uint8_t>)>* fused = nullptr;
    const std::function<void()>* start = nullptr;
};

class SinkPipeline {
public:
    using Sink = std::function<void(std::span<const std::uint8_t>)>;
    using Start = std::function<void()>;
    using Jobs = SinkJobs;

    SinkPipeline(const Sink& sink, std::size_t chunk, bool overlap, std::uint64_t may_lag = 0, Jobs jobs = {})
        : sink_(sink),
          shared_(jobs.shared && *jobs.shared ? jobs.shared : nullptr),
          fused_(shared_ && jobs.fused && *jobs.fused ? jobs.fused : nullptr),
          start_(jobs.start && *jobs.start ? jobs.start : nullptr),
          chunk_(chunk),
          max_buffers_(2 + static_cast<std::size_t>(may_lag / std::max<std::size_t>(chunk, 1))) {
        filling_.resize(chunk);
        if (!overlap) return;
        claim_ = try_claim_thread();
        if (!claim_) return;
        free_.emplace_back(chunk);
        buffers_ = 2;
        try {
            thread_ = std::thread([this] { run(); });
        } catch (const std::system_error&) {
            claim_.reset();
        }
    }
    ~SinkPipeline() { stop(false); }
    SinkPipeline(const SinkPipeline&) = delete;
    SinkPipeline& operator=(const SinkPipeline&) = delete;

    std::span<std::uint8_t> room() { return filling_; }
    // Whether the sinks run on a thread of their own (false: inside deliver()).
    bool overlapped() const { return thread_.joinable(); }

    void deliver(std::size_t count) {
        if (count == 0) return;
        if (!thread_.joinable()) {
            const auto bytes = std::span<const std::uint8_t>(filling_.data(), count);
            if (start_) std::exchange(start_, nullptr)->operator()();
            if (fused_) {
                (*fused_)(bytes);
                return;
            }
            if (shared_) (*shared_)(bytes);
            sink_(bytes);
            return;
        }
        std::unique_lock lock(mutex_);
        if (failure_) std::rethrow_exception(failure_);
        queued_.push_back({std::move(filling_), count});
        changed_.notify_all();
        // The next room: a buffer both sinks are done with, a new one while the lag
        // allows, else one to wait for.
        if (free_.empty() && buffers_ < max_buffers_) {
            ++buffers_;
            lock.unlock();
            filling_.resize(chunk_);
            return;
        }
        help_until(lock, [&] { return !free_.empty(); });
        filling_ = std::move(free_.back());
        free_.pop_back();
    }

    void finish() { stop(true); }

private:
    struct Queued {
        std::vector<std::uint8_t> bytes;
        std::size_t count;
    };

    // Chunks are numbered from 0 as delivered; queued_ holds base_ on (under mutex_).
    std::uint64_t delivered() const { return base_ + queued_.size(); }
    std::span<const std::uint8_t> chunk(std::uint64_t index) const {
        const Queued& queued = queued_[static_cast<std::size_t>(index - base_)];
        return std::span<const std::uint8_t>(queued.bytes.data(), queued.count);
    }
    std::uint64_t seen_by_both() const { return shared_ ? std::min(sunk_, shared_done_) : sunk_; }

    // Frees the buffers both sinks are done with (under mutex_).
    void release_seen() {
        while (base_ < seen_by_both()) {
            free_.push_back(std::move(queued_.front().bytes));
            queued_.pop_front();
            ++base_;
        }
    }

    // Runs one call of `job` (`sink`, `shared` or `fused`) on chunk `index`, the lock
    // let go meanwhile; a throw becomes failure_. Under mutex_ before and after.
    bool run_one(std::unique_lock<std::mutex>& lock, const Sink& job, std::uint64_t index) {
        const auto bytes = chunk(index);
        lock.unlock();
        std::exception_ptr thrown;
        try {
            job(bytes);
        } catch (...) {
            thrown = std::current_exception();
        }
        lock.lock();
        if (thrown) failure_ = thrown;
        changed_.notify_all();
        return !thrown;
    }

    // Runs `shared` on the oldest chunk it has not seen, if it is free to (under mutex_).
    bool claim_shared(std::unique_lock<std::mutex>& lock) {
        if (!shared_ || shared_busy_ || shared_done_ == delivered() || failure_) return false;
        shared_busy_ = true;
        const bool done = run_one(lock, *shared_, shared_done_);
        shared_busy_ = false;
        if (done) {
            ++shared_done_;
            release_seen();
        }
        return true;  // run_one notified, under the lock these changes are made under
    }

    // The producer: waits until `done`, running `shared` meanwhile when it can; a
    // failure of either sink is rethrown here.
    template <typename Done>
    void help_until(std::unique_lock<std::mutex>& lock, Done done) {
        producer_idle_ = true;  // under mutex_ whenever it is looked at
        struct Busy {
            bool& idle;
            ~Busy() { idle = false; }
        } busy{producer_idle_};
        while (true) {
            if (failure_) std::rethrow_exception(failure_);
            if (done()) return;
            if (!claim_shared(lock)) changed_.wait(lock);
        }
    }

    // The helper: `sink` first (`fused` where it may take `shared` too, unless the
    // producer has time for `shared`: two threads beat one pairing), `shared` when
    // it has caught up with `sink`.
    void run() noexcept {
        if (start_) {
            try {
                (*start_)();
            } catch (...) {
                const std::lock_guard guard(mutex_);
                failure_ = std::current_exception();
                changed_.notify_all();
                return;
            }
        }
        std::unique_lock lock(mutex_);
        while (true) {
            if (abandon_ || failure_) return;
            if (sunk_ < delivered()) {
                const bool both = fused_ && !shared_busy_ && !producer_idle_ && shared_done_ == sunk_;
                if (both) shared_busy_ = true;
                const bool done = run_one(lock, both ? *fused_ : sink_, sunk_);
                if (both) shared_busy_ = false;
                if (!done) return;
                shared_done_ += both;
                ++sunk_;
                release_seen();
                continue;
            }
            if (claim_shared(lock)) continue;
            if (stopping_ && seen_by_both() == delivered()) return;  // then no shared run is under way
            changed_.wait(lock);
        }
    }

    void stop(bool finishing) {
        if (!thread_.joinable()) return;
        std::exception_ptr failure;
        {
            std::unique_lock lock(mutex_);
            if (finishing) {
                try {
                    help_until(lock, [&] { return seen_by_both() == delivered(); });
                } catch (...) {
                    failure = std::current_exception();
                }
            }
            stopping_ = true;
            abandon_ = !finishing || failure;
            changed_.notify_all();
        }
        thread_.join();
        claim_.reset();
        failure_ = nullptr;
        if (failure) std::rethrow_exception(failure);
    }

    const Sink& sink_;
    const Sink* shared_;  // the caller's, like sink_; null: none
    const Sink* fused_;   // the caller's too; null: none
    const Start* start_;  // the caller's too; null: none (or, without a helper, run)
    std::size_t chunk_;
    std::size_t max_buffers_;                      // 2 plus what the lag allows
    std::vector<std::uint8_t> filling_;            // the producer's
    std::mutex mutex_;
    std::condition_variable changed_;
    // Under mutex_: the chunks not yet seen by both sinks, from chunk base_ on; how
    // many `sink` and `shared` have seen; whether a thread runs `shared` now.
    std::deque<Queued> queued_;
    std::uint64_t base_ = 0, sunk_ = 0, shared_done_ = 0;
    bool shared_busy_ = false;
    bool producer_idle_ = false;  // the producer waits in help_until
    std::vector<std::vector<std::uint8_t>> free_;  // buffers both sinks are done with; under mutex_
    std::size_t buffers_ = 1;                      // made so far; under mutex_
    bool stopping_ = false, abandon_ = false;
    std::exception_ptr failure_;
    std::optional<ThreadClaim> claim_;
    std::thread thread_;
};

}  // namespace wheelfix::zip
