// repair_wheels: the worker pool over repair_wheel() (schedule.hpp has the contract).
#include "wheelfix/repair/schedule.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/text.hpp"
#include "wheelfix/util/thread_budget.hpp"
#include "wheelfix/wheel/filename.hpp"
#include "wheelfix/zip/archive.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <numeric>
#include <optional>
#include <set>
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

// Which inputs may name one output: the same distribution in their file names (the
// output's name is the input's with another version and platform). A name that
// does not parse is a group of its own (its repair refuses it before any claim).
std::vector<std::string> output_groups(const std::vector<std::string>& wheels) {
    std::vector<std::string> groups;
    for (std::size_t i = 0; i < wheels.size(); ++i) {
        try {
            groups.push_back(wheel::normalize_project_name(
                wheel::parse_filename(std::filesystem::path(wheels[i]).filename().string()).distribution));
        } catch (const std::exception&) {
            groups.push_back("\n" + std::to_string(i));  // no distribution name has a newline
        }
    }
    return groups;
}

// `order` with the inputs of each group put back in the order given, each taking
// the places the group had: an input's claim waits only for earlier inputs of its
// group (OutputClaims), which are then already started.
std::vector<std::size_t> group_order_kept(std::vector<std::size_t> order, const std::vector<std::string>& groups) {
    std::map<std::string, std::vector<std::size_t>> places;  // group -> its places in `order`
    for (std::size_t place = 0; place < order.size(); ++place) places[groups[order[place]]].push_back(place);
    for (const auto& [group, taken] : places) {
        std::vector<std::size_t> members;
        for (std::size_t place : taken) members.push_back(order[place]);
        std::sort(members.begin(), members.end());
        for (std::size_t k = 0; k < taken.size(); ++k) order[taken[k]] = members[k];
    }
    return order;
}

// The architecture a platform tag names ("manylinux2014_x86_64" -> "x86_64"): the
// one part of the platform repair never changes. The whole tag when none is known.
std::string platform_architecture(const std::string& platform) {
    for (std::string_view arch : {"x86_64", "aarch64", "i686", "ppc64le", "s390x", "armv7l", "riscv64", "loongarch64"})
        if (platform.ends_with(arch)) return std::string(arch);
    return platform;
}

// What of an input's file name its output keeps: two inputs with the same key may
// be written under one name (repair changes the version's local label and the
// platform tags, nothing else). Empty for a name that does not parse (its repair refuses it).
std::string output_name_key(const std::string& wheel, const RepairOptions& options) {
    try {
        const auto name = wheel::parse_filename(std::filesystem::path(wheel).filename().string());
        // The version as repair may write it: kept whole without --torch; its public part
        // with --keep-version; else the local label less its torch segment, which repair
        // rewrites ("+cu130.torch2.9" and "+cu130.torch2.10" may both become
        // "+cu130.torch2.10").
        const auto plus = name.version.find('+');
        std::string key = wheel::normalize_project_name(name.distribution) + "-";
        if (options.no_torch) {
            key += name.version;
        } else {
            key += name.version.substr(0, plus);
            bool in_torch = false;  // "torch2" and the numbers after it: "torch2.10", "torch2.10.0"
            if (plus != std::string::npos && !options.keep_version)
                for (const auto& segment : split_nonempty(name.version.substr(plus + 1), '.')) {
                    const bool number = segment.find_first_not_of("0123456789") == std::string::npos;
                    in_torch = segment.starts_with("torch") || (in_torch && number);
                    if (!in_torch) key += "." + segment;
                }
        }
        key += "-" + name.build;
        for (const auto& tag : name.python_tags) key += "-py:" + tag;
        for (const auto& tag : name.abi_tags) key += "-abi:" + tag;
        std::set<std::string> platforms;  // a compressed tag set names its architecture once per tag
        for (const auto& platform : name.platform_tags)
            platforms.insert(options.no_update_tags ? platform : platform_architecture(platform));
        for (const auto& platform : platforms) key += "-" + platform;
        return key;
    } catch (const std::exception&) {
        return {};
    }
}

bool inside_directory(const std::filesystem::path& file, const std::filesystem::path& directory) {
    std::error_code error;
    const auto parent = std::filesystem::weakly_canonical(std::filesystem::absolute(file, error).parent_path(), error);
    const auto into = std::filesystem::weakly_canonical(std::filesystem::absolute(directory, error), error);
    return !error && parent == into;
}

}  // namespace

void refuse_colliding_batch(const std::vector<std::string>& wheels, const RepairOptions& options,
                            const std::filesystem::path& out_dir) {
    if (wheels.size() < 2) return;
    std::map<std::string, std::size_t> first_of_key;
    for (std::size_t i = 0; i < wheels.size(); ++i) {
        const std::string key = output_name_key(wheels[i], options);
        if (key.empty()) continue;
        const auto [earlier, fresh] = first_of_key.emplace(key, i);
        if (fresh) continue;
        const std::string& other = wheels[earlier->second];
        const bool output_over_input = inside_directory(wheels[i], out_dir) || inside_directory(other, out_dir);
        throw InputError(wheels[i], (output_over_input ? "lies in the output directory and may be the output of "
                                                       : "may be written under the same output name as ") +
                                        other +
                                        " (one distribution, version, Python and ABI tags and architecture): the "
                                        "batch is refused before any work, nothing written; repair them into "
                                        "separate -o directories");
    }
}

std::vector<RepairOutcome> repair_wheels(const std::vector<std::string>& wheels, const WheelSetup& setup,
                                         const RepairOptions& batch, const std::filesystem::path& out_dir,
                                         unsigned jobs) {
    refuse_colliding_batch(wheels, batch, out_dir);
    if (jobs == 0) jobs = usable_cpus();
    set_thread_budget(jobs);
    std::vector<std::optional<RepairOutcome>> outcomes(wheels.size());
    std::vector<std::exception_ptr> faults(wheels.size());
    const auto groups = output_groups(wheels);
    OutputClaims claims(groups);
    const auto order = jobs > 1 ? group_order_kept(largest_first(wheels), groups) : std::vector<std::size_t>{};
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t taken; (taken = next.fetch_add(1)) < wheels.size();) {
            const std::size_t i = order.empty() ? taken : order[taken];
            struct Ended {  // however the repair ends, later inputs of its group stop waiting for it
                OutputClaims& claims;
                std::size_t position;
                ~Ended() { claims.ended(position); }
            } ended{claims, i};
            try {
                auto job = setup(i);
                if (auto* skipped = std::get_if<NotRepaired>(&job)) {
                    outcomes[i] = std::move(*skipped);
                    continue;
                }
                WheelJob& wheel_job = std::get<WheelJob>(job);
                RepairOptions claiming = std::move(wheel_job.options);
                claiming.claims = &claims;
                claiming.claim_position = i;
                outcomes[i] = repair_wheel(wheels[i], *wheel_job.index, claiming, out_dir);
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

int batch_status(const std::vector<RepairOutcome>& outcomes) {
    int status = 0;
    for (const auto& outcome : outcomes) {
        if (std::holds_alternative<InputError>(outcome)) return 2;
        if (std::holds_alternative<NotRepaired>(outcome)) {
            status = 1;
            continue;
        }
        const auto& report = std::get<RepairReport>(outcome);
        if (!report.clean() || report.not_proven()) status = 1;
    }
    return status;
}

}  // namespace wheelfix::repair
