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
// Two buffers: the producer fills one while the sink reads the other.
#pragma once

#include "wheelfix/util/thread_budget.hpp"

#include <condition_variable>
#include <cstdint>
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

    SinkPipeline(const Sink& sink, std::size_t chunk, bool overlap) : sink_(sink) {
        buffers_[0].resize(chunk);
        if (!overlap) return;
        claim_ = try_claim_thread();
        if (!claim_) return;
        buffers_[1].resize(chunk);
        try {
            thread_ = std::thread([this] { run(); });
        } catch (const std::system_error&) {
            claim_.reset();
        }
    }
    ~SinkPipeline() { stop(false); }
    SinkPipeline(const SinkPipeline&) = delete;
    SinkPipeline& operator=(const SinkPipeline&) = delete;

    std::span<std::uint8_t> room() { return buffers_[filling_]; }
    // Whether the sink runs on a thread of its own (false: inside deliver()).
    bool overlapped() const { return thread_.joinable(); }

    void deliver(std::size_t count) {
        if (count == 0) return;
        if (!thread_.joinable()) {
            sink_(std::span<const std::uint8_t>(buffers_[0].data(), count));
            return;
        }
        std::unique_lock lock(mutex_);
        // Wait until the sink is done with the other buffer, then hand this one over.
        changed_.wait(lock, [&] { return !queued_ || failure_; });
        if (failure_) std::rethrow_exception(failure_);
        queued_ = count;
        queued_index_ = filling_;
        filling_ ^= 1;
        lock.unlock();
        changed_.notify_all();
    }

    void finish() { stop(true); }

private:
    void run() noexcept {
        std::unique_lock lock(mutex_);
        while (true) {
            changed_.wait(lock, [&] { return queued_ || stopping_; });
            if (!queued_) return;  // stopping, nothing left
            if (abandon_) return;
            auto bytes = std::span<const std::uint8_t>(buffers_[queued_index_].data(), queued_);
            lock.unlock();
            try {
                sink_(bytes);
            } catch (...) {
                lock.lock();
                failure_ = std::current_exception();
                queued_ = 0;
                changed_.notify_all();
                return;
            }
            lock.lock();
            queued_ = 0;
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
    std::vector<std::uint8_t> buffers_[2];
    int filling_ = 0;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::size_t queued_ = 0;   // bytes of buffers_[queued_index_] waiting for the sink; under mutex_
    int queued_index_ = 0;
    bool stopping_ = false, abandon_ = false;
    std::exception_ptr failure_;
    std::optional<ThreadClaim> claim_;
    std::thread thread_;
};

}  // namespace wheelfix::zip
