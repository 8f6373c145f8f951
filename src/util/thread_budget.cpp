// The thread budget (thread_budget.hpp has the contract): one counter of the shares
// not taken, which may dip below zero only through claim_thread().
#include "wheelfix/util/thread_budget.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <thread>

namespace wheelfix {
namespace {

std::atomic<int> budget{0};  // 0 until first asked: then usable_cpus()
std::atomic<int> spare{0};   // shares not taken; the main thread holds one from the start

int ensure_budget() {
    int threads = budget.load();
    if (threads != 0) return threads;
    const int cpus = static_cast<int>(usable_cpus());
    if (budget.compare_exchange_strong(threads, cpus)) {
        spare += cpus - 1;
        return cpus;
    }
    return threads;  // another thread set it first
}

}  // namespace

ThreadClaim::ThreadClaim(ThreadClaim&& other) noexcept : held_(other.held_) { other.held_ = false; }

ThreadClaim& ThreadClaim::operator=(ThreadClaim&& other) noexcept {
    if (this != &other) {
        if (held_) ++spare;
        held_ = other.held_;
        other.held_ = false;
    }
    return *this;
}

ThreadClaim::~ThreadClaim() {
    if (held_) ++spare;
}

ThreadLoan::ThreadLoan() {
    ensure_budget();
    ++spare;
}

ThreadLoan::~ThreadLoan() { --spare; }

unsigned usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
    return std::max(1u, std::thread::hardware_concurrency());
}

void set_thread_budget(unsigned threads) {
    const int wanted = static_cast<int>(std::clamp(threads, 1u, 4096u));
    const int before = ensure_budget();
    budget = wanted;
    spare += wanted - before;
}

unsigned thread_budget() { return static_cast<unsigned>(ensure_budget()); }

std::optional<ThreadClaim> try_claim_thread() {
    ensure_budget();
    for (int left = spare.load(); left > 0;)
        if (spare.compare_exchange_weak(left, left - 1)) return ThreadClaim();
    return std::nullopt;
}

std::vector<ThreadClaim> try_claim_threads(std::size_t at_most) {
    std::vector<ThreadClaim> claims;
    while (claims.size() < at_most) {
        auto claim = try_claim_thread();
        if (!claim) break;
        claims.push_back(std::move(*claim));
    }
    return claims;
}

ThreadClaim claim_thread() {
    ensure_budget();
    --spare;
    return ThreadClaim();
}

}  // namespace wheelfix
