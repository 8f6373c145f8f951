// SinkPipeline: hands inflated chunks to a sink on a second thread, so the sink's
// work (SHA-256 for RECORD, copying an ELF image, writing a file) overlaps the
// inflate of the next chunk instead of following it.
//
// Contract: the producer asks for room() (a buffer of `chunk` bytes it may fill),
// then deliver(count) hands the first `count` bytes to the sink and returns the
// next room. The sink sees every chunk in order, one call at a time, on the helper
// thread when the thread budget (util/thread_budget.hpp) spares one, else on the
// producer's thread right inside deliver() (the same calls, only not overlapped).
// finish() waits until the sink has seen everything. A sink that throws stops the
// pipeline: the exception is rethrown by the next deliver() or by finish(), on the
// producer's thread. Destruction without finish() abandons what is queued and joins.
// Two buffers: the producer fills one while the sink reads the other. With
// `may_lag` bytes, a sink that falls behind (one that starts with other work, as
// relink's digest of the edited content plans its edits first) has up to that
// many more bytes queued for it, in buffers made only when the producer would
// otherwise wait, before the producer waits.
#pragma once

#include "wheelfix/util/thread_budget.hpp"

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

class SinkPipeline {
public:
    using Sink = std::function<void(std::span<const std::uint8_t>)>;

    SinkPipeline(const Sink& sink, std::size_t chunk, bool overlap, std::uint64_t may_lag = 0)
        : sink_(sink), chunk_(chunk), max_buffers_(2 + static_cast<std::size_t>(may_lag / std::max<std::size_t>(chunk, 1))) {
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
    // Whether the sink runs on a thread of its own (false: inside deliver()).
    bool overlapped() const { return thread_.joinable(); }

    void deliver(std::size_t count) {
        if (count == 0) return;
        if (!thread_.joinable()) {
            sink_(std::span<const std::uint8_t>(filling_.data(), count));
            return;
        }
        std::unique_lock lock(mutex_);
        if (failure_) std::rethrow_exception(failure_);
        queued_.push_back({std::move(filling_), count});
        changed_.notify_all();
        // The next room: a buffer the sink is done with, a new one while the lag
        // allows, else wait for the sink.
        if (free_.empty() && buffers_ < max_buffers_) {
            ++buffers_;
            lock.unlock();
            filling_.resize(chunk_);
            return;
        }
        changed_.wait(lock, [&] { return !free_.empty() || failure_; });
        if (failure_) std::rethrow_exception(failure_);
        filling_ = std::move(free_.back());
        free_.pop_back();
    }

    void finish() { stop(true); }

private:
    struct Queued {
        std::vector<std::uint8_t> bytes;
        std::size_t count;
    };

    void run() noexcept {
        std::unique_lock lock(mutex_);
        while (true) {
            changed_.wait(lock, [&] { return !queued_.empty() || stopping_; });
            if (queued_.empty() || abandon_) return;  // stopping, nothing left (or abandoned)
            Queued next = std::move(queued_.front());
            queued_.pop_front();
            lock.unlock();
            try {
                sink_(std::span<const std::uint8_t>(next.bytes.data(), next.count));
            } catch (...) {
                lock.lock();
                failure_ = std::current_exception();
                queued_.clear();
                changed_.notify_all();
                return;
            }
            lock.lock();
            free_.push_back(std::move(next.bytes));
            changed_.notify_all();
        }
    }

    void stop(bool finishing) {
        if (thread_.joinable()) {
            {
                std::lock_guard lock(mutex_);
                stopping_ = true;
                abandon_ = !finishing;
            }
            changed_.notify_all();
            thread_.join();
            claim_.reset();
        }
        if (finishing && failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
    }

    const Sink& sink_;
    std::size_t chunk_;
    std::size_t max_buffers_;                 // 2 plus what the lag allows
    std::vector<std::uint8_t> filling_;       // the producer's
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Queued> queued_;               // for the sink, oldest first; under mutex_
    std::vector<std::vector<std::uint8_t>> free_;  // buffers the sink is done with; under mutex_
    std::size_t buffers_ = 1;                 // made so far; under mutex_
    bool stopping_ = false, abandon_ = false;
    std::exception_ptr failure_;
    std::optional<ThreadClaim> claim_;
    std::thread thread_;
};

}  // namespace wheelfix::zip
