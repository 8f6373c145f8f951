// Where a command's time went (`--timings`): scoped timers adding into a fixed set
// of named counters, one per kind of work, and the peak RSS.
//
// Contract: the front end calls enable() once before the work starts (tests may
// switch it off again with enable(false) between scopes); until then (and in every
// run without --timings) a Scope costs one relaxed atomic load and records nothing.
// An enabled Scope adds its steady_clock time to its phase's counter when it ends.
// Time is *self* time per thread: a Scope opened inside another on the same thread
// pauses the outer one until it ends (inflate that feeds a parser counts as inflate
// only while it inflates), so on one thread no nanosecond counts twice and a phase
// nested in itself counts once; work on several threads adds up, so the phases may
// exceed the wall-clock time. Counters are atomics; scopes open on any thread, in
// stack order on their thread (automatic storage only: never move or heap-allocate one).
//
// The phases: read (the central directory, a member's raw bytes), inflate, parse (ELF,
// index and atlas files), edit (elf::plan_edits), deflate/splice, hash (util/sha256),
// write (util/output_file), proofs (repair's load test). count_bytes(phase, n) adds
// to a phase's byte count when enabled: the bytes inflated and hashed, so --timings
// shows how many times a command inflated and hashed each byte of its input,
// whatever the load on the machine.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace wheelfix::timings {

enum class Phase : std::uint8_t { read, inflate, parse, edit, deflate, hash, write, proofs };
inline constexpr std::size_t kPhases = 8;
std::string_view phase_name(Phase phase) noexcept;  // "read", "inflate", ..., "deflate/splice", ...

void enable(bool on = true) noexcept;
namespace detail {
extern std::atomic<bool> enabled;
}
inline bool enabled() noexcept { return detail::enabled.load(std::memory_order_relaxed); }

class Scope {
public:
    explicit Scope(Phase phase) noexcept {
        if (enabled()) open(phase);
    }
    ~Scope() {
        if (active_) close();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

private:
    void open(Phase phase) noexcept;
    void close() noexcept;

    bool active_ = false;
    Phase phase_ = Phase::read;
    Scope* outer_ = nullptr;
    std::chrono::steady_clock::time_point resumed_{};
};

struct PhaseTotal {
    std::chrono::nanoseconds time{0};  // self time, summed over threads
    std::uint64_t scopes = 0;          // how many scopes of the phase ended
    std::uint64_t bytes = 0;           // count_bytes: inflated (inflate), hashed (hash); 0 elsewhere
};
void count_bytes(Phase phase, std::uint64_t bytes) noexcept;
std::array<PhaseTotal, kPhases> totals();

// Peak resident set size in bytes: of this process (/proc/self/status VmHWM, which
// starts again at execve, unlike ru_maxrss; getrusage where it is missing), and of
// the largest child it waited for (getrusage RUSAGE_CHILDREN: the load test's
// python3), 0 when there was none.
struct PeakRss {
    std::uint64_t self = 0;
    std::uint64_t children = 0;
};
PeakRss peak_rss();

}  // namespace wheelfix::timings
