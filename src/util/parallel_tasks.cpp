// run_tasks: a shared cursor over the tasks, heaviest first, on the calling thread
// and the helpers the budget spares (parallel_tasks.hpp has the contract).
#include "wheelfix/util/parallel_tasks.hpp"

#include "wheelfix/util/thread_budget.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <numeric>
#include <system_error>
#include <thread>
#include <vector>

namespace wheelfix {

void TaskStop::stop_from(std::size_t index) noexcept {
    for (std::size_t first = first_stopped_.load(); index < first;)
        if (first_stopped_.compare_exchange_weak(first, index)) break;
}

namespace {

// The order the threads take the tasks in: heaviest first when several threads
// share them (ties in index order), else index order.
std::vector<std::size_t> task_order(std::span<const std::uint64_t> weights, bool shared) {
    std::vector<std::size_t> order(weights.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    if (shared) std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return weights[a] > weights[b]; });
    return order;
}

// The lowest failed task's exception, kept while the others run on.
class FirstFailure {
public:
    void record(std::size_t index, std::exception_ptr error) {
        const std::lock_guard lock(mutex_);
        if (index >= index_) return;
        index_ = index;
        error_ = std::move(error);
    }
    void rethrow() const {
        if (error_) std::rethrow_exception(error_);
    }

private:
    std::mutex mutex_;
    std::size_t index_ = SIZE_MAX;
    std::exception_ptr error_;
};

}  // namespace

TaskRun run_tasks(std::span<const std::uint64_t> weights, const std::function<void(std::size_t, TaskStop&)>& work) {
    TaskRun run;
    const std::size_t count = weights.size();
    std::vector<ThreadClaim> claims = count > 1 ? try_claim_threads(count - 1) : std::vector<ThreadClaim>{};
    const std::vector<std::size_t> order = task_order(weights, !claims.empty());
    TaskStop stop;
    FirstFailure failure;
    std::atomic<std::size_t> next{0};
    std::atomic<bool> skipped{false};
    auto take_tasks = [&] {
        for (std::size_t taken; (taken = next.fetch_add(1)) < count;) {
            const std::size_t index = order[taken];
            if (stop.stopped(index)) {
                skipped = true;
                continue;
            }
            try {
                work(index, stop);
            } catch (...) {
                failure.record(index, std::current_exception());
                stop.stop_from(index + 1);  // a plain loop would not have gone past it
            }
        }
    };
    std::vector<std::jthread> helpers;
    for (ThreadClaim& claim : claims) {
        try {
            // The helper's share goes back when its thread ends, with the lambda holding it.
            helpers.emplace_back([&take_tasks, held = std::move(claim)] { take_tasks(); });
        } catch (const std::system_error&) {
            break;  // no thread to be had: fewer threads do the work
        }
    }
    run.threads = 1 + helpers.size();
    take_tasks();
    for (std::jthread& helper : helpers) helper.join();
    failure.rethrow();
    run.started_all = !skipped;
    return run;
}

TaskRun run_tasks(std::span<const std::uint64_t> weights, const std::function<void(std::size_t)>& work) {
    return run_tasks(weights, [&work](std::size_t index, TaskStop&) { work(index); });
}

}  // namespace wheelfix
