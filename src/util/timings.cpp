// Scoped timers into named counters (util/timings.hpp).
#include "wheelfix/util/timings.hpp"

#include <sys/resource.h>

#include <cstdio>

namespace wheelfix::timings {

namespace detail {
std::atomic<bool> enabled{false};
}

namespace {

struct Counter {
    std::atomic<std::int64_t> nanoseconds{0};
    std::atomic<std::uint64_t> scopes{0};
    std::atomic<std::uint64_t> bytes{0};
};
std::array<Counter, kPhases> counters;

// The innermost open Scope of this thread, paused while an inner one runs.
thread_local Scope* innermost = nullptr;

std::uint64_t maxrss_bytes(int who) {
    rusage usage{};
    if (getrusage(who, &usage) != 0) return 0;
    return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

// This address space's peak RSS (VmHWM). ru_maxrss survives execve, so a wheelfix
// started by a bigger process (python's subprocess forks, then execs) would report
// its parent's peak; VmHWM starts again with the new address space. 0 when the
// kernel does not say.
std::uint64_t high_water_mark_bytes() {
    std::FILE* status = std::fopen("/proc/self/status", "re");
    if (!status) return 0;
    char line[256];
    unsigned long long kib = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, status)) found = std::sscanf(line, "VmHWM: %llu kB", &kib) == 1;
    std::fclose(status);
    return found ? kib * 1024 : 0;
}

}  // namespace

std::string_view phase_name(Phase phase) noexcept {
    switch (phase) {
    case Phase::read: return "read";
    case Phase::inflate: return "inflate";
    case Phase::parse: return "parse";
    case Phase::edit: return "edit";
    case Phase::deflate: return "deflate/splice";
    case Phase::hash: return "hash";
    case Phase::write: return "write";
    case Phase::proofs: return "proofs";
    }
    return "?";
}

void enable(bool on) noexcept { detail::enabled.store(on, std::memory_order_relaxed); }

void Scope::open(Phase phase) noexcept {
    const auto now = std::chrono::steady_clock::now();
    active_ = true;
    phase_ = phase;
    outer_ = innermost;
    if (outer_) {  // pause the enclosing scope: this thread's time is ours now
        counters[static_cast<std::size_t>(outer_->phase_)].nanoseconds.fetch_add((now - outer_->resumed_).count(),
                                                                               std::memory_order_relaxed);
    }
    innermost = this;
    resumed_ = now;
}

void Scope::close() noexcept {
    const auto now = std::chrono::steady_clock::now();
    auto& counter = counters[static_cast<std::size_t>(phase_)];
    counter.nanoseconds.fetch_add((now - resumed_).count(), std::memory_order_relaxed);
    counter.scopes.fetch_add(1, std::memory_order_relaxed);
    innermost = outer_;
    if (outer_) outer_->resumed_ = now;
}

void count_bytes(Phase phase, std::uint64_t bytes) noexcept {
    if (enabled()) counters[static_cast<std::size_t>(phase)].bytes.fetch_add(bytes, std::memory_order_relaxed);
}

std::array<PhaseTotal, kPhases> totals() {
    std::array<PhaseTotal, kPhases> result;
    for (std::size_t i = 0; i < kPhases; ++i)
        result[i] = {std::chrono::nanoseconds(counters[i].nanoseconds.load(std::memory_order_relaxed)),
                     counters[i].scopes.load(std::memory_order_relaxed), counters[i].bytes.load(std::memory_order_relaxed)};
    return result;
}

PeakRss peak_rss() {
    const std::uint64_t self = high_water_mark_bytes();
    return {self ? self : maxrss_bytes(RUSAGE_SELF), maxrss_bytes(RUSAGE_CHILDREN)};
}

}  // namespace wheelfix::timings
