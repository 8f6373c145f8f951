// SparseImage: the lazily backed anonymous mapping the wheel index loader fills
// (symbol_index_internal.hpp has the contract).
#include "symbol_index_internal.hpp"

#include <sys/mman.h>

#include <new>

namespace wheelfix::abi::detail {

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
