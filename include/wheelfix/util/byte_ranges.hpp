// Sets of byte ranges, and what a reader of a partial image throws when it reaches
// bytes that are not there.
//
// Contract: ByteRanges holds sorted, merged, half-open [begin, end) ranges; add()
// is cheap when ranges arrive in increasing order (the way a stream learns them),
// covers() and intersect() are binary searches, total() is kept as ranges are added.
// A partial image (util/sparse_stream.hpp) is a buffer of a file's size in which
// only some ranges hold the file's bytes; readers that accept one take a
// `const ByteRanges* present` (nullptr: the whole image is real) and call
// require_present() before they read, which throws BytesNotKept naming the first
// missing range. BytesNotKept is not an input problem: it means "read the file
// again, keeping these bytes" and never reaches the user.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace wheelfix {

class ByteRanges {
public:
    using Range = std::pair<std::uint64_t, std::uint64_t>;

    void add(std::uint64_t begin, std::uint64_t end);
    bool covers(std::uint64_t begin, std::uint64_t end) const;
    // The parts of [begin, end) this set covers, in order.
    std::vector<Range> intersect(std::uint64_t begin, std::uint64_t end) const;
    // The first part of [begin, end) this set does not cover; empty range if none.
    Range first_gap(std::uint64_t begin, std::uint64_t end) const;
    std::uint64_t total() const { return total_; }
    bool empty() const { return ranges_.empty(); }
    const std::vector<Range>& ranges() const { return ranges_; }

private:
    std::vector<Range> ranges_;
    std::uint64_t total_ = 0;
};

class BytesNotKept : public std::runtime_error {
public:
    BytesNotKept(std::uint64_t begin, std::uint64_t end);
    std::uint64_t begin() const { return begin_; }
    std::uint64_t end() const { return end_; }

private:
    std::uint64_t begin_;
    std::uint64_t end_;
};

// Throws BytesNotKept for the first part of [begin, end) that `present` lacks;
// does nothing when `present` is null (a whole image).
void require_present(const ByteRanges* present, std::uint64_t begin, std::uint64_t end);

}  // namespace wheelfix
