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
// set_permissions() replaces the mode. commit() flushes,
// closes and renames over the destination (no fsync: a killed process never
// leaves a partial destination, which is the guarantee we give; surviving a power
// cut is the file system's business). An OutputFile destroyed without commit() removes its file, so a
// failed write leaves nothing behind (a process killed outright may leave the
// hidden temporary, never a partial destination).
// Stale temporaries: before creating its own, the constructor calls
// remove_stale_temporaries(dir), which deletes every ".<name>.wheelfix-<pid>-<n>"
// there that is a regular file owned by this user, whose <pid> is not a running
// process on this machine AND whose flock nobody holds (the second test covers a
// directory shared with other machines or pid namespaces, where the pid means
// nothing; a file is only ever opened with O_NOFOLLOW and unlinked, never
// followed). So what a killed run left is cleaned by the next write into the same
// directory, and a live writer's temporary is never touched.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace wheelfix {

void remove_stale_temporaries(const std::filesystem::path& directory);

class OutputFile {
public:
    explicit OutputFile(const std::filesystem::path& destination);
    ~OutputFile();
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    void write(std::span<const std::uint8_t> bytes);
    void copy_from(int source_fd, std::uint64_t offset, std::uint64_t length);
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
    std::filesystem::path temporary_;
    int fd_ = -1;
    std::vector<std::uint8_t> buffer_;
    std::uint64_t position_ = 0;
};

}  // namespace wheelfix
