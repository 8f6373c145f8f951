// load_test: extract, lay out like site-packages, let a child process dlopen.
#include "wheelfix/repair/load_test.hpp"

#include "wheelfix/util/cleanup.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/output_file.hpp"
#include "wheelfix/util/timings.hpp"
#include "wheelfix/wheel/wheel.hpp"
#include "wheelfix/zip/archive.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <optional>
#include <random>
#include <cstdlib>
#include <cstring>
#include <map>

extern char** environ;

namespace wheelfix::repair {
namespace {

constexpr std::string_view kCannotOpen = ": cannot open shared object file";

class TemporaryDirectory {
public:
    // mkdtemp's way, but registered for signals before the directory exists.
    TemporaryDirectory() {
        auto parent = std::filesystem::temp_directory_path();
        std::random_device seed;
        int error = EEXIST;
        for (int attempt = 0; attempt < 100 && error == EEXIST; ++attempt) {
            auto candidate = parent / ("wheelfix-load-" + std::to_string(::getpid()) + "-" + std::to_string(seed()));
            on_signal_.emplace(candidate, CleanupOnSignal::Kind::directory);
            if (::mkdir(candidate.c_str(), 0700) == 0) {
                path_ = candidate;
                return;
            }
            error = errno;
            on_signal_.reset();
        }
        throw InputError((parent / "wheelfix-load-*").string(), std::string("cannot create: ") + std::strerror(error));
    }
    ~TemporaryDirectory() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    TemporaryDirectory(const TemporaryDirectory&) = delete;
    TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
    std::optional<CleanupOnSignal> on_signal_;
};

// Extracts the members into site/.
void lay_out(const std::filesystem::path& wheel, const std::vector<std::string>& members,
                                 const std::filesystem::path& site) {
    auto archive = zip::Archive::open(wheel);
    for (const auto& name : members) {
        const auto* member = archive.find(name);
        if (!member) throw std::invalid_argument("load_test: no member " + name + " in " + wheel.string());
        auto path = site / std::string(wheel::installed_path(name));  // .data/platlib/x lands at x, as pip puts it
        std::filesystem::create_directories(path.parent_path());
        OutputFile out(path);
        archive.stream(*member, [&](std::span<const std::uint8_t> chunk) { out.write(chunk); });
        out.set_permissions(std::filesystem::perms(0755));
        out.commit();
    }
}

std::vector<char*> child_environment() {
    std::vector<char*> environment;
    for (char** entry = environ; *entry; ++entry)
        if (std::strncmp(*entry, "LD_LIBRARY_PATH=", 16) != 0 && std::strncmp(*entry, "LD_PRELOAD=", 11) != 0)
            environment.push_back(*entry);
    environment.push_back(nullptr);
    return environment;
}

// The loader's process: its own process group (so the time limit and our
// signals reach whatever it forks), stdin from /dev/null, stdout into `pipe`,
// stderr kept, no other descriptor inherited.
pid_t spawn_loader(std::vector<char*>& argv, int pipe_write, int pipe_read) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, pipe_write, STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipe_read);
    posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    auto environment = child_environment();
    pid_t pid = 0;
    int status = ::posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), environment.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (status != 0) throw InputError(argv[0], std::string("cannot run: ") + std::strerror(status));
    return pid;
}

// What the loader printed before it ended (with everything it started: the
// group is killed once the loader is gone) or before the time limit (the group
// killed; timed_out set).
std::string collect_output(pid_t pid, int pipe_read, std::chrono::milliseconds limit, bool& timed_out) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::string output;
    char buffer[4096];
    bool reaped = false, open = true;
    while (open && !reaped) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd ready{pipe_read, POLLIN, 0};
        int polled = ::poll(&ready, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 100)));
        if (polled > 0) {
            ssize_t got = ::read(pipe_read, buffer, sizeof buffer);
            if (got > 0) output.append(buffer, static_cast<std::size_t>(got));
            else if (got == 0 || errno != EINTR) open = false;
        }
        int wait_status = 0;
        if (::waitpid(pid, &wait_status, WNOHANG) == pid) reaped = true;
    }
    ::kill(-pid, SIGKILL);  // what it forked, or all of it at the limit
    if (!reaped) while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
    ::fcntl(pipe_read, F_SETFL, O_NONBLOCK);  // what is left in the pipe, without waiting for a writer
    for (ssize_t got; (got = ::read(pipe_read, buffer, sizeof buffer)) > 0;) output.append(buffer, static_cast<std::size_t>(got));
    return output;
}

// Runs the loader and returns what it printed; nullopt when it ran out of time.
std::optional<std::string> run_loader(const std::vector<std::string>& loader, const std::vector<std::string>& paths,
                                      std::chrono::milliseconds limit) {
    std::vector<std::string> arguments = loader;
    arguments.insert(arguments.end(), paths.begin(), paths.end());
    std::vector<char*> argv;
    for (auto& argument : arguments) argv.push_back(argument.data());
    argv.push_back(nullptr);
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw InputError(loader.front(), std::string("cannot run: ") + std::strerror(errno));
    pid_t pid = -1;
    try {
        pid = spawn_loader(argv, pipe_fds[1], pipe_fds[0]);
    } catch (...) {
        ::close(pipe_fds[0]);
        ::close(pipe_fds[1]);
        throw;
    }
    ProcessGroupOnSignal group(pid);
    ::close(pipe_fds[1]);
    bool timed_out = false;
    std::string output = collect_output(pid, pipe_fds[0], limit, timed_out);
    ::close(pipe_fds[0]);
    if (timed_out) return std::nullopt;
    return output;
}

// A library named by "X: cannot open shared object file" that neither the wheel
// nor torch holds and that is not one of torch's own (libc10*, libtorch*): absent
// from this machine (a CUDA runtime, say), not a fault of the repair.
bool absent_from_machine(const std::string& reason, const std::filesystem::path& site, const std::filesystem::path& torch_dir,
                         std::string& library) {
    auto at = reason.find(kCannotOpen);
    if (at == std::string::npos) return false;
    library = reason.substr(0, at);
    if (library.starts_with("libc10") || library.starts_with("libtorch")) return false;  // torch's own: a real failure
    std::error_code ignored;
    if (std::filesystem::exists(torch_dir / "lib" / library, ignored)) return false;
    for (auto it = std::filesystem::recursive_directory_iterator(
             site, std::filesystem::directory_options::follow_directory_symlink, ignored);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ignored))
        if (it->path().filename() == library && !it->path().string().starts_with((site / "torch").string())) return false;
    return true;
}

std::string join_paths(const std::vector<std::string>& paths) {
    std::string joined;
    for (const auto& path : paths) joined += (joined.empty() ? "" : ", ") + path;
    return joined;
}

LoadOutcome outcome_of(const std::string& line, const std::map<std::string, std::string>& member_of,
                       const std::filesystem::path& site, const std::filesystem::path& torch_dir) {
    LoadOutcome outcome;
    if (line.starts_with("ok ")) {
        outcome.member = member_of.at(line.substr(3));
        outcome.status = LoadOutcome::Status::loaded;
        return outcome;
    }
    auto rest = line.substr(5);  // "fail PATH: reason"
    auto colon = rest.find(": ");
    outcome.member = member_of.at(rest.substr(0, colon));
    outcome.reason = rest.substr(colon + 2);
    std::string library;
    if (absent_from_machine(outcome.reason, site, torch_dir, library)) {
        outcome.status = LoadOutcome::Status::not_tested;
        outcome.reason = library + " is neither in the wheel nor in torch, and this machine has none";
    } else {
        outcome.status = LoadOutcome::Status::failed;
    }
    return outcome;
}


// Each directory the target names beside torch ("nvidia/cublas/lib"), linked
// into site/ from torch's own site-packages where it is there. Returns the ones
// that are not.
std::vector<std::string> lay_out_beside(const std::vector<std::string>& beside, const std::filesystem::path& torch_dir,
                                        const std::filesystem::path& site) {
    std::vector<std::string> absent;
    const auto packages = std::filesystem::absolute(torch_dir).parent_path();
    for (const auto& relative : beside) {
        std::error_code ignored;
        auto source = packages / relative, link = site / relative;
        if (relative.empty() || relative.starts_with("torch/") || std::filesystem::exists(link, ignored)) continue;
        if (!std::filesystem::is_directory(source, ignored)) {
            absent.push_back(relative);
            continue;
        }
        std::filesystem::create_directories(link.parent_path());
        std::filesystem::create_directory_symlink(source, link);
    }
    return absent;
}

std::vector<LoadOutcome> timed_out(const std::vector<std::string>& load, std::chrono::milliseconds limit) {
    std::vector<LoadOutcome> outcomes;
    for (const auto& member : load)
        outcomes.push_back({member, LoadOutcome::Status::failed,
                            "load test timed out (" + std::to_string(limit.count() / 1000) +
                                " s; an initialiser that hangs, or set WHEELFIX_LOAD_TEST_TIMEOUT)"});
    return outcomes;
}

}  // namespace

std::vector<LoadOutcome> load_test(const std::filesystem::path& wheel, const std::vector<std::string>& members,
                                   const std::vector<std::string>& load, const LoadLayout& layout,
                                   const std::vector<std::string>& loader, std::chrono::milliseconds limit) {
    const timings::Scope timer(timings::Phase::proofs);
    if (load.empty() || loader.empty()) return {};
    const auto& torch_dir = layout.torch_dir;
    TemporaryDirectory temporary;
    auto site = temporary.path() / "site";
    lay_out(wheel, members, site);
    std::filesystem::create_directory_symlink(std::filesystem::absolute(torch_dir), site / "torch");
    auto absent = lay_out_beside(layout.beside, torch_dir, site);
    std::map<std::string, std::string> member_of;
    std::vector<std::string> paths;
    for (const auto& member : load) {
        paths.push_back((site / std::string(wheel::installed_path(member))).string());
        member_of[paths.back()] = member;
    }
    std::vector<LoadOutcome> outcomes;
    auto printed = run_loader(loader, paths, limit);
    if (!printed) return timed_out(load, limit);
    const std::string& output = *printed;
    for (std::size_t start = 0, end; start < output.size(); start = end + 1) {
        end = output.find('\n', start);
        if (end == std::string::npos) end = output.size();
        auto line = output.substr(start, end - start);
        if (line.starts_with("ok ") || line.starts_with("fail ")) outcomes.push_back(outcome_of(line, member_of, site, torch_dir));
    }
    for (auto& outcome : outcomes)  // say what the layout lacked, when the loader missed a library
        if (outcome.status == LoadOutcome::Status::not_tested && !absent.empty())
            outcome.reason += " (not beside the torch given: " + join_paths(absent) + ")";
    for (const auto& member : load) {  // a loader that died half way: the rest failed
        bool seen = std::any_of(outcomes.begin(), outcomes.end(), [&](const LoadOutcome& o) { return o.member == member; });
        if (!seen) outcomes.push_back({member, LoadOutcome::Status::failed, "the loader process ended before reaching it"});
    }
    return outcomes;
}

}  // namespace wheelfix::repair
