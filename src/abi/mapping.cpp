// MappedFile and SparseImage: the two memory mappings the index loaders use
// (symbol_index_internal.hpp has the contract).
#include "symbol_index_internal.hpp"

#include "wheelfix/util/error.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace wheelfix::abi::detail {

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

SparseImage::SparseImage(std::uint64_t size) : size_(static_cast<std::size_t>(size)) {
    if (size_ == 0) return;
    void* data = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (data == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<std::uint8_t*>(data);
}

SparseImage::SparseImage(SparseImage&& other) noexcept : data_(other.data_), size_(other.size_) {
    other.data_ = nullptr;
    other.size_ = 0;
}

SparseImage::~SparseImage() {
    if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace wheelfix::abi::detail
