// Keeping only the byte ranges readers ask for while a file streams past once.
//
// Contract: SparseStream(size) maps a zero-filled, lazily backed image of the
// file's size (only written pages use memory; std::bad_alloc when the address space
// is short). consume() takes the file's bytes in order, in chunks of any size; it
// never throws on their content and ignores bytes past `size`. For each chunk:
//   1. every Learner sees() it raw (to spot things without keeping them);
//   2. the wanted parts of it are copied into the image ("kept");
//   3. every Learner learn()s from what is kept and may want() more, until a round
//      of learning wants nothing new.
// want() during consume() keeps the part of the range that lies in the current
// chunk at once, so a learner can read it back right away; parts that streamed past
// before they were wanted are lost. vouch_zero() records bytes already seen (by a
// learner, in see()) to be zero as kept, without writing them (the image is zero
// there); vouch() keeps bytes a learner remembers from earlier chunks. A kept page-sized block of zeros is not written either, so runs of zeros
// cost no memory. kept() is exactly the set of image bytes that equal the file's:
// pass it as `present` (util/byte_ranges.hpp) to whatever reads the image.
// A SparseStream can be primed with ranges to want from the start (the second
// reading of a file, once the first taught what is needed). fill() keeps bytes read
// out of order after the stream (a range fetched again: zip/seekable_member.hpp)
// and lets the learners learn from them; what they want then is wanted() minus
// kept(), for the caller to fetch in turn.
#pragma once

#include "wheelfix/util/byte_ranges.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace wheelfix {

class SparseStream {
public:
    class Learner {
    public:
        virtual ~Learner() = default;
        // `chunk` holds the file bytes from offset `at` on, before any is kept.
        virtual void see(SparseStream& stream, std::span<const std::uint8_t> chunk, std::uint64_t at);
        // Reads kept bytes (stream.kept(), stream.image()) and wants more.
        virtual void learn(SparseStream& stream) = 0;
    };

    explicit SparseStream(std::uint64_t size);
    SparseStream(const SparseStream&) = delete;
    SparseStream& operator=(const SparseStream&) = delete;
    ~SparseStream();

    // Learners are owned by the stream and run in the order added.
    Learner& add(std::unique_ptr<Learner> learner);
    void consume(std::span<const std::uint8_t> chunk);

    // [begin, begin + size), clamped to the file.
    void want(std::uint64_t begin, std::uint64_t size);
    void vouch_zero(std::uint64_t begin, std::uint64_t end);
    void vouch(std::uint64_t begin, std::span<const std::uint8_t> bytes);
    // The file's bytes from `begin` on (clamped to the file), kept and learnt from;
    // not while consume() runs.
    void fill(std::uint64_t begin, std::span<const std::uint8_t> bytes);

    std::uint64_t size() const { return size_; }
    // Bytes consumed so far (the end of the current chunk while it is consumed).
    std::uint64_t position() const { return position_; }
    // Whether [begin, end) is kept, and if not, whether it can still be.
    bool has(std::uint64_t begin, std::uint64_t end) const { return kept_.covers(begin, end); }
    bool lost(std::uint64_t begin, std::uint64_t end) const;
    std::span<const std::uint8_t> image() const { return {data_, static_cast<std::size_t>(size_)}; }
    const ByteRanges& kept() const { return kept_; }
    const ByteRanges& wanted() const { return wanted_; }

private:
    void keep(std::uint64_t begin, std::uint64_t end);
    void store(std::uint64_t at, std::span<const std::uint8_t> bytes);
    void learn_until_settled();

    std::uint64_t size_;
    std::uint8_t* data_ = nullptr;
    ByteRanges wanted_;
    ByteRanges kept_;
    std::uint64_t position_ = 0;
    std::span<const std::uint8_t> chunk_;  // the chunk being consumed
    std::uint64_t chunk_begin_ = 0;
    bool consuming_ = false;
    std::vector<std::unique_ptr<Learner>> learners_;
};

}  // namespace wheelfix
