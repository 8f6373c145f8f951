// repair_wheels: the worker pool over repair_wheel() (schedule.hpp has the contract).
#include "wheelfix/repair/schedule.hpp"

#include "wheelfix/util/thread_budget.hpp"
#include "wheelfix/zip/archive.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <numeric>
#include <optional>
#include <thread>

namespace wheelfix::repair {

namespace {

// The order the workers take the wheels in: most inflated bytes first.
std::vector<std::size_t> largest_first(const std::vector<std::string>& wheels) {
    std::vector<std::uint64_t> inflated(wheels.size(), 0);
    for (std::size_t i = 0; i < wheels.size(); ++i) {
        try {
            const auto archive = zip::Archive::open(wheels[i]);
            for (const auto& member : archive.members()) inflated[i] += member.size;
        } catch (const std::exception&) {
        }
    }
    std::vector<std::size_t> order(wheels.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return inflated[a] > inflated[b]; });
    return order;
}

}  // namespace

std::vector<RepairOutcome> repair_wheels(const std::vector<std::string>& wheels, const abi::SymbolIndex& index,
                                         const RepairOptions& options, const std::filesystem::path& out_dir,
                                         unsigned jobs) {
    if (jobs == 0) jobs = usable_cpus();
    set_thread_budget(jobs);
    std::vector<std::optional<RepairOutcome>> outcomes(wheels.size());
    std::vector<std::exception_ptr> faults(wheels.size());
    OutputClaims claims;
    RepairOptions claiming = options;
    claiming.claims = &claims;
    const auto order = jobs > 1 ? largest_first(wheels) : std::vector<std::size_t>{};
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t taken; (taken = next.fetch_add(1)) < wheels.size();) {
            const std::size_t i = order.empty() ? taken : order[taken];
            try {
                outcomes[i] = repair_wheel(wheels[i], index, claiming, out_dir);
            } catch (const InputError& error) {
                outcomes[i] = error;
            } catch (const std::filesystem::filesystem_error& error) {
                outcomes[i] = InputError(wheels[i], error.what());
            } catch (...) {  // a fault of ours (logic_error, bad_alloc): rethrown here once the workers end
                faults[i] = std::current_exception();
            }
        }
    };
    {
        ThreadLoan waiting;  // this thread only waits for the workers
        std::vector<std::jthread> workers;
        const auto count = std::min<std::size_t>(jobs, wheels.size());
        // A worker's share goes back when its thread ends, with the lambda holding it.
        for (std::size_t i = 0; i < count; ++i) workers.emplace_back([&work, claim = claim_thread()] { work(); });
    }
    for (const auto& fault : faults)
        if (fault) std::rethrow_exception(fault);
    std::vector<RepairOutcome> done;
    for (auto& outcome : outcomes) done.push_back(std::move(*outcome));
    return done;
}

}  // namespace wheelfix::repair
