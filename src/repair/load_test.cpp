// load_test: extract, lay out like site-packages, let a child process dlopen.
#include "wheelfix/repair/load_test.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/output_file.hpp"
#include "wheelfix/zip/archive.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

extern char** environ;

namespace wheelfix::repair {
namespace {

constexpr std::string_view kCannotOpen = ": cannot open shared object file";

class TemporaryDirectory {
public:
    TemporaryDirectory() {
        std::string pattern = (std::filesystem::temp_directory_path() / "wheelfix-load-XXXXXX").string();
        if (!::mkdtemp(pattern.data())) throw InputError(pattern, std::string("cannot create: ") + std::strerror(errno));
        path_ = pattern;
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
};

// Extracts the members into site/.
void lay_out(const std::filesystem::path& wheel, const std::vector<std::string>& members,
                                 const std::filesystem::path& site) {
    auto archive = zip::Archive::open(wheel);
    for (const auto& name : members) {
        const auto* member = archive.find(name);
        if (!member) throw std::invalid_argument("load_test: no member " + name + " in " + wheel.string());
        auto path = site / name;
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

// Runs the loader and returns what it printed.
std::string run_loader(const std::vector<std::string>& loader, const std::vector<std::string>& paths) {
    std::vector<std::string> arguments = loader;
    arguments.insert(arguments.end(), paths.begin(), paths.end());
    std::vector<char*> argv;
    for (auto& argument : arguments) argv.push_back(argument.data());
    argv.push_back(nullptr);
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) throw InputError(loader.front(), std::string("cannot run: ") + std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    auto environment = child_environment();
    pid_t pid = 0;
    int status = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environment.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_fds[1]);
    std::string output;
    char buffer[4096];
    for (ssize_t got; (got = ::read(pipe_fds[0], buffer, sizeof buffer)) != 0;) {
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) break;
        output.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(pipe_fds[0]);
    if (status != 0) throw InputError(loader.front(), std::string("cannot run: ") + std::strerror(status));
    int wait_status = 0;
    while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {}
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
    for (auto it = std::filesystem::recursive_directory_iterator(site, ignored);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ignored))
        if (it->path().filename() == library && !it->path().string().starts_with((site / "torch").string())) return false;
    return true;
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

}  // namespace

std::vector<LoadOutcome> load_test(const std::filesystem::path& wheel, const std::vector<std::string>& members,
                                   const std::vector<std::string>& load, const std::filesystem::path& torch_dir,
                                   const std::vector<std::string>& loader) {
    if (load.empty() || loader.empty()) return {};
    TemporaryDirectory temporary;
    auto site = temporary.path() / "site";
    lay_out(wheel, members, site);
    std::filesystem::create_directory_symlink(std::filesystem::absolute(torch_dir), site / "torch");
    std::map<std::string, std::string> member_of;
    std::vector<std::string> paths;
    for (const auto& member : load) {
        paths.push_back((site / member).string());
        member_of[paths.back()] = member;
    }
    std::vector<LoadOutcome> outcomes;
    std::string output = run_loader(loader, paths);
    for (std::size_t start = 0, end; start < output.size(); start = end + 1) {
        end = output.find('\n', start);
        if (end == std::string::npos) end = output.size();
        auto line = output.substr(start, end - start);
        if (line.starts_with("ok ") || line.starts_with("fail ")) outcomes.push_back(outcome_of(line, member_of, site, torch_dir));
    }
    for (const auto& member : load) {  // a loader that died half way: the rest failed
        bool seen = std::any_of(outcomes.begin(), outcomes.end(), [&](const LoadOutcome& o) { return o.member == member; });
        if (!seen) outcomes.push_back({member, LoadOutcome::Status::failed, "the loader process ended before reaching it"});
    }
    return outcomes;
}

}  // namespace wheelfix::repair
