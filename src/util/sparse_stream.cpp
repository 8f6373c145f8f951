// SparseStream: a lazily backed image that keeps only wanted ranges of a stream
// (sparse_stream.hpp has the contract).
#include "wheelfix/util/sparse_stream.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace wheelfix {

namespace {

constexpr std::uint64_t kBlock = 4096;

bool all_zero(const std::uint8_t* bytes, std::size_t size) {
    return size == 0 || (bytes[0] == 0 && std::memcmp(bytes, bytes + 1, size - 1) == 0);
}

}  // namespace

void SparseStream::Learner::see(SparseStream&, std::span<const std::uint8_t>, std::uint64_t) {}

SparseStream::SparseStream(std::uint64_t size) : size_(size) {
    if (size_ == 0) return;
    void* data = ::mmap(nullptr, static_cast<std::size_t>(size_), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (data == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<std::uint8_t*>(data);
}

SparseStream::~SparseStream() {
    if (data_ != nullptr) ::munmap(data_, static_cast<std::size_t>(size_));
}

SparseStream::Learner& SparseStream::add(std::unique_ptr<Learner> learner) {
    learners_.push_back(std::move(learner));
    return *learners_.back();
}

void SparseStream::consume(std::span<const std::uint8_t> chunk) {
    if (position_ >= size_) return;
    chunk = chunk.first(static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), size_ - position_)));
    chunk_ = chunk;
    chunk_begin_ = position_;
    position_ += chunk.size();
    consuming_ = true;
    for (auto& learner : learners_) learner->see(*this, chunk, chunk_begin_);
    for (const auto& [from, to] : wanted_.intersect(chunk_begin_, position_)) keep(from, to);
    learn_until_settled();
    chunk_ = {};
    consuming_ = false;
}

void SparseStream::fill(std::uint64_t begin, std::span<const std::uint8_t> bytes) {
    if (consuming_ || begin >= size_) return;
    bytes = bytes.first(static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size(), size_ - begin)));
    if (bytes.empty()) return;
    store(begin, bytes);
    wanted_.add(begin, begin + bytes.size());
    kept_.add(begin, begin + bytes.size());
    learn_until_settled();
}

void SparseStream::learn_until_settled() {
    for (std::uint64_t before = wanted_.total() + 1; wanted_.total() != before;) {
        before = wanted_.total();
        for (auto& learner : learners_) learner->learn(*this);
    }
}

void SparseStream::want(std::uint64_t begin, std::uint64_t size) {
    if (begin >= size_) return;
    const std::uint64_t end = begin + std::min(size, size_ - begin);
    if (wanted_.covers(begin, end)) return;
    wanted_.add(begin, end);
    if (!consuming_) return;
    const std::uint64_t from = std::max(begin, chunk_begin_);
    const std::uint64_t to = std::min(end, position_);
    if (from < to) keep(from, to);
}

void SparseStream::vouch_zero(std::uint64_t begin, std::uint64_t end) {
    end = std::min(end, position_);
    if (begin < end) kept_.add(begin, end);
}

void SparseStream::vouch(std::uint64_t begin, std::span<const std::uint8_t> bytes) {
    if (begin >= position_ || bytes.size() > position_ - begin) return;
    std::memcpy(data_ + begin, bytes.data(), bytes.size());
    kept_.add(begin, begin + bytes.size());
}

bool SparseStream::lost(std::uint64_t begin, std::uint64_t end) const {
    if (kept_.covers(begin, end)) return false;
    // While a chunk is consumed its bytes can still be wanted; after, they are gone.
    return kept_.first_gap(begin, end).first < (consuming_ ? chunk_begin_ : position_);
}

// Copies [begin, end) of the current chunk into the image.
void SparseStream::keep(std::uint64_t begin, std::uint64_t end) {
    store(begin, chunk_.subspan(static_cast<std::size_t>(begin - chunk_begin_), static_cast<std::size_t>(end - begin)));
    kept_.add(begin, end);
}

// Writes `bytes` into the image at `at`, skipping zero blocks (the image is zero).
void SparseStream::store(std::uint64_t at, std::span<const std::uint8_t> bytes) {
    const std::uint8_t* source = bytes.data();
    for (const std::uint64_t end = at + bytes.size(); at < end;) {
        const std::uint64_t block_end = std::min(end, (at / kBlock + 1) * kBlock);
        const std::size_t length = static_cast<std::size_t>(block_end - at);
        if (!all_zero(source, length)) std::memcpy(data_ + at, source, length);
        source += length;
        at = block_end;
    }
}

}  // namespace wheelfix
