// Unit tests: util/timings (--timings): nothing recorded when off, self time per
// thread (an inner scope pauses the outer one, a phase nested in itself counts
// once), threads adding up, the peak RSS.
#include "wheelfix/util/timings.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <thread>
#include <vector>

using namespace wheelfix;
using namespace std::chrono_literals;

namespace {

timings::PhaseTotal total_of(timings::Phase phase) { return timings::totals()[static_cast<std::size_t>(phase)]; }

// Switches the timers on for one test case and off again (the process-wide switch
// must not leak into other test cases).
struct Enabled {
    Enabled() { timings::enable(); }
    ~Enabled() { timings::enable(false); }
};

}  // namespace

TEST_CASE("timings: a scope records nothing while the timers are off") {
    timings::enable(false);
    const auto before = total_of(timings::Phase::edit);
    {
        const timings::Scope timer(timings::Phase::edit);
        std::this_thread::sleep_for(5ms);
    }
    const auto after = total_of(timings::Phase::edit);
    CHECK(after.scopes == before.scopes);
    CHECK(after.time == before.time);
}

TEST_CASE("timings: an inner scope's time is not its outer scope's") {
    const Enabled on;
    const auto parse_before = total_of(timings::Phase::parse);
    const auto inflate_before = total_of(timings::Phase::inflate);
    {
        const timings::Scope outer(timings::Phase::parse);
        std::this_thread::sleep_for(10ms);
        {
            const timings::Scope inner(timings::Phase::inflate);
            std::this_thread::sleep_for(60ms);
        }
    }
    const auto parse = total_of(timings::Phase::parse).time - parse_before.time;
    const auto inflate = total_of(timings::Phase::inflate).time - inflate_before.time;
    CHECK(total_of(timings::Phase::parse).scopes == parse_before.scopes + 1);
    CHECK(total_of(timings::Phase::inflate).scopes == inflate_before.scopes + 1);
    CHECK(inflate >= 60ms);
    CHECK(parse >= 10ms);
    CHECK(parse < 50ms);  // 10 ms of its own; with the inner 60 ms it would be 70 ms or more
}

TEST_CASE("timings: a phase nested in itself is counted once") {
    const Enabled on;
    const auto before = total_of(timings::Phase::deflate);
    {
        const timings::Scope outer(timings::Phase::deflate);
        const timings::Scope inner(timings::Phase::deflate);
        std::this_thread::sleep_for(50ms);
    }
    const auto spent = total_of(timings::Phase::deflate).time - before.time;
    CHECK(spent >= 50ms);
    CHECK(spent < 100ms);  // counted twice it would be 100 ms or more
}

TEST_CASE("timings: scopes on several threads add up") {
    const Enabled on;
    const auto before = total_of(timings::Phase::hash);
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i)
        threads.emplace_back([] {
            const timings::Scope timer(timings::Phase::hash);
            std::this_thread::sleep_for(30ms);
        });
    for (auto& thread : threads) thread.join();
    const auto after = total_of(timings::Phase::hash);
    CHECK(after.scopes == before.scopes + 3);
    CHECK(after.time - before.time >= 90ms);
}

TEST_CASE("timings: phase names and the peak RSS") {
    CHECK(timings::phase_name(timings::Phase::read) == "read");
    CHECK(timings::phase_name(timings::Phase::deflate) == "deflate/splice");
    CHECK(timings::phase_name(timings::Phase::proofs) == "proofs");
    const std::vector<char> touched(std::size_t(32) << 20, 1);  // 32 MiB resident
    CHECK(touched[touched.size() / 2] == 1);
    CHECK(timings::peak_rss().self >= touched.size());
}
