// How many threads this process keeps busy at once.
//
// Contract. The budget counts working threads, the one running main() included. It
// starts at the CPUs this process may run on (usable_cpus()); `repair -j N` sets it
// to N before any work starts. Threads that help another with one task (the
// inflate's Follower, the splice's background SHA-256, parallel_deflate's workers)
// start only on a ThreadClaim from try_claim_thread(); without one their work runs
// on the asking thread, so what is computed never depends on the budget, only how
// fast. A thread that works on its own (a repair worker) takes claim_thread(), which
// always succeeds: its caller sized the budget for it. A thread that only waits for
// others holds a ThreadLoan, lending its own share meanwhile. Destroying a claim
// returns it at once, so when repair's last wheel runs, the workers that found no
// wheel left lend their CPUs to its helpers.
//
// Thread-safe. The budget is a counter, not a pool: nothing waits for a claim.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace wheelfix {

// One thread's share of the budget, returned on destruction. Move-only.
class ThreadClaim {
public:
    ThreadClaim(ThreadClaim&& other) noexcept;
    ThreadClaim& operator=(ThreadClaim&& other) noexcept;
    ThreadClaim(const ThreadClaim&) = delete;
    ThreadClaim& operator=(const ThreadClaim&) = delete;
    ~ThreadClaim();

private:
    friend ThreadClaim claim_thread();
    friend std::optional<ThreadClaim> try_claim_thread();
    ThreadClaim() = default;
    bool held_ = true;
};

// While alive: the calling thread only waits, and its share is free for others.
class ThreadLoan {
public:
    ThreadLoan();
    ThreadLoan(const ThreadLoan&) = delete;
    ThreadLoan& operator=(const ThreadLoan&) = delete;
    ~ThreadLoan();
};

// The CPUs this process may run on (its affinity mask; at least 1).
unsigned usable_cpus();

// Sets the budget (at least 1) while no claim or loan is alive.
void set_thread_budget(unsigned threads);
unsigned thread_budget();

// A share for a helper thread, or nothing when the budget is spent.
std::optional<ThreadClaim> try_claim_thread();
// Up to `at_most` shares for helper threads, as many as the budget has.
std::vector<ThreadClaim> try_claim_threads(std::size_t at_most);
// A share for a thread its caller counted in the budget; always granted.
ThreadClaim claim_thread();

}  // namespace wheelfix
