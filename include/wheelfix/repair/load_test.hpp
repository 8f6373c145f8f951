// The last rung of the verification ladder (DESIGN.md): the real dynamic loader
// loads the repaired extensions from an installed layout.
//
// Contract: load_test(wheel, members, load, torch_dir, loader) lays the wheel's
// `members` out under a fresh temporary directory as pip would install them
// (site/<member>), puts `torch_dir` (a torch package directory) at site/torch, and
// runs `loader` (a program and its leading arguments; wheelfix passes python3 with
// a ctypes script, since Python extensions need the interpreter's symbols) once
// with the paths of the `load` members appended, with LD_LIBRARY_PATH and
// LD_PRELOAD removed from its environment. The loader prints one line per path,
// "ok PATH" or "fail PATH: <dlerror text>", after loading it with RTLD_NOW. Each
// of those members' outcome is loaded, failed (with the
// loader's reason), or not_tested when the reason is a library that neither the
// wheel nor torch provides, that is not torch's own (libc10*, libtorch*), and that
// this machine lacks (a CUDA runtime on a machine without one): that says nothing
// about the repair. The temporary directory is
// removed. Loading runs the extensions' initialisers: callers offer a way out
// (repair --no-load-test).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace wheelfix::repair {

struct LoadOutcome {
    enum class Status { loaded, failed, not_tested };
    std::string member;
    Status status = Status::not_tested;
    std::string reason;  // dlerror text, or which library is absent here
};

std::vector<LoadOutcome> load_test(const std::filesystem::path& wheel, const std::vector<std::string>& members,
                                   const std::vector<std::string>& load, const std::filesystem::path& torch_dir,
                                   const std::vector<std::string>& loader);

}  // namespace wheelfix::repair
