// Temporaries removed when a signal ends the process (util/cleanup.hpp).
//
// The registry is a fixed table of slots, each free, being filled, or live; the
// handler reads only live slots and allocates nothing, so it may interrupt any
// thread at any point (including one that is registering or releasing).
#include "wheelfix/util/cleanup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace wheelfix {
namespace {

constexpr int kSlots = 64;
constexpr int kGroups = 16;
constexpr int kMaxDepth = 32;
enum : int { kFree = 0, kFilling = 1, kLive = 2 };

struct PathSlot {
    std::atomic<int> state{kFree};
    CleanupOnSignal::Kind kind = CleanupOnSignal::Kind::file;
    char path[PATH_MAX] = {};
};

PathSlot g_paths[kSlots];
std::atomic<pid_t> g_groups[kGroups];

// linux_dirent64 as getdents64 returns it.
struct DirectoryEntry {
    ino64_t inode;
    off64_t next;
    unsigned short length;
    unsigned char type;
    char name[1];  // NUL-terminated, runs on to `length`
};

bool is_dot(const char* name) { return name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0)); }

void remove_tree_at(int parent, const char* name, int depth);

// Removes everything in the open directory `fd`; repeats until a read finds it
// empty (removing entries while reading may make getdents skip some).
void empty_directory(int fd, int depth) {
    alignas(DirectoryEntry) char buffer[2048];
    for (int pass = 0; pass < 1000; ++pass) {
        ::lseek(fd, 0, SEEK_SET);
        bool removed_any = false;
        for (long got; (got = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer)) > 0;) {
            for (long at = 0; at < got;) {
                auto* entry = reinterpret_cast<DirectoryEntry*>(buffer + at);
                at += entry->length;
                if (is_dot(entry->name)) continue;
                removed_any = true;
                if (entry->type == DT_DIR || (::unlinkat(fd, entry->name, 0) != 0 && errno == EISDIR))
                    remove_tree_at(fd, entry->name, depth + 1);
            }
        }
        if (!removed_any) return;
    }
}

void remove_tree_at(int parent, const char* name, int depth) {
    if (depth > kMaxDepth) return;
    // Another thread of ours may create a file in it meanwhile (the handler runs on
    // one thread; the others go on): emptied again while that makes it ENOTEMPTY.
    for (int attempt = 0; attempt < 100; ++attempt) {
        int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            empty_directory(fd, depth);
            ::close(fd);
        }
        if (::unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno != ENOTEMPTY) return;
    }
}

void remove_registered() {
    for (auto& group : g_groups) {
        pid_t pgid = group.load();
        if (pgid > 0) ::kill(-pgid, SIGKILL);
    }
    for (auto& slot : g_paths) {
        if (slot.state.load() != kLive) continue;
        if (slot.kind == CleanupOnSignal::Kind::file) ::unlink(slot.path);
        else remove_tree_at(AT_FDCWD, slot.path, 0);
    }
}

void on_signal(int signal) {
    int saved = errno;
    remove_registered();
    // The other threads ran on meanwhile: one may have registered and created a
    // temporary after its slot was passed. A second pass, once they had a moment,
    // removes that too (nanosleep is async-signal-safe).
    const timespec moment{0, 5'000'000};
    ::nanosleep(&moment, nullptr);
    remove_registered();
    errno = saved;
    ::_exit(128 + signal);
}

}  // namespace

void install_signal_cleanup() {
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&action.sa_mask, signal);  // one cleanup, not two at once
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
        struct sigaction previous {};
        // A signal the parent set to be ignored (nohup) stays ignored.
        if (::sigaction(signal, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
        ::sigaction(signal, &action, nullptr);
    }
}

CleanupOnSignal::CleanupOnSignal(const std::filesystem::path& path, Kind kind) {
    std::error_code ignored;
    std::string absolute = std::filesystem::absolute(path, ignored).string();
    if (absolute.empty() || absolute.size() >= PATH_MAX) return;
    for (int i = 0; i < kSlots; ++i) {
        int expected = kFree;
        if (!g_paths[i].state.compare_exchange_strong(expected, kFilling)) continue;
        g_paths[i].kind = kind;
        std::memcpy(g_paths[i].path, absolute.c_str(), absolute.size() + 1);
        g_paths[i].state.store(kLive);
        slot_ = i;
        return;
    }
}

void CleanupOnSignal::release() {
    if (slot_ < 0) return;
    g_paths[slot_].state.store(kFree);
    slot_ = -1;
}

ProcessGroupOnSignal::ProcessGroupOnSignal(pid_t group) {
    for (int i = 0; i < kGroups; ++i) {
        pid_t expected = 0;
        if (g_groups[i].compare_exchange_strong(expected, group)) {
            slot_ = i;
            return;
        }
    }
}

void ProcessGroupOnSignal::release() {
    if (slot_ < 0) return;
    g_groups[slot_].store(0);
    slot_ = -1;
}

}  // namespace wheelfix
