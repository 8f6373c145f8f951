// OutputFile: a unique temporary next to the destination, renamed into place.
#include "wheelfix/util/output_file.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/text.hpp"
#include "wheelfix/util/timings.hpp"

#include <linux/fs.h>  // RENAME_NOREPLACE
#include <stdio.h>     // renameat2

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <limits>
#include <random>
#include <string_view>

namespace wheelfix {
namespace {

constexpr std::size_t kBufferSize = std::size_t(1) << 20;
constexpr std::string_view kTemporaryMarker = ".wheelfix-";

// The writer's pid in a temporary's name ".<name>.wheelfix-<pid>-<n>", or 0 when
// the name is not one of ours.
pid_t writer_of(std::string_view name) {
    auto marker = name.rfind(kTemporaryMarker);
    if (name.size() < 2 || name.front() != '.' || marker == std::string_view::npos || marker < 2) return 0;
    auto rest = name.substr(marker + kTemporaryMarker.size());
    auto dash = rest.find('-');
    if (dash == std::string_view::npos || dash == 0 || dash + 1 == rest.size()) return 0;
    if (!all_digits(rest.substr(0, dash)) || !all_digits(rest.substr(dash + 1)) || dash > 9) return 0;
    return static_cast<pid_t>(std::stol(std::string(rest.substr(0, dash))));
}

// Moves `from` to `to` unless something exists at `to`, in one step: renameat2
// with RENAME_NOREPLACE, or, where the file system lacks it, link() (which never
// replaces) and unlink of the temporary. Returns 0 or the errno (EEXIST: taken).
int rename_no_replace(const std::filesystem::path& from, const std::filesystem::path& to) {
    if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return errno;
    if (::link(from.c_str(), to.c_str()) != 0) return errno;
    ::unlink(from.c_str());
    return 0;
}

// A hidden name beside `destination` that is free now: ".<name>.wheelfix-<pid>-<n>".
std::filesystem::path temporary_name(const std::filesystem::path& destination, std::uint64_t salt) {
    auto directory = destination.parent_path().empty() ? std::filesystem::path(".") : destination.parent_path();
    return directory / ("." + destination.filename().string() + std::string(kTemporaryMarker) + std::to_string(::getpid()) +
                        "-" + std::to_string(salt % 1000000000));
}

bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// A StagedFile's directory: the files in it (never followed), then itself.
void remove_staging_directory(const std::filesystem::path& path) {
    std::error_code error;
    for (std::filesystem::directory_iterator entries(path, error), end; !error && entries != end; entries.increment(error))
        if (entries->is_regular_file(error) || entries->is_symlink(error)) ::unlink(entries->path().c_str());
    ::rmdir(path.c_str());
}

// Removes `name` when it is a regular file (or a StagedFile's directory) of ours whose lock nobody holds.
void remove_if_abandoned(const std::filesystem::path& directory, const std::string& name) {
    auto path = directory / name;
    int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return;
    struct stat status {};
    bool ours = ::fstat(fd, &status) == 0 && status.st_uid == ::geteuid() && ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    if (ours && S_ISREG(status.st_mode)) ::unlink(path.c_str());
    if (ours && S_ISDIR(status.st_mode)) remove_staging_directory(path);
    ::close(fd);
}

// A temporary beside `destination`, made by `create` (false: errno says why) under
// a fresh name, retried while the name is taken; registered in `on_signal` before
// it exists, so that no moment lets a signal miss it. `sweep`: stale ones removed first.
template <typename Create>
std::filesystem::path create_temporary(const std::filesystem::path& destination, CleanupOnSignal::Kind kind,
                                       std::optional<CleanupOnSignal>& on_signal, Create create, bool sweep = true) {
    auto directory = destination.parent_path().empty() ? std::filesystem::path(".") : destination.parent_path();
    if (sweep) remove_stale_temporaries(directory);
    std::random_device seed;
    std::mt19937_64 random(seed());
    int error = EEXIST;
    for (int attempt = 0; attempt < 100 && error == EEXIST; ++attempt) {
        auto candidate = temporary_name(destination, random());
        on_signal.emplace(candidate, kind);
        if (create(candidate)) return candidate;
        error = errno;
        on_signal.reset();
    }
    const char* what = kind == CleanupOnSignal::Kind::file ? "file" : "directory";
    throw InputError(destination.string(),
                     std::string("cannot create a temporary ") + what + " in " + directory.string() + ": " + std::strerror(error));
}

bool make_directory(const std::filesystem::path& path) { return ::mkdir(path.c_str(), 0700) == 0; }

}  // namespace

std::filesystem::path create_temporary_directory(const std::filesystem::path& destination,
                                                 std::optional<CleanupOnSignal>& on_signal) {
    return create_temporary(destination, CleanupOnSignal::Kind::directory, on_signal, make_directory, false);
}

void move_into_place(const std::filesystem::path& from, const std::filesystem::path& to, Existing existing) {
    int error = 0;
    if (existing == Existing::replace) error = ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
    else error = rename_no_replace(from, to);
    if (error == EEXIST)
        throw InputError(to.string(), "already exists (written meanwhile by another process?); pass --overwrite to replace it");
    if (error != 0) throw InputError(to.string(), std::string("cannot move the new file into place: ") + std::strerror(error));
}

StagedFile::StagedFile(const std::filesystem::path& destination, Existing existing)
    : destination_(destination), existing_(existing) {
    directory_ = create_temporary(destination, CleanupOnSignal::Kind::directory, on_signal_, make_directory);
    lock_fd_ = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lock_fd_ >= 0) ::flock(lock_fd_, LOCK_EX | LOCK_NB);  // as OutputFile's: we are alive
    path_ = directory_ / destination.filename();
}

StagedFile::~StagedFile() {
    if (!published_) ::unlink(path_.c_str());
    ::rmdir(directory_.c_str());
    if (lock_fd_ >= 0) ::close(lock_fd_);
}

void StagedFile::publish() {
    move_into_place(path_, destination_, existing_);
    published_ = true;
}

void remove_stale_temporaries(const std::filesystem::path& directory) {
    std::error_code error;
    std::filesystem::directory_iterator entries(directory, error), end;
    for (; !error && entries != end; entries.increment(error)) {
        const std::string name = entries->path().filename().string();
        const pid_t pid = writer_of(name);
        if (pid > 0 && pid != ::getpid() && !process_exists(pid)) remove_if_abandoned(directory, name);
    }
}

OutputFile::OutputFile(const std::filesystem::path& destination, Existing existing)
    : destination_(destination), existing_(existing) {
    temporary_ = create_temporary(destination, CleanupOnSignal::Kind::file, on_signal_, [&](const std::filesystem::path& path) {
        fd_ = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);  // 0666 & ~umask
        return fd_ >= 0;
    });
    ::flock(fd_, LOCK_EX | LOCK_NB);  // held until we exit: tells other hosts we are alive
    buffer_.reserve(kBufferSize);
}

OutputFile::~OutputFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!temporary_.empty()) ::unlink(temporary_.c_str());
    on_signal_.reset();
}

void OutputFile::write(std::span<const std::uint8_t> bytes) {
    if (buffer_.size() + bytes.size() > kBufferSize) flush();
    if (bytes.size() >= kBufferSize) {
        write_fully(bytes);
    } else {
        buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
    }
    position_ += bytes.size();
}

void OutputFile::copy_from(int source_fd, std::uint64_t offset, std::uint64_t length) {
    flush();
    position_ += length;
    if (!copy_in_kernel(source_fd, offset, length)) copy_through_memory(source_fd, offset, length);
}

void OutputFile::reserve(std::uint64_t bytes) {
    if (bytes == 0 || bytes > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max())) return;
    if (::fallocate(fd_, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(bytes)) == 0)  // a hint: see the header
        reserved_ = std::max(reserved_, bytes);
}

// False (with offset and length advanced past what was copied) when the kernel
// cannot copy between these files; the rest is then copied through memory.
bool OutputFile::copy_in_kernel(int source_fd, std::uint64_t& offset, std::uint64_t& length) {
    while (length > 0) {
        auto from = static_cast<loff_t>(offset);
        ssize_t copied = ::copy_file_range(source_fd, &from, fd_, nullptr, length, 0);
        if (copied < 0 && errno == EINTR) continue;
        if (copied < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP || errno == EBADF))
            return false;
        if (copied < 0) fail("cannot copy", errno);
        if (copied == 0) fail("cannot copy", EIO);  // the source ended early
        offset += static_cast<std::uint64_t>(copied);
        length -= static_cast<std::uint64_t>(copied);
    }
    return true;
}

void OutputFile::copy_through_memory(int source_fd, std::uint64_t offset, std::uint64_t length) {
    std::vector<std::uint8_t> chunk(std::min<std::uint64_t>(length, kBufferSize * 4));
    while (length > 0) {
        auto want = static_cast<std::size_t>(std::min<std::uint64_t>(length, chunk.size()));
        ssize_t got = ::pread(source_fd, chunk.data(), want, static_cast<off_t>(offset));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) fail("cannot copy", got < 0 ? errno : EIO);
        write_fully({chunk.data(), static_cast<std::size_t>(got)});
        offset += static_cast<std::uint64_t>(got);
        length -= static_cast<std::uint64_t>(got);
    }
}

void OutputFile::flush() {
    write_fully(buffer_);
    buffer_.clear();
}

void OutputFile::write_fully(std::span<const std::uint8_t> bytes) {
    const timings::Scope timer(timings::Phase::write);
    while (!bytes.empty()) {
        ssize_t written = ::write(fd_, bytes.data(), bytes.size());
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) fail("cannot write", written < 0 ? errno : ENOSPC);
        bytes = bytes.subspan(static_cast<std::size_t>(written));
    }
}

void OutputFile::set_permissions(std::filesystem::perms perms) {
    if (::fchmod(fd_, static_cast<mode_t>(perms)) != 0) fail("cannot set permissions", errno);
}

void OutputFile::commit() {
    flush();
    // Blocks reserved past what was written stay allocated until a truncate frees them.
    if (reserved_ > position_ && ::ftruncate(fd_, static_cast<off_t>(position_)) != 0) fail("cannot write", errno);
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("cannot write", errno);
    try {
        move_into_place(temporary_, destination_, existing_);
    } catch (const InputError&) {
        ::unlink(temporary_.c_str());  // refused: nothing of ours stays
        temporary_.clear();
        on_signal_.reset();
        throw;
    }
    temporary_.clear();
    on_signal_.reset();
}

void OutputFile::fail(const std::string& what, int error) const {
    throw InputError(destination_.string(), what + ": " + std::strerror(error));
}

}  // namespace wheelfix
