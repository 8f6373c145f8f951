// Where a command's time went (`--timings`): scoped timers adding into a fixed set
// of named counters, one per kind of work, and the peak RSS.
//
// Contract: the front end calls enable() once before the work starts (tests may
// switch it off again with enable(false) between scopes); until then
// (and in every run without --timings) a Scope costs one relaxed atomic load and
// records nothing. An enabled Scope measures steady_clock time and adds it, on
// destruction, to its phase's counter. Time is *self* time per thread: a Scope
// opened inside another one on the same thread pauses the outer one until it ends
// (inflate that feeds a parser counts as inflate only while it inflates), so on one
// thread the phases never count the same nanosecond twice, and a phase nested in
// itself is counted once. Work on several threads adds up, so the phases together
// may exceed the wall-clock time. Counters are atomics: scopes may open on any
// thread. Scopes must be opened and closed in stack order on their thread (they are
// objects with automatic storage; never move or heap-allocate one).
//
// Where the scopes stand: read (the central directory, pread of a member's raw
// bytes), inflate (the zip layer's inflaters; gzip'd index and atlas files),
// parse (ElfFile::parse, the streamed ELF readers of wheel/scan_streaming, index
// and atlas files), edit (elf::plan_edits, under every command that edits ELF
// files: the plan executor, relink, graft, the elf command), deflate/splice (the zip
// layer's deflaters and splices), hash (util/sha256), write (util/output_file),
// proofs (repair's load test).
//
// Bytes: count_bytes(phase, n) adds to a phase's byte count when enabled (nothing
// otherwise): the bytes inflated (output of the zip layer's inflaters) and hashed
// (util/sha256), so --timings shows how many times a command inflated and hashed
// each byte of its input, whatever the load on the machine.
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
