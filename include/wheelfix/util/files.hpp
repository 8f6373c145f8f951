// Plain files: reading without copying, writing atomically, telling two paths apart.
//
// Contract:
// - MappedFile maps a regular file read-only (the page cache serves only the pages
//   a reader touches, nothing is copied); bytes() stays valid while it lives. A
//   missing, unreadable or non-regular file is an InputError naming the path.
// - write_file_atomically() writes `bytes` with `perms` through an OutputFile
//   (util/output_file.hpp): a temporary beside the destination, renamed into
//   place (over an existing file only when `overwrite`: the check is part of the
//   rename); on any failure nothing appears and an InputError names the destination.
// - same_file() is true when both paths exist and name the same file.
// - refuse_existing_output() throws InputError(target, "... --overwrite ...") when
//   something already exists at `target` and `overwrite` is false: every command
//   that writes calls it before doing any work (man/wheelfix.1, --overwrite).
//   It first refuses a target the file system cannot hold with its temporary
//   beside it (ENAMETOOLONG after the work): a directory component longer than
//   NAME_MAX, a file name longer than NAME_MAX less kTemporaryRoom (the hidden
//   temporary ".<name>.wheelfix-<pid>-<n>"), an absolute path longer than PATH_MAX
//   less kTemporaryRoom; the path is shortened in the message ("first…last").
// - starts_like_zip() is true when the file begins with "PK" (false when it cannot
//   be read or is no regular file: the caller's next step reports why).
// - Special files given where a file is read or written (a wheel, an ELF, --torch,
//   torch's version.py, --target, an index, an @file, an output): a FIFO, socket or
//   device blocks or never ends, so it is refused at once, never opened in a way
//   that can block. refuse_special_file(path) throws InputError(path, "is a FIFO,
//   not a regular file") for such a path (stat, no open); a missing path, a regular
//   file and a directory pass. read_regular_file(path, max_size) opens with
//   O_NONBLOCK (a FIFO swapped in after a check cannot block either), requires a
//   regular file of at most max_size bytes (fstat) and returns its bytes; every
//   failure is an InputError naming the path. MappedFile opens the same way.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace wheelfix {

class MappedFile {
public:
    explicit MappedFile(const std::filesystem::path& path);
    // The file open on `fd` (kept open by the caller), `path` naming it in errors.
    MappedFile(int fd, const std::filesystem::path& path);
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile();
    std::span<const std::uint8_t> bytes() const { return {data_, size_}; }

private:
    void map(int fd, const std::filesystem::path& path);
    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
};

void write_file_atomically(const std::filesystem::path& destination, std::span<const std::uint8_t> bytes,
                           std::filesystem::perms perms, bool overwrite = false);
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);
inline constexpr std::size_t kTemporaryRoom = 32;
void refuse_existing_output(const std::filesystem::path& target, bool overwrite);
bool starts_like_zip(const std::filesystem::path& path);
void refuse_special_file(const std::filesystem::path& path);
std::string read_regular_file(const std::filesystem::path& path, std::uint64_t max_size);

}  // namespace wheelfix
