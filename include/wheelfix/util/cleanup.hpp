// What a writing command must remove if a signal ends it: its temporaries.
//
// Contract:
// - install_signal_cleanup() (called once, by main) makes SIGINT, SIGTERM and
//   SIGHUP remove every registered temporary, kill every registered process
//   group, and end the process with status 128 + the signal (130, 143, 129).
//   The handler uses only async-signal-safe calls (unlink, openat, getdents64,
//   unlinkat, kill, nanosleep, _exit), so it is safe whatever thread it interrupts.
//   The other threads run on while it works: a directory one of them writes into
//   meanwhile is emptied again until it can be removed, and the whole removal runs
//   twice, 5 ms apart, for a temporary registered and created during the first.
// - CleanupOnSignal registers one path for as long as it lives: a file (unlinked)
//   or a directory (removed with everything below it, symlinks never followed).
//   release() unregisters early (the temporary became the destination).
//   Registration is lock-free; at most kSlots paths of up to PATH_MAX bytes are
//   held at once (beyond that a path is simply not registered: the normal
//   destructors still remove it, and the next write removes a stale one).
// - ProcessGroupOnSignal registers a child's process group, killed (SIGKILL)
//   by the handler before the files go.
// Not covered: SIGKILL (nothing can run); there the output is still only ever a
// complete file (OutputFile renames into place) and a stale temporary is removed
// by the next write into the same directory (util/output_file.hpp).
#pragma once

#include <filesystem>
#include <sys/types.h>

namespace wheelfix {

void install_signal_cleanup();

class CleanupOnSignal {
public:
    enum class Kind { file, directory };
    CleanupOnSignal(const std::filesystem::path& path, Kind kind);
    ~CleanupOnSignal() { release(); }
    CleanupOnSignal(const CleanupOnSignal&) = delete;
    CleanupOnSignal& operator=(const CleanupOnSignal&) = delete;
    void release();

private:
    int slot_ = -1;
};

class ProcessGroupOnSignal {
public:
    explicit ProcessGroupOnSignal(pid_t group);
    ~ProcessGroupOnSignal() { release(); }
    ProcessGroupOnSignal(const ProcessGroupOnSignal&) = delete;
    ProcessGroupOnSignal& operator=(const ProcessGroupOnSignal&) = delete;
    void release();

private:
    int slot_ = -1;
};

}  // namespace wheelfix
