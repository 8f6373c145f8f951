// The last rung of the verification ladder: the real dynamic loader loads the
// repaired extensions from an installed layout.
//
// Contract: load_test(wheel, members, load, layout, loader, limit) lays the wheel's
// `members` out under a fresh temporary directory as pip would install them
// (site/<member>; a "<name>.data/platlib/" member at its installed path,
// wheel::installed_path), puts layout.torch_dir (a torch package directory) at
// site/torch and each of layout.beside (directories relative to site-packages
// that the target names: "nvidia/cublas/lib") at site/<dir>, linked from the
// directory holding torch_dir where it is there (the nvidia-* wheels install
// beside torch), and also every nvidia/*/lib directory beside torch_dir (what the
// nvidia-* wheels installed with that torch provide, whatever the target names) and
// every directory there that a member's $ORIGIN-relative search path names outside
// what the wheel itself installs (what the RUNPATHs repair wrote point at); and runs `loader` (a program and its leading
// arguments: python_loader(), python3 with a ctypes script, since Python extensions
// need the interpreter's symbols) once with the paths of the `load` members appended,
// with LD_PRELOAD removed from its environment and LD_LIBRARY_PATH set to one
// directory holding only libcuda.so.1 (the driver's, below) or removed, stdin from
// /dev/null, no descriptor inherited beyond stdout (a pipe) and stderr, in its own
// process group (util/process.hpp). At `limit` the group is killed and every `load` member fails
// with "load test timed out"; when the loader ends, what it forked is killed too.
// The temporary directory and the group are registered with util/cleanup.hpp, so
// a signal removes and kills them. The loader prints one line per path,
// "ok PATH" or "fail PATH: <dlerror text>", after loading it with RTLD_NOW. Each
// of those members' outcome is loaded, failed (with the
// loader's reason), or not_tested when the reason is a library that neither the
// wheel nor torch provides, that is not torch's own (libc10*, libtorch*), and that
// this machine lacks (a CUDA runtime on a machine without one): the load is not
// proven, which says nothing against the repair (its reason names the `beside`
// directories that were absent). libcuda.so.1 is the NVIDIA driver's, never the
// wheel's: the loader finds it where the machine has it (ld.so's directories, or a
// directory of the caller's LD_LIBRARY_PATH: a container's driver mount); where no
// driver is installed, the CUDA toolkit's stub (driver_stand_in(): $CUDA_HOME or
// /usr/local/cuda, lib64/stubs/libcuda.so) stands in for it, and each member loaded
// while the stub was mapped says so (LoadOutcome::stand_in): its symbols bound
// against the stub, no GPU code ran. Without driver or stub, libcuda.so.1 is absent
// by the rule above. The temporary directory is
// removed. Loading runs the extensions' initialisers: callers offer a way out
// (repair --no-load-test).
//
// Decided without the loader: a `load` member one of whose own NEEDED the loader
// would fail on first, with a library the rule above calls absent, is not_tested
// with the reason the loader path gives, and is neither laid out nor loaded. The
// loader maps a member's NEEDED in order before any of theirs (glibc's
// breadth-first _dl_map_object_deps) and stops at the first it cannot open, so the
// member is decided when every NEEDED before X is surely found — in a directory of
// its RUNPATH (else RPATH; $ORIGIN as the layout puts it: a wheel member, or a file
// of torch_dir or of a `beside` directory), in /etc/ld.so.conf's directories or
// the default ones (analysis/needed_resolution.hpp) — and X is found in none of
// those nor anywhere the rule looks (torch_dir/lib, the wheel, the `beside`
// directories, by name; not libc10*/libtorch*). Anything else (a NEEDED with '/',
// an entry this cannot place, a library only a dependency needs) is left to the
// loader. When every `load` member is decided nothing is laid out; otherwise only
// the members the rest need (themselves and, by NEEDED name, the wheel's libraries
// they reach) are laid out and loaded. `members` says what each ELF member of the
// wheel links (its ElfReport's dynamic section).
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace wheelfix::repair {

struct LoadOutcome {
    enum class Status { loaded, failed, not_tested };  // not_tested: not proven (a library absent here)
    std::string member;
    Status status = Status::not_tested;
    std::string reason;    // dlerror text, or which library is absent here
    std::string stand_in;  // loaded with the CUDA toolkit's stub as libcuda.so.1: says so
};

struct LoadMember {
    std::string member;                    // archive path
    std::vector<std::string> needed;       // DT_NEEDED, in order
    std::vector<std::string> search_path;  // DT_RUNPATH entries, else DT_RPATH's
    std::string elf_class, machine;        // as ElfReport spells them
};

struct LoadLayout {
    std::filesystem::path torch_dir;  // the installed torch package
    std::vector<std::string> beside;  // "nvidia/cublas/lib": relative to site-packages
};

constexpr std::chrono::milliseconds kDefaultLoadTestLimit{60000};

// The loader repair uses: python3 from PATH running a ctypes script that loads each
// path with RTLD_NOW (the way `import` loads an extension, in a process that provides
// libpython's symbols) and prints "ok PATH" (" stub" appended while the driver's
// stand-in is mapped) or "fail PATH: why". Empty when PATH has no python3.
std::vector<std::string> python_loader();

// The CUDA toolkit's driver stub (libcuda.so in $CUDA_HOME or /usr/local/cuda's
// lib64/stubs or targets/<arch>-linux/lib/stubs), or empty.
std::filesystem::path driver_stand_in();

std::vector<LoadOutcome> load_test(const std::filesystem::path& wheel, const std::vector<LoadMember>& members,
                                   const std::vector<std::string>& load, const LoadLayout& layout,
                                   const std::vector<std::string>& loader,
                                   std::chrono::milliseconds limit = kDefaultLoadTestLimit);

}  // namespace wheelfix::repair
