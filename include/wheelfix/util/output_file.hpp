// The file a writer fills before it becomes the destination: created empty and
// unique next to the destination, written sequentially, renamed into place.
//
// Contract: the constructor creates "<dir>/.<name>.wheelfix-<pid>-<random>" with
// O_EXCL and mode 0666 & ~umask (so the result gets the permissions a new file
// would), and holds an exclusive flock on it while the process lives.
// write() buffers small pieces and hands big ones to the kernel directly; every
// system-call failure (ENOSPC, EFBIG under `ulimit -f`, EIO, ...) is an InputError
// naming the destination. copy_from() appends a range of another file in the
// kernel (copy_file_range: no pass through user memory, and a reflink where the
// file system can), falling back to pread/write where the kernel cannot.
// reserve(bytes) allocates the file's blocks up to that size before they are
// written (fallocate, FALLOC_FL_KEEP_SIZE: the size grows only as bytes are
// written): a hint, nothing where the file system cannot (its errors are the
// writes' to report); commit() frees what was reserved past the last byte
// written. ext4 then skips its delayed allocation page by page (docs/decisions.md,
// "Zip: libzip to read, our writer to write").
// set_permissions() replaces the mode. commit() flushes,
// closes and moves the temporary to the destination: with Existing::refuse (the
// default) in one atomic step that fails when something exists there
// (renameat2 RENAME_NOREPLACE, or link + unlink where the file system lacks it),
// so of two processes writing the same output the second refuses with an
// InputError naming it, never replaces the first's; with Existing::replace
// (--overwrite) it renames over the destination (no fsync: a killed process never
// leaves a partial destination, which is the guarantee we give; surviving a power
// cut is the file system's business). An OutputFile destroyed without commit() removes its file, so a
// failed write leaves nothing behind (a process killed outright may leave the
// hidden temporary, never a partial destination). While it lives the temporary
// is registered with util/cleanup.hpp, so SIGINT/SIGTERM/SIGHUP remove it too.
// Stale temporaries: before creating its own, the constructor calls
// remove_stale_temporaries(dir), which deletes every ".<name>.wheelfix-<pid>-<n>"
// there that is a regular file owned by this user, whose <pid> is not a running
// process on this machine AND whose flock nobody holds (the second test covers a
// directory shared with other machines or pid namespaces, where the pid means
// nothing; a file is only ever opened with O_NOFOLLOW and unlinked, never
// followed). So what a killed run left is cleaned by the next write into the same
// directory, and a live writer's temporary is never touched.
// StagedFile is for a writer whose result must pass proofs before it may
// appear: path() is "<dir>/.<name>.wheelfix-<pid>-<n>/<name>" (a hidden
// directory of the same pattern, flocked, so a killed run's is cleaned the same
// way; the file keeps its own name, which wheel readers parse). Write it there
// (through an OutputFile), prove it, then publish() moves it to the destination
// exactly as commit() does (refusing an existing one unless Existing::replace).
// Destroyed, it removes its directory and, unpublished, the staged file;
// signals remove them too. move_into_place() is that one step on its own.
#pragma once

#include "wheelfix/util/cleanup.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace wheelfix {

void remove_stale_temporaries(const std::filesystem::path& directory);

// A fresh directory of StagedFile's pattern for `destination` (mode 0700, registered
// in `on_signal` before it exists; InputError when none can be made), without the
// stale sweep and the flock: the caller removes it.
std::filesystem::path create_temporary_directory(const std::filesystem::path& destination,
                                                 std::optional<CleanupOnSignal>& on_signal);

// What commit() does when something exists at the destination by then.
enum class Existing { refuse, replace };

void move_into_place(const std::filesystem::path& from, const std::filesystem::path& to, Existing existing);

class StagedFile {
public:
    StagedFile(const std::filesystem::path& destination, Existing existing);
    ~StagedFile();
    StagedFile(const StagedFile&) = delete;
    StagedFile& operator=(const StagedFile&) = delete;
    const std::filesystem::path& path() const { return path_; }
    void publish();

private:
    std::filesystem::path destination_;
    Existing existing_;
    std::filesystem::path directory_;
    std::filesystem::path path_;
    int lock_fd_ = -1;
    bool published_ = false;
    std::optional<CleanupOnSignal> on_signal_;
};

class OutputFile {
public:
    explicit OutputFile(const std::filesystem::path& destination, Existing existing = Existing::refuse);
    ~OutputFile();
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    void write(std::span<const std::uint8_t> bytes);
    void copy_from(int source_fd, std::uint64_t offset, std::uint64_t length);
    void reserve(std::uint64_t bytes);
    std::uint64_t position() const { return position_; }
    void set_permissions(std::filesystem::perms perms);
    void commit();

    const std::filesystem::path& destination() const { return destination_; }

private:
    void flush();
    void write_fully(std::span<const std::uint8_t> bytes);
    bool copy_in_kernel(int source_fd, std::uint64_t& offset, std::uint64_t& length);
    void copy_through_memory(int source_fd, std::uint64_t offset, std::uint64_t length);
    [[noreturn]] void fail(const std::string& what, int error) const;

    std::filesystem::path destination_;
    Existing existing_;
    std::filesystem::path temporary_;
    std::optional<CleanupOnSignal> on_signal_;
    int fd_ = -1;
    std::vector<std::uint8_t> buffer_;
    std::uint64_t position_ = 0;
    std::uint64_t reserved_ = 0;  // bytes reserve() allocated
};

}  // namespace wheelfix
