// SinkPipeline (src/zip/sink_pipeline.hpp, private to zip: included by path): how
// far a sink may fall behind its producer, in order, a sink's failure, and the
// jobs beside the sink (shared, fused, start).
#include "../../src/zip/sink_pipeline.hpp"

#include "scoped_thread_budget.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace wheelfix;
using zip::SinkPipeline;
using namespace std::chrono_literals;

namespace sink_pipeline_test {

constexpr std::size_t kChunk = 1024;
constexpr int kChunks = 12;

// Polls `value` until it is `want` (true) or 5 s pass (false).
bool reaches(const std::atomic<int>& value, int want) {
    for (auto deadline = std::chrono::steady_clock::now() + 5s; std::chrono::steady_clock::now() < deadline;
         std::this_thread::sleep_for(1ms))
        if (value.load() == want) return true;
    return false;
}

// Delivers kChunks chunks (chunk i filled with byte i) to a sink that holds the
// first until released; returns how many deliver() calls had returned while it
// held it (the producer on a thread of its own, as it may wait).
int delivered_while_held(std::uint64_t may_lag, std::vector<int>& seen) {
    std::atomic<bool> release = false;
    std::atomic<int> delivered = 0;
    SinkPipeline::Sink sink = [&](std::span<const std::uint8_t> bytes) {
        while (!release.load()) std::this_thread::sleep_for(1ms);
        CHECK(bytes.size() == kChunk);
        for (const std::uint8_t byte : bytes) REQUIRE(byte == bytes.front());
        seen.push_back(bytes.front());
    };
    SinkPipeline pipeline(sink, kChunk, true, may_lag);
    REQUIRE(pipeline.overlapped());
    std::thread producer([&] {
        for (int i = 0; i < kChunks; ++i) {
            auto room = pipeline.room();
            std::fill(room.begin(), room.begin() + kChunk, static_cast<std::uint8_t>(i));
            pipeline.deliver(kChunk);
            ++delivered;
        }
    });
    const int full = 1 + static_cast<int>(may_lag / kChunk);  // one held by the sink, the lag queued
    CHECK(reaches(delivered, full));
    std::this_thread::sleep_for(50ms);
    const int held = delivered.load();  // and no further: the producer waits for the sink
    release = true;
    producer.join();
    pipeline.finish();
    return held;
}

// The chunk numbers a job saw, in order, and on which threads.
struct Seen {
    std::vector<int> chunks;
    std::vector<std::thread::id> threads;
    std::atomic<int> calls = 0;

    SinkPipeline::Sink job() {
        return [this](std::span<const std::uint8_t> bytes) {
            chunks.push_back(bytes.front());
            threads.push_back(std::this_thread::get_id());
            ++calls;
        };
    }
};

// The producer on a thread of its own (it may wait): kChunks chunks, chunk i filled
// with byte i, each from chunk `slow_from` on after 20 ms of other work; then finish().
std::thread produce(SinkPipeline& pipeline, std::thread::id& id, int slow_from = kChunks) {
    return std::thread([&pipeline, &id, slow_from] {
        id = std::this_thread::get_id();
        for (int i = 0; i < kChunks; ++i) {
            if (i >= slow_from) std::this_thread::sleep_for(20ms);
            auto room = pipeline.room();
            std::fill(room.begin(), room.begin() + kChunk, static_cast<std::uint8_t>(i));
            pipeline.deliver(kChunk);
        }
        pipeline.finish();
    });
}

// What a producer delivering 200 chunks (up to 64 queued) through `sink` and
// `jobs` is stopped with: the std::runtime_error's message, or "" for none.
std::string failure_of(const SinkPipeline::Sink& sink, zip::SinkJobs jobs = {}) {
    try {
        SinkPipeline pipeline(sink, kChunk, true, 64 * kChunk, jobs);
        REQUIRE(pipeline.overlapped());
        for (int i = 0; i < 200; ++i) pipeline.deliver(kChunk);
        pipeline.finish();
    } catch (const std::runtime_error& error) {
        return error.what();
    }
    return "";
}

std::vector<int> in_order() {
    std::vector<int> chunks(kChunks);
    for (int i = 0; i < kChunks; ++i) chunks[i] = i;
    return chunks;
}

}  // namespace sink_pipeline_test

using namespace sink_pipeline_test;

TEST_CASE("SinkPipeline: a sink falls behind by two buffers, or by may_lag bytes more, then the producer waits") {
    const ScopedThreadBudget budget(2);  // one spare share: the sink's thread
    std::vector<int> seen;
    CHECK(delivered_while_held(0, seen) == 1);
    CHECK(seen == in_order());
    seen.clear();
    CHECK(delivered_while_held(4 * kChunk, seen) == 5);
    CHECK(seen == in_order());
}

TEST_CASE("SinkPipeline: a lagging sink that throws stops the producer with its error") {
    const ScopedThreadBudget budget(2);
    int calls = 0;
    SinkPipeline::Sink sink = [&](std::span<const std::uint8_t>) {
        std::this_thread::sleep_for(20ms);
        if (++calls == 2) throw std::runtime_error("sink failed");
    };
    CHECK(failure_of(sink) == "sink failed");
    CHECK(calls == 2);  // what was queued after the failure was dropped
}

TEST_CASE("SinkPipeline: the shared job runs in order on whichever thread has time, the waiting producer included") {
    const ScopedThreadBudget budget(2);
    std::atomic<bool> release = false;
    std::vector<int> sunk;
    Seen shared;
    SinkPipeline::Sink sink = [&](std::span<const std::uint8_t> bytes) {
        while (!release.load()) std::this_thread::sleep_for(1ms);
        sunk.push_back(bytes.front());
    };
    const SinkPipeline::Sink hash = shared.job();
    std::thread::id producer_id;
    {
        SinkPipeline pipeline(sink, kChunk, true, 0, {.shared = &hash});
        REQUIRE(pipeline.overlapped());
        std::thread producer = produce(pipeline, producer_id);
        // The helper is held in `sink` on chunk 0; the producer, waiting for a buffer
        // at its second delivery, hashes chunks 0 and 1 itself, and then waits.
        CHECK(reaches(shared.calls, 2));
        std::this_thread::sleep_for(50ms);
        CHECK(shared.calls.load() == 2);
        release = true;
        producer.join();
    }
    CHECK(sunk == in_order());
    CHECK(shared.chunks == in_order());
    REQUIRE(shared.threads.size() >= 2);
    CHECK(shared.threads[0] == producer_id);
    CHECK(shared.threads[1] == producer_id);
}

TEST_CASE("SinkPipeline: without a spare thread both sinks run inside deliver(), the shared job first") {
    const ScopedThreadBudget budget(1);
    std::vector<std::string> calls;
    SinkPipeline::Sink sink = [&](std::span<const std::uint8_t> bytes) { calls.push_back("sink " + std::to_string(bytes.size())); };
    SinkPipeline::Sink hash = [&](std::span<const std::uint8_t> bytes) { calls.push_back("shared " + std::to_string(bytes.size())); };
    SinkPipeline pipeline(sink, kChunk, true, 64 * kChunk, {.shared = &hash});
    CHECK_FALSE(pipeline.overlapped());
    pipeline.deliver(10);
    CHECK(calls == std::vector<std::string>{"shared 10", "sink 10"});
    pipeline.deliver(20);
    pipeline.finish();
    CHECK(calls.size() == 4);
}

TEST_CASE("SinkPipeline: the sink's start runs first on the helper while the producer goes on; fused runs both jobs on "
          "chunks no thread has hashed") {
    const ScopedThreadBudget budget(2);
    std::atomic<bool> release = false;
    std::vector<int> sunk;  // chunk numbers through `sink` or `fused`; `shared`'s likewise
    Seen shared;
    int fused_calls = 0;
    bool started = false, started_before_sink = false;
    SinkPipeline::Start start = [&] {
        while (!release.load()) std::this_thread::sleep_for(1ms);
        started = true;
    };
    SinkPipeline::Sink sink = [&](std::span<const std::uint8_t> bytes) {
        started_before_sink = started;
        sunk.push_back(bytes.front());
    };
    const SinkPipeline::Sink hash = shared.job();
    SinkPipeline::Sink fused = [&](std::span<const std::uint8_t> bytes) {
        ++fused_calls;
        hash(bytes);
        sink(bytes);
    };
    std::thread::id producer_id;
    {
        SinkPipeline pipeline(sink, kChunk, true, 4 * kChunk, {.shared = &hash, .fused = &fused, .start = &start});
        REQUIRE(pipeline.overlapped());
        // From the middle on the producer is busy between deliveries: the helper catches up and fuses.
        std::thread producer = produce(pipeline, producer_id, kChunks / 2);
        // The helper is held in `start`: the producer fills the two buffers and the
        // four the lag allows, hashing the queued chunks while it waits, then waits.
        CHECK(reaches(shared.calls, 6));
        std::this_thread::sleep_for(50ms);
        CHECK(shared.calls.load() == 6);
        CHECK(sunk.empty());
        release = true;
        producer.join();
    }
    CHECK(sunk == in_order());
    CHECK(shared.chunks == in_order());
    CHECK(started_before_sink);
    for (int i = 0; i < 6; ++i) CHECK(shared.threads[i] == producer_id);
    CHECK(fused_calls >= 1);  // the chunks delivered slowly, to a helper that had caught up
    CHECK(fused_calls <= kChunks - 6);
}

TEST_CASE("SinkPipeline: without a spare thread the first deliver() runs the start, then fused in place of both jobs") {
    const ScopedThreadBudget budget(1);
    std::vector<std::string> calls;
    SinkPipeline::Start start = [&] { calls.push_back("start"); };
    SinkPipeline::Sink sink = [&](std::span<const std::uint8_t> bytes) { calls.push_back("sink " + std::to_string(bytes.size())); };
    SinkPipeline::Sink hash = [&](std::span<const std::uint8_t> bytes) { calls.push_back("shared " + std::to_string(bytes.size())); };
    SinkPipeline::Sink fused = [&](std::span<const std::uint8_t> bytes) { calls.push_back("fused " + std::to_string(bytes.size())); };
    SinkPipeline pipeline(sink, kChunk, true, 64 * kChunk, {.shared = &hash, .fused = &fused, .start = &start});
    CHECK_FALSE(pipeline.overlapped());
    CHECK(calls.empty());
    pipeline.deliver(10);
    pipeline.deliver(20);
    pipeline.finish();
    CHECK(calls == std::vector<std::string>{"start", "fused 10", "fused 20"});
}

TEST_CASE("SinkPipeline: a start that throws stops the producer with its error; the sink never runs") {
    const ScopedThreadBudget budget(2);
    int sink_calls = 0;
    SinkPipeline::Start start = [] {
        std::this_thread::sleep_for(20ms);
        throw std::runtime_error("start failed");
    };
    SinkPipeline::Sink sink = [&](std::span<const std::uint8_t>) { ++sink_calls; };
    CHECK(failure_of(sink, {.start = &start}) == "start failed");
    CHECK(sink_calls == 0);
}
