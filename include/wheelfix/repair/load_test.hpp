// The last rung of the verification ladder: the real dynamic loader loads the
// repaired extensions from an installed layout.
//
// Contract: load_test(wheel, members, load, layout, loader, limit) lays the wheel's
// `members` out under a fresh temporary directory as pip would install them
// (site/<member>, a "<name>.data/platlib/" member at wheel::installed_path), puts
// layout.torch_dir (a torch package directory) at site/torch, and links into site/,
// from the directory holding torch_dir where they are there: each of layout.beside
// (directories relative to site-packages the target names: "nvidia/cublas/lib"),
// every nvidia/*/lib there (what the nvidia-* wheels installed with that torch
// provide) and every directory there that a member's $ORIGIN-relative search path
// names outside what the wheel installs (what repair's RUNPATHs point at). It runs
// `loader` (a program and its leading arguments) once with the paths of the `load`
// members appended, in its own process group (util/process.hpp: stdin /dev/null,
// only stdout and stderr inherited), LD_PRELOAD removed and LD_LIBRARY_PATH set to
// one directory holding only libcuda.so.1 (the driver's, below) or removed. At
// `limit` the group is killed and every `load` member fails with "load test timed
// out"; when the loader ends, what it forked is killed too. The directory and the
// group are registered with util/cleanup.hpp (a signal removes and kills them); the
// directory is removed.
// Each `load` member is loaded, failed (with the loader's reason), or not_tested
// when the reason is a library that neither the wheel nor torch provides, that is
// not torch's own (libc10*, libtorch*), and that this machine lacks (a CUDA runtime
// here without one): not proven, which says nothing against the repair (the reason
// names the `beside` directories that were absent). libcuda.so.1 is the NVIDIA
// driver's, never the wheel's: found where the machine has it (ld.so's directories,
// or a directory of the caller's LD_LIBRARY_PATH: a container's driver mount); with
// no driver, the CUDA toolkit's stub (driver_stand_in()) stands in, and a member
// loaded while it was mapped says so (LoadOutcome::stand_in: symbols bound, no GPU
// code ran); with neither, libcuda.so.1 is absent by the rule above. Loading runs the
// extensions' initialisers: callers offer a way out (repair --no-load-test).
//
// Decided without the loader: a `load` member one of whose own NEEDED the loader
// would fail on first, with a library the rule above calls absent, is not_tested
// with the loader path's reason, and neither laid out nor loaded. ld.so maps a
// member's NEEDED in order before any of theirs (glibc's breadth-first
// _dl_map_object_deps) and stops at the first it cannot open, so the member is
// decided when every NEEDED before X is surely found — in its RUNPATH (else RPATH;
// $ORIGIN as the layout puts it: a wheel member, or a file of torch_dir or of a
// `beside` directory) or ld.so's own directories (analysis/needed_resolution.hpp) —
// and X is found nowhere the rule looks. Anything else (a NEEDED with '/', an entry
// this cannot place, a library only a dependency needs) is left to the loader, which
// gets only the members the rest need (themselves and, by NEEDED name, the wheel's
// libraries they reach); none when every `load` member is decided. `members` says
// what each ELF member of the wheel links (its ElfReport's dynamic section).
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

// The loader repair uses: python3 from PATH (an extension needs libpython's symbols)
// running a ctypes script that loads each path with RTLD_NOW, as `import` does, and
// prints one line per path: "ok PATH", "stub PATH" (loaded while the driver's
// stand-in was mapped) or "fail PATH: <dlerror text>". Empty when PATH has no python3.
std::vector<std::string> python_loader();

// The CUDA toolkit's driver stub (libcuda.so in $CUDA_HOME or /usr/local/cuda's
// lib64/stubs or targets/<arch>-linux/lib/stubs), or empty.
std::filesystem::path driver_stand_in();

std::vector<LoadOutcome> load_test(const std::filesystem::path& wheel, const std::vector<LoadMember>& members,
                                   const std::vector<std::string>& load, const LoadLayout& layout,
                                   const std::vector<std::string>& loader,
                                   std::chrono::milliseconds limit = kDefaultLoadTestLimit);

}  // namespace wheelfix::repair
