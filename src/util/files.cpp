// MappedFile, atomic writes and path identity (util/files.hpp has the contract).
#include "wheelfix/util/files.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/output_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace wheelfix {

namespace {

class FileDescriptor {
public:
    explicit FileDescriptor(int fd) : fd_(fd) {}
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    ~FileDescriptor() {
        if (fd_ >= 0) ::close(fd_);
    }
    int get() const { return fd_; }

private:
    int fd_;
};

}  // namespace

MappedFile::MappedFile(const std::filesystem::path& path) {
    FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) throw InputError(path.string(), std::strerror(errno));
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0) throw InputError(path.string(), std::strerror(errno));
    if (!S_ISREG(info.st_mode)) throw InputError(path.string(), "not a regular file");
    size_ = static_cast<std::size_t>(info.st_size);
    if (size_ == 0) return;
    void* data = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
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

void refuse_existing_output(const std::filesystem::path& target, bool overwrite) {
    std::error_code ec;
    auto status = std::filesystem::symlink_status(target, ec);
    if (ec || !std::filesystem::exists(status)) return;
    if (std::filesystem::is_directory(status))
        throw InputError(target.string(), "is a directory; the output file cannot replace it");
    if (!overwrite) throw InputError(target.string(), "already exists; pass --overwrite to replace it");
}

bool starts_like_zip(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[2] = {};
    in.read(magic, 2);
    return in.gcount() == 2 && magic[0] == 'P' && magic[1] == 'K';
}

}  // namespace wheelfix
