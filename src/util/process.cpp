// Running a helper program (util/process.hpp has the contract).
#include "wheelfix/util/process.hpp"

#include "wheelfix/util/cleanup.hpp"
#include "wheelfix/util/error.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace wheelfix {

namespace {

bool dropped(const char* entry, const std::vector<std::string>& names) {
    return std::any_of(names.begin(), names.end(), [&](const std::string& name) {
        return std::strncmp(entry, name.c_str(), name.size()) == 0 && entry[name.size()] == '=';
    });
}

std::vector<char*> child_environment(const ProcessOptions& options) {
    std::vector<char*> environment;
    for (char** entry = environ; *entry; ++entry)
        if (!dropped(*entry, options.drop_environment)) environment.push_back(*entry);
    for (const auto& entry : options.add_environment) environment.push_back(const_cast<char*>(entry.c_str()));
    environment.push_back(nullptr);
    return environment;
}

pid_t spawn(std::vector<char*>& argv, int pipe_write, int pipe_read, const ProcessOptions& options) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, pipe_write, STDOUT_FILENO);
    if (options.discard_stderr) posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&actions, pipe_read);
    posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    auto environment = child_environment(options);
    pid_t pid = 0;
    int status = ::posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), environment.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (status != 0) throw InputError(argv[0], std::string("cannot run: ") + std::strerror(status));
    return pid;
}

void append(std::string& output, const char* bytes, std::size_t size, std::size_t max_output) {
    if (output.size() < max_output) output.append(bytes, std::min(size, max_output - output.size()));
}

// Reads stdout until the child is gone (or the pipe closes and it is reaped) or the
// limit passes; then kills its group (what it forked, or all of it at the limit).
void collect(pid_t pid, int pipe_read, const ProcessOptions& options, ProcessResult& result) {
    const auto deadline = std::chrono::steady_clock::now() + options.limit;
    char buffer[4096];
    bool reaped = false, open = true;
    int wait_status = 0;
    while (open && !reaped) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            result.timed_out = true;
            break;
        }
        pollfd ready{pipe_read, POLLIN, 0};
        int polled = ::poll(&ready, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 100)));
        if (polled > 0) {
            ssize_t got = ::read(pipe_read, buffer, sizeof buffer);
            if (got > 0) append(result.output, buffer, static_cast<std::size_t>(got), options.max_output);
            else if (got == 0 || errno != EINTR) open = false;
        }
        if (::waitpid(pid, &wait_status, WNOHANG) == pid) reaped = true;
    }
    ::kill(-pid, SIGKILL);
    if (!reaped)
        while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {}
    ::fcntl(pipe_read, F_SETFL, O_NONBLOCK);  // what is left in the pipe, without waiting for a writer
    for (ssize_t got; (got = ::read(pipe_read, buffer, sizeof buffer)) > 0;)
        append(result.output, buffer, static_cast<std::size_t>(got), options.max_output);
    if (!result.timed_out && WIFEXITED(wait_status)) result.exit_status = WEXITSTATUS(wait_status);
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& arguments, const ProcessOptions& options) {
    if (arguments.empty()) throw std::invalid_argument("run_process: no program");
    std::vector<std::string> copies = arguments;
    std::vector<char*> argv;
    for (auto& argument : copies) argv.push_back(argument.data());
    argv.push_back(nullptr);
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw InputError(arguments.front(), std::string("cannot run: ") + std::strerror(errno));
    pid_t pid = -1;
    try {
        pid = spawn(argv, pipe_fds[1], pipe_fds[0], options);
    } catch (...) {
        ::close(pipe_fds[0]);
        ::close(pipe_fds[1]);
        throw;
    }
    ProcessGroupOnSignal group(pid);
    ::close(pipe_fds[1]);
    ProcessResult result;
    collect(pid, pipe_fds[0], options, result);
    ::close(pipe_fds[0]);
    return result;
}

}  // namespace wheelfix
