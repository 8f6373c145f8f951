// The file a writer fills before it becomes the destination: created empty and
// unique next to the destination, written sequentially, renamed into place.
//
// Contract:
// - OutputFile(destination) creates "<dir>/.<name>.wheelfix-<pid>-<random>" (O_EXCL,
//   mode 0666 & ~umask: the permissions a new file would get), flocked while the
//   process lives and registered with util/cleanup.hpp (signals remove it).
// - write() buffers small pieces and hands big ones to the kernel; copy_from() appends
//   a range of another file in the kernel (copy_file_range, a reflink where the file
//   system can; pread/write where it cannot). Every system-call failure (ENOSPC,
//   EFBIG under `ulimit -f`, EIO, ...) is an InputError naming the destination.
// - reserve(bytes) is a hint: fallocate FALLOC_FL_KEEP_SIZE, so that ext4 skips its
//   delayed allocation page by page (docs/decisions.md, "Zip: libzip to read, our
//   writer to write"); nothing where the file system cannot. commit() frees what was
//   reserved past the last byte written. set_permissions() replaces the mode.
// - commit() flushes, closes and moves the temporary to the destination
//   (move_into_place): with Existing::refuse (the default) in one atomic step that
//   fails when something exists there (renameat2 RENAME_NOREPLACE, or link + unlink),
//   so of two processes writing one output the second refuses with an InputError and
//   never replaces the first's; with Existing::replace (--overwrite) by rename. No
//   fsync: the guarantee is that a killed process never leaves a partial destination.
//   Destroyed without commit(), it removes its file.
// - remove_stale_temporaries(dir), which every constructor calls first, deletes each
//   ".<name>.wheelfix-<pid>-<n>" there that is a regular file (or a StagedFile's
//   directory) owned by this user, whose <pid> runs on this machine no more AND whose
//   flock nobody holds (for directories shared with other machines or pid namespaces);
//   opened with O_NOFOLLOW, only unlinked. So what a killed run left goes with the next
//   write into the directory, and a live writer's temporary is never touched.
// - StagedFile is for a result that must pass proofs before it appears: path() is
//   "<dir>/.<name>.wheelfix-<pid>-<n>/<name>" (a flocked hidden directory of the same
//   pattern; the file keeps its name, which wheel readers parse). Write it (through an
//   OutputFile), prove it, then publish() moves it as commit() does. Destroyed, it
//   removes its directory and, unpublished, the file; signals remove them too.
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
