// Independent tasks run on the thread budget, results kept in the caller's order:
// how the read-only commands read a wheel's members on every core they may use.
//
// Contract: run_tasks(weights, work) calls work(i) once for every i in
// [0, weights.size()), on the calling thread and on as many helper threads as the
// thread budget spares (util/thread_budget.hpp: try_claim_threads, at most one per
// task beyond the first). With helpers, the tasks are taken heaviest first (the
// weight is the caller's estimate of the work, e.g. a member's inflated size), so
// the last task to start is a light one and the threads finish together; alone,
// the calling thread takes them in index order, exactly as a plain loop would.
// work(i) must touch only what task i owns (its slot of a result vector) and
// thread-safe shared state, so what is computed never depends on the budget, only
// how fast.
//
// Failures keep the serial answer: when work(i) throws, no task with a higher index
// starts any more, every task with a lower one still runs, and once the threads
// have stopped the exception of the lowest failed index is rethrown on the calling
// thread: the one a plain loop in index order would have thrown (for tasks whose
// failure does not depend on each other). A caller may also stop early for its own
// reason with TaskStop::stop_from(index) (tasks from that index on are not started;
// run_tasks then returns normally and started_all() says whether any was skipped).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

namespace wheelfix {

// Shared between the tasks of one run_tasks call: the lowest index that must not start.
class TaskStop {
public:
    void stop_from(std::size_t index) noexcept;
    bool stopped(std::size_t index) const noexcept { return index >= first_stopped_.load(std::memory_order_acquire); }

private:
    std::atomic<std::size_t> first_stopped_{SIZE_MAX};
};

struct TaskRun {
    std::size_t threads = 1;  // the calling thread included
    bool started_all = true;  // false when TaskStop skipped a task
};

TaskRun run_tasks(std::span<const std::uint64_t> weights, const std::function<void(std::size_t)>& work);
TaskRun run_tasks(std::span<const std::uint64_t> weights, const std::function<void(std::size_t, TaskStop&)>& work);

}  // namespace wheelfix
