// load_test: extract, lay out like site-packages, let a child process dlopen.
#include "wheelfix/repair/load_test.hpp"

#include "wheelfix/analysis/needed_resolution.hpp"
#include "wheelfix/util/cleanup.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/output_file.hpp"
#include "wheelfix/util/process.hpp"
#include "wheelfix/util/text.hpp"
#include "wheelfix/util/timings.hpp"
#include "wheelfix/wheel/wheel.hpp"
#include "wheelfix/zip/archive.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <cstdlib>
#include <map>
#include <set>

namespace wheelfix::repair {
namespace {

constexpr std::string_view kCannotOpen = ": cannot open shared object file";

// The load test's directory in TMPDIR, removed with all it holds.
class TemporaryDirectory {
public:
    TemporaryDirectory() : path_(create_temporary_directory(std::filesystem::temp_directory_path() / "wheelfix-load", on_signal_)) {}
    ~TemporaryDirectory() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    TemporaryDirectory(const TemporaryDirectory&) = delete;
    TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::optional<CleanupOnSignal> on_signal_;  // before path_: set while path_ is made
    std::filesystem::path path_;
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

// Runs the loader and returns what it printed; nullopt when it ran out of time. The
// child gets the caller's environment without LD_LIBRARY_PATH and LD_PRELOAD, plus
// `extra` ("NAME=value").
std::optional<std::string> run_loader(const std::vector<std::string>& loader, const std::vector<std::string>& paths,
                                      std::chrono::milliseconds limit, const std::vector<std::string>& extra) {
    std::vector<std::string> arguments = loader;
    arguments.insert(arguments.end(), paths.begin(), paths.end());
    ProcessOptions options;
    options.limit = limit;
    options.drop_environment = {"LD_LIBRARY_PATH", "LD_PRELOAD", "WHEELFIX_LOAD_TEST_STUB"};
    options.add_environment = extra;
    ProcessResult result = run_process(arguments, options);
    if (result.timed_out) return std::nullopt;
    return std::move(result.output);
}

// Whether a library the loader could not open is one the wheel or torch provides:
// torch's own (libc10*, libtorch*: missing is a real failure), a file of the wheel
// (laid out or not), or in torch_dir/lib. Both rules for "absent" start here.
bool wheel_or_torch_provides(const std::string& library, const std::filesystem::path& torch_dir,
                             const std::set<std::string>& wheel_files) {
    if (library.starts_with("libc10") || library.starts_with("libtorch") || wheel_files.contains(library)) return true;
    std::error_code ignored;
    return std::filesystem::exists(torch_dir / "lib" / library, ignored);
}

// A library named by "X: cannot open shared object file" that neither the wheel
// nor torch holds and that is not one of torch's own (libc10*, libtorch*): absent
// from this machine (a CUDA runtime, say), not a fault of the repair.
bool absent_from_machine(const std::string& reason, const std::filesystem::path& site, const std::filesystem::path& torch_dir,
                         const std::set<std::string>& wheel_files, std::string& library) {
    auto at = reason.find(kCannotOpen);
    if (at == std::string::npos) return false;
    library = reason.substr(0, at);
    if (wheel_or_torch_provides(library, torch_dir, wheel_files)) return false;
    std::error_code ignored;
    for (auto it = std::filesystem::recursive_directory_iterator(
             site, std::filesystem::directory_options::follow_directory_symlink, ignored);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ignored))
        if (it->path().filename() == library && !it->path().string().starts_with((site / "torch").string())) return false;
    return true;
}

// ---- the driver -------------------------------------------------------------------

constexpr const char* kDriver = "libcuda.so.1";

// Where the loader finds libcuda.so.1: the machine's driver in ld.so's own
// directories (nothing to do), a driver in a directory of the caller's
// LD_LIBRARY_PATH, the toolkit's stub standing in, or nowhere.
struct DriverLocation {
    enum class Kind { system, library_path, stub, none };
    Kind kind = Kind::none;
    std::filesystem::path file;  // library_path, stub: the file the loader gets as libcuda.so.1

    bool found() const { return kind != Kind::none; }
};

// Whether ld.so finds `name` in its own directories: /etc/ld.so.conf's, then the
// default ones for the ELF class and machine.
bool in_system_directories(const std::string& name, const std::string& elf_class, const std::string& machine) {
    static const std::vector<std::string> configured = analysis::read_ld_so_conf("/");
    std::error_code ignored;
    for (const auto& directory : configured)
        if (std::filesystem::exists(std::filesystem::path(directory) / name, ignored)) return true;
    for (const auto& directory : analysis::default_directories(elf_class, machine))
        if (std::filesystem::exists(std::filesystem::path(directory) / name, ignored)) return true;
    return false;
}

DriverLocation locate_driver(const std::string& elf_class, const std::string& machine) {
    if (in_system_directories(kDriver, elf_class, machine)) return {DriverLocation::Kind::system, {}};
    const char* library_path = std::getenv("LD_LIBRARY_PATH");
    std::error_code ignored;
    for (const auto& directory : split_nonempty(library_path ? library_path : "", ':')) {
        const std::filesystem::path candidate = std::filesystem::path(directory) / kDriver;
        if (candidate.is_absolute() && std::filesystem::is_regular_file(candidate, ignored))
            return {DriverLocation::Kind::library_path, candidate};
    }
    if (auto stub = driver_stand_in(); !stub.empty()) return {DriverLocation::Kind::stub, stub};
    return {};
}

// What a not_tested outcome adds when directories the target names were not beside torch.
std::string not_beside_note(const std::vector<std::string>& absent) {
    return " (not beside the torch given: " + join(absent, ", ") + ")";
}

std::string absent_reason(const std::string& library) {
    if (library == kDriver) return "libcuda.so.1 is the NVIDIA driver's: this machine has no driver and no CUDA toolkit stub";
    return library + " is neither in the wheel nor in torch, and this machine has none";
}

// One line of the loader's: "ok PATH", "stub PATH" (loaded while the driver's
// stand-in was mapped) or "fail PATH: reason".
LoadOutcome outcome_of(const std::string& line, const std::map<std::string, std::string>& member_of,
                       const std::filesystem::path& site, const std::filesystem::path& torch_dir,
                       const std::set<std::string>& wheel_files, const std::string& stand_in) {
    LoadOutcome outcome;
    if (line.starts_with("ok ") || line.starts_with("stub ")) {
        const bool stub = line.starts_with("stub ");
        outcome.member = member_of.at(line.substr(stub ? 5 : 3));
        outcome.status = LoadOutcome::Status::loaded;
        if (stub) outcome.stand_in = stand_in;
        return outcome;
    }
    auto rest = line.substr(5);  // "fail PATH: reason"
    auto colon = rest.find(": ");
    outcome.member = member_of.at(rest.substr(0, colon));
    outcome.reason = rest.substr(colon + 2);
    std::string library;
    if (absent_from_machine(outcome.reason, site, torch_dir, wheel_files, library)) {
        outcome.status = LoadOutcome::Status::not_tested;
        outcome.reason = absent_reason(library);
    } else {
        outcome.status = LoadOutcome::Status::failed;
    }
    return outcome;
}

// Whether a laid-out member puts `relative` (a directory below site/) in place.
bool laid_out_by(const std::string& relative, const std::vector<std::string>& installed) {
    return std::any_of(installed.begin(), installed.end(),
                       [&](const std::string& path) { return path == relative || path.starts_with(relative + "/"); });
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

// The directories beside torch_dir that a member's $ORIGIN-relative search path entry
// names ("$ORIGIN/../nvidia/cu13/lib" from sgl_kernel/x.so: "nvidia/cu13/lib"), when
// they are there and lie outside what the wheel lays out itself: what repair's
// RUNPATHs point at, whatever the target names.
std::vector<std::string> named_by_search_paths(const std::vector<LoadMember>& members,
                                               const std::filesystem::path& packages) {
    std::set<std::string> own_tops;  // top-level directories the wheel installs into
    for (const auto& member : members) {
        const std::string installed(wheel::installed_path(member.member));
        own_tops.insert(installed.substr(0, installed.find('/')));
    }
    std::vector<std::string> found;
    for (const auto& member : members) {
        const auto origin = std::filesystem::path(std::string(wheel::installed_path(member.member))).parent_path();
        for (const auto& entry : member.search_path) {
            const auto rest = after_origin(entry);  // "/..." after it, or the entry is not one of these
            if (!rest || rest->size() < 2 || rest->front() != '/') continue;
            const std::string relative = (origin / rest->substr(1)).lexically_normal().generic_string();
            const std::string top = relative.substr(0, relative.find('/'));
            if (relative.empty() || relative.starts_with("..") || top == "torch" || own_tops.contains(top)) continue;
            std::error_code ignored;
            if (std::filesystem::is_directory(packages / relative, ignored) &&
                std::find(found.begin(), found.end(), relative) == found.end())
                found.push_back(relative.ends_with("/") ? relative.substr(0, relative.size() - 1) : relative);
        }
    }
    return found;
}

// The layout with what the installed site provides added to `beside`: every
// nvidia/*/lib directory beside torch_dir (what the nvidia-* wheels installed with that
// torch hold, which torch's own RUNPATHs point at) and the directories the members'
// search paths name there.
LoadLayout with_installed_beside(const LoadLayout& layout, const std::vector<LoadMember>& members) {
    LoadLayout installed = layout;
    const auto packages = std::filesystem::absolute(layout.torch_dir).parent_path();
    std::error_code error;
    std::vector<std::string> found;
    for (std::filesystem::directory_iterator it(packages / "nvidia", error), end; !error && it != end; it.increment(error)) {
        std::error_code ignored;
        if (std::filesystem::is_directory(it->path() / "lib", ignored))
            found.push_back("nvidia/" + it->path().filename().string() + "/lib");
    }
    std::sort(found.begin(), found.end());
    for (auto& relative : named_by_search_paths(members, packages)) found.push_back(std::move(relative));
    for (auto& relative : found)
        if (std::find(installed.beside.begin(), installed.beside.end(), relative) == installed.beside.end())
            installed.beside.push_back(std::move(relative));
    return installed;
}

// ---- deciding without the loader ------------------------------------------------

// What the layout would hold, asked without making it: the wheel's members at
// their installed paths, torch_dir at torch/, each present `beside` directory at
// its place (unless a member is laid out there, as lay_out_beside skips it).
class PlannedLayout {
public:
    PlannedLayout(const std::vector<LoadMember>& members, const LoadLayout& layout, bool driver_found)
        : torch_dir_(layout.torch_dir), packages_(std::filesystem::absolute(layout.torch_dir).parent_path()),
          driver_found_(driver_found) {
        for (const auto& member : members) installed_.push_back(std::string(wheel::installed_path(member.member)));
        for (const auto& member : members) wheel_files_.insert(base_name(member.member));
        std::error_code ignored;
        for (const auto& relative : layout.beside) {
            if (relative.empty() || relative.starts_with("torch/") || laid_out_by(relative, installed_)) continue;
            if (std::filesystem::is_directory(packages_ / relative, ignored)) beside_.push_back(relative);
            else absent_.push_back(relative);
        }
    }

    // Whether a file of the layout lies at `path` (relative to site, normalized):
    // yes, no, or nullopt where this cannot tell without the layout.
    std::optional<bool> holds(const std::filesystem::path& path) const {
        const std::string text = path.generic_string();
        if (text.empty() || text.starts_with("..") || text.starts_with("/")) return std::nullopt;
        if (std::find(installed_.begin(), installed_.end(), text) != installed_.end()) return true;
        std::error_code ignored;
        if (text.starts_with("torch/")) return std::filesystem::is_regular_file(torch_dir_ / text.substr(6), ignored);
        for (const auto& relative : beside_)
            if (text.starts_with(relative + "/"))
                return std::filesystem::is_regular_file(packages_ / text, ignored);
        return false;
    }

    // The loader path's test for a library it could not open (absent_from_machine).
    bool absent_everywhere(const std::string& library) const {
        if (wheel_or_torch_provides(library, torch_dir_, wheel_files_)) return false;
        std::error_code ignored;
        for (const auto& relative : beside_)
            for (auto it = std::filesystem::recursive_directory_iterator(
                     packages_ / relative, std::filesystem::directory_options::follow_directory_symlink, ignored);
                 it != std::filesystem::recursive_directory_iterator(); it.increment(ignored))
                if (it->path().filename() == library) return false;
        return true;
    }

    const std::vector<std::string>& absent_beside() const { return absent_; }
    const std::set<std::string>& wheel_files() const { return wheel_files_; }
    bool driver_found() const { return driver_found_; }

private:
    std::filesystem::path torch_dir_, packages_;
    bool driver_found_ = false;
    std::vector<std::string> installed_;
    std::set<std::string> wheel_files_;
    std::vector<std::string> beside_, absent_;
};

// Where ld.so would look for `name` on behalf of `member` (its search path in the
// layout, then the system's directories): found, not found, or nullopt when an
// entry is one this cannot place.
std::optional<bool> found_for(const LoadMember& member, const std::string& name, const PlannedLayout& layout) {
    if (name.find('/') != std::string::npos) return std::nullopt;
    if (name == kDriver && layout.driver_found()) return true;  // the loader's LD_LIBRARY_PATH, or ld.so's own
    const std::filesystem::path origin = std::filesystem::path(std::string(wheel::installed_path(member.member))).parent_path();
    for (const auto& entry : member.search_path) {
        if (const auto rest = after_origin(entry); rest && (rest->empty() || rest->front() == '/')) {
            auto path = (origin / std::filesystem::path(rest->empty() ? "." : rest->substr(1)) / name).lexically_normal();
            auto held = layout.holds(path);
            if (!held) return std::nullopt;
            if (*held) return true;
            continue;
        }
        if (!entry.starts_with("/") || entry.find('$') != std::string::npos) return std::nullopt;
        std::error_code ignored;
        if (std::filesystem::exists(std::filesystem::path(entry) / name, ignored)) return true;
    }
    return in_system_directories(name, member.elf_class, member.machine);
}

// The library the loader would fail on first for `member`, when that is one it
// calls absent (the contract); nullopt when only the loader can say.
std::optional<std::string> decided_absent(const LoadMember& member, const PlannedLayout& layout) {
    for (const auto& name : member.needed) {
        auto found = found_for(member, name, layout);
        if (!found) return std::nullopt;
        if (*found) continue;
        if (layout.absent_everywhere(name)) return name;
        return std::nullopt;  // not found, yet somewhere the rule looks: the loader's own words
    }
    return std::nullopt;
}

// The members to lay out for loading `load`: themselves and the wheel's libraries
// their NEEDED reach, by file name.
std::vector<std::string> needed_closure(const std::vector<LoadMember>& members, const std::vector<std::string>& load) {
    std::map<std::string, std::vector<const LoadMember*>> by_file;
    for (const auto& member : members) by_file[base_name(member.member)].push_back(&member);
    std::set<std::string> chosen(load.begin(), load.end());
    std::vector<std::string> queue(load.begin(), load.end());
    while (!queue.empty()) {
        const std::string name = queue.back();
        queue.pop_back();
        auto it = std::find_if(members.begin(), members.end(), [&](const LoadMember& m) { return m.member == name; });
        if (it == members.end()) continue;
        for (const auto& needed : it->needed)
            if (auto libraries = by_file.find(needed); libraries != by_file.end())
                for (const auto* library : libraries->second)
                    if (chosen.insert(library->member).second) queue.push_back(library->member);
    }
    std::vector<std::string> ordered;  // in the wheel's order
    for (const auto& member : members)
        if (chosen.contains(member.member)) ordered.push_back(member.member);
    return ordered;
}

std::vector<LoadOutcome> timed_out(const std::vector<std::string>& load, std::chrono::milliseconds limit) {
    std::vector<LoadOutcome> outcomes;
    for (const auto& member : load)
        outcomes.push_back({member, LoadOutcome::Status::failed,
                            "load test timed out (" + std::to_string(limit.count() / 1000) +
                                " s; an initialiser that hangs, or set WHEELFIX_LOAD_TEST_TIMEOUT)",
                            {}});
    return outcomes;
}

// Lays `members` out and lets the loader load `load` (the contract's loader path).
std::vector<LoadOutcome> run_load(const std::filesystem::path& wheel, const std::vector<std::string>& members,
                                  const std::vector<std::string>& load, const LoadLayout& layout,
                                  const std::vector<std::string>& loader, std::chrono::milliseconds limit,
                                  const std::set<std::string>& wheel_files, const DriverLocation& driver) {
    const auto& torch_dir = layout.torch_dir;
    TemporaryDirectory temporary;
    auto site = temporary.path() / "site";
    lay_out(wheel, members, site);
    std::vector<std::string> environment;  // the driver's directory: libcuda.so.1 alone
    std::string stand_in;
    if (driver.kind == DriverLocation::Kind::library_path || driver.kind == DriverLocation::Kind::stub) {
        const auto directory = temporary.path() / "driver";
        std::filesystem::create_directories(directory);
        std::filesystem::create_symlink(driver.file, directory / kDriver);
        environment.push_back("LD_LIBRARY_PATH=" + directory.string());
        if (driver.kind == DriverLocation::Kind::stub) {
            std::error_code ignored;
            environment.push_back("WHEELFIX_LOAD_TEST_STUB=" + std::filesystem::canonical(driver.file, ignored).string());
            stand_in = "libcuda.so.1 was the CUDA toolkit's stub " + driver.file.string() +
                       " (no NVIDIA driver on this machine): symbols bound, no GPU code ran";
        }
    }
    std::filesystem::create_directory_symlink(std::filesystem::absolute(torch_dir), site / "torch");
    auto absent = lay_out_beside(layout.beside, torch_dir, site);
    std::map<std::string, std::string> member_of;
    std::vector<std::string> paths;
    for (const auto& member : load) {
        paths.push_back((site / std::string(wheel::installed_path(member))).string());
        member_of[paths.back()] = member;
    }
    std::vector<LoadOutcome> outcomes;
    auto printed = run_loader(loader, paths, limit, environment);
    if (!printed) return timed_out(load, limit);
    const std::string& output = *printed;
    for (std::size_t start = 0, end; start < output.size(); start = end + 1) {
        end = output.find('\n', start);
        if (end == std::string::npos) end = output.size();
        auto line = output.substr(start, end - start);
        if (line.starts_with("ok ") || line.starts_with("stub ") || line.starts_with("fail "))
            outcomes.push_back(outcome_of(line, member_of, site, torch_dir, wheel_files, stand_in));
    }
    for (auto& outcome : outcomes)  // say what the layout lacked, when the loader missed a library
        if (outcome.status == LoadOutcome::Status::not_tested && !absent.empty())
            outcome.reason += not_beside_note(absent);
    for (const auto& member : load) {  // a loader that died half way: the rest failed
        bool seen = std::any_of(outcomes.begin(), outcomes.end(), [&](const LoadOutcome& o) { return o.member == member; });
        if (!seen) outcomes.push_back({member, LoadOutcome::Status::failed, "the loader process ended before reaching it", {}});
    }
    return outcomes;
}

}  // namespace

std::vector<LoadOutcome> load_test(const std::filesystem::path& wheel, const std::vector<LoadMember>& members,
                                   const std::vector<std::string>& load, const LoadLayout& layout,
                                   const std::vector<std::string>& loader, std::chrono::milliseconds limit) {
    const timings::Scope timer(timings::Phase::proofs);
    if (load.empty() || loader.empty()) return {};
    const LoadLayout installed = with_installed_beside(layout, members);
    const DriverLocation driver =
        members.empty() ? DriverLocation{} : locate_driver(members.front().elf_class, members.front().machine);
    const PlannedLayout planned(members, installed, driver.found());
    std::map<std::string, LoadOutcome> decided;
    std::vector<std::string> rest;
    for (const auto& name : load) {
        auto member = std::find_if(members.begin(), members.end(), [&](const LoadMember& m) { return m.member == name; });
        if (member == members.end()) throw std::invalid_argument("load_test: no member " + name + " in " + wheel.string());
        if (auto library = decided_absent(*member, planned)) {
            LoadOutcome outcome{name, LoadOutcome::Status::not_tested, absent_reason(*library), {}};
            if (!planned.absent_beside().empty())
                outcome.reason += not_beside_note(planned.absent_beside());
            decided.emplace(name, std::move(outcome));
        } else {
            rest.push_back(name);
        }
    }
    std::vector<LoadOutcome> outcomes;
    if (!rest.empty())
        outcomes = run_load(wheel, needed_closure(members, rest), rest, installed, loader, limit, planned.wheel_files(), driver);
    for (auto& [name, outcome] : decided) outcomes.push_back(std::move(outcome));
    auto place = [&](const LoadOutcome& outcome) {
        return std::find(load.begin(), load.end(), outcome.member) - load.begin();
    };
    std::stable_sort(outcomes.begin(), outcomes.end(),
                     [&](const LoadOutcome& a, const LoadOutcome& b) { return place(a) < place(b); });
    return outcomes;
}

std::vector<std::string> python_loader() {
    // RTLD_NOW binds every symbol at once; "stub" while the driver's stand-in is mapped
    // (/proc/self/maps; without /proc a stub offered counts as mapped: the loader
    // cannot tell, and the note must not be lost).
    static constexpr const char* script = R"(import ctypes, os, sys
stub = os.environ.get("WHEELFIX_LOAD_TEST_STUB", "")
def stub_mapped():
    if not stub:
        return False
    try:
        with open("/proc/self/maps") as maps:
            return stub in maps.read()
    except OSError:
        return True
for path in sys.argv[1:]:
    try:
        ctypes.CDLL(path, mode=os.RTLD_NOW)
        print(("stub " if stub_mapped() else "ok ") + path, flush=True)
    except OSError as error:
        reason = str(error)
        if reason.startswith(path + ": "):
            reason = reason[len(path) + 2:]
        print("fail " + path + ": " + reason, flush=True)
)";
    const char* path = std::getenv("PATH");
    for (const auto& directory : split_nonempty(path ? path : "", ':')) {  // an empty entry is not searched
        const std::filesystem::path candidate = std::filesystem::path(directory) / "python3";
        if (::access(candidate.c_str(), X_OK) == 0) return {candidate.string(), "-c", script};
    }
    return {};
}

std::filesystem::path driver_stand_in() {
    std::vector<std::filesystem::path> roots;
    if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home == '/') roots.emplace_back(home);
    roots.emplace_back("/usr/local/cuda");
    utsname names{};
    const std::string machine = ::uname(&names) == 0 ? names.machine : "x86_64";
    std::error_code ignored;
    for (const auto& root : roots)
        for (const auto& relative : {std::filesystem::path("lib64/stubs/libcuda.so"),
                                     std::filesystem::path("targets") / (machine == "aarch64" ? "sbsa-linux" : machine + "-linux") /
                                         "lib/stubs/libcuda.so"})
            if (std::filesystem::is_regular_file(root / relative, ignored)) return root / relative;
    return {};
}

}  // namespace wheelfix::repair
