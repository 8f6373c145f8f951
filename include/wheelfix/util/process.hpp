// Running a helper program and collecting what it prints: the one way wheelfix
// starts a child process (the load test's loader, the package manager queries of
// a graft's SBOM).
//
// Contract: run_process(argv, options) starts argv[0] (a path: no PATH search, no
// shell) with argv, stdin from /dev/null, stdout into a pipe, stderr inherited or
// discarded, no other descriptor inherited, in a process group of its own (so the
// time limit and a signal that ends wheelfix reach whatever it forks: util/cleanup's
// ProcessGroupOnSignal). It returns once the child has exited and its group is
// killed, or once `limit` has passed (the group killed, timed_out set). stdout is
// kept up to max_output bytes (the rest read and dropped, so the child never blocks
// on a full pipe). The environment is ours without the variables named in
// `drop_environment`, plus `add_environment` ("NAME=value"). A program that cannot
// be started is an InputError naming argv[0].
#pragma once

#include <chrono>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace wheelfix {

struct ProcessOptions {
    std::chrono::milliseconds limit{std::chrono::seconds(60)};
    bool discard_stderr = false;  // else the child writes to ours
    std::size_t max_output = std::numeric_limits<std::size_t>::max();
    std::vector<std::string> drop_environment;  // names
    std::vector<std::string> add_environment;   // "NAME=value"
};

struct ProcessResult {
    std::string output;              // stdout, at most max_output bytes
    bool timed_out = false;
    std::optional<int> exit_status;  // nullopt: killed by a signal, or timed out
};

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

}  // namespace wheelfix
