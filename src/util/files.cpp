// MappedFile, atomic writes and path identity (util/files.hpp has the contract).
#include "wheelfix/util/files.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/output_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

namespace wheelfix {

namespace {

class FileDescriptor {
public:
    explicit FileDescriptor(int fd) : fd_(fd) {}
    FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    ~FileDescriptor() {
        if (fd_ >= 0) ::close(fd_);
    }
    int get() const { return fd_; }

private:
    int fd_;
};

// "a FIFO", "a socket", ... for a file type that is neither regular nor a directory.
const char* special_kind(mode_t mode) {
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    return nullptr;
}

[[noreturn]] void refuse_kind(const std::filesystem::path& path, mode_t mode) {
    const char* kind = special_kind(mode);
    throw InputError(path.string(), std::string("is ") + (kind ? kind : "a directory") + ", not a regular file");
}

// A regular file opened for reading without ever blocking on it.
FileDescriptor open_regular(const std::filesystem::path& path, struct stat& info) {
    refuse_special_file(path);
    FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (fd.get() < 0) throw InputError(path.string(), std::strerror(errno));
    if (::fstat(fd.get(), &info) != 0) throw InputError(path.string(), std::strerror(errno));
    if (!S_ISREG(info.st_mode)) refuse_kind(path, info.st_mode);
    return fd;
}

}  // namespace

void refuse_special_file(const std::filesystem::path& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) return;
    if (special_kind(info.st_mode) != nullptr) refuse_kind(path, info.st_mode);
}

std::string read_regular_file(const std::filesystem::path& path, std::uint64_t max_size) {
    struct stat info {};
    FileDescriptor fd = open_regular(path, info);
    if (static_cast<std::uint64_t>(info.st_size) > max_size)
        throw InputError(path.string(), "larger than " + std::to_string(max_size) + " bytes, too large for what it holds");
    std::string bytes(static_cast<std::size_t>(info.st_size), '\0');
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t got = ::read(fd.get(), bytes.data() + done, bytes.size() - done);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) throw InputError(path.string(), std::strerror(errno));
        if (got == 0) break;  // it shrank while read
        done += static_cast<std::size_t>(got);
    }
    bytes.resize(done);
    return bytes;
}

MappedFile::MappedFile(const std::filesystem::path& path) {
    struct stat info {};
    map(open_regular(path, info).get(), path);
}

MappedFile::MappedFile(int fd, const std::filesystem::path& path) { map(fd, path); }

void MappedFile::map(int fd, const std::filesystem::path& path) {
    struct stat info {};
    if (::fstat(fd, &info) != 0) throw InputError(path.string(), std::strerror(errno));
    size_ = static_cast<std::size_t>(info.st_size);
    if (size_ == 0) return;
    void* data = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) throw InputError(path.string(), std::string("cannot map: ") + std::strerror(errno));
    data_ = static_cast<const std::uint8_t*>(data);
}

MappedFile::~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<std::uint8_t*>(data_), size_);
}

void write_file_atomically(const std::filesystem::path& destination, std::span<const std::uint8_t> bytes,
                           std::filesystem::perms perms, bool overwrite) {
    OutputFile output(destination, overwrite ? Existing::replace : Existing::refuse);
    output.write(bytes);
    output.set_permissions(perms);
    output.commit();
}

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
    std::error_code ec;
    return std::filesystem::exists(b, ec) && std::filesystem::equivalent(a, b, ec);
}

namespace {

// A path as a message shows it: whole up to 160 bytes, else its ends around "…".
std::string shortened(const std::string& path) {
    return path.size() <= 160 ? path : path.substr(0, 72) + "…" + path.substr(path.size() - 72);
}

void refuse_too_long(const std::filesystem::path& target) {
    constexpr std::size_t kNameMax = NAME_MAX, kPathMax = PATH_MAX;
    const std::string name = target.filename().string();
    if (name.size() + kTemporaryRoom > kNameMax)
        throw InputError(shortened(target.string()), "file name too long: " + std::to_string(name.size()) +
                                                          " bytes (at most " + std::to_string(kNameMax - kTemporaryRoom) +
                                                          ": its temporary beside it takes the rest of NAME_MAX " +
                                                          std::to_string(kNameMax) + ")");
    for (const auto& component : target.parent_path())
        if (component.string().size() > kNameMax)
            throw InputError(shortened(target.string()), "a directory name of " + std::to_string(component.string().size()) +
                                                              " bytes: longer than NAME_MAX " + std::to_string(kNameMax));
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(target, ec);
    const std::size_t length = (ec ? target : absolute).string().size();
    if (length + kTemporaryRoom >= kPathMax)
        throw InputError(shortened(target.string()), "path too long: " + std::to_string(length) + " bytes (PATH_MAX is " +
                                                          std::to_string(kPathMax) + ")");
}

}  // namespace

void refuse_existing_output(const std::filesystem::path& target, bool overwrite) {
    refuse_too_long(target);
    std::error_code ec;
    auto status = std::filesystem::symlink_status(target, ec);
    if (ec || !std::filesystem::exists(status)) return;
    refuse_special_file(target);  // --overwrite replaces files, not FIFOs or devices
    if (std::filesystem::is_directory(status))
        throw InputError(target.string(), "is a directory; the output file cannot replace it");
    if (!overwrite) throw InputError(target.string(), "already exists; pass --overwrite to replace it");
}

bool starts_like_zip(const std::filesystem::path& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return false;
    FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    char magic[2] = {};
    return fd.get() >= 0 && ::pread(fd.get(), magic, 2, 0) == 2 && magic[0] == 'P' && magic[1] == 'K';
}

}  // namespace wheelfix
