// ByteRanges and BytesNotKept (byte_ranges.hpp has the contract).
#include "wheelfix/util/byte_ranges.hpp"

#include <algorithm>
#include <string>

namespace wheelfix {

namespace {

// The first range whose end is at or after `offset` (ranges are sorted and disjoint,
// so their ends are sorted too).
auto first_ending_at_or_after(const std::vector<ByteRanges::Range>& ranges, std::uint64_t offset) {
    return std::lower_bound(ranges.begin(), ranges.end(), offset,
                            [](const ByteRanges::Range& range, std::uint64_t at) { return range.second < at; });
}

}  // namespace

void ByteRanges::add(std::uint64_t begin, std::uint64_t end) {
    if (begin >= end) return;
    if (ranges_.empty() || ranges_.back().second < begin) {  // the common case: past everything so far
        ranges_.emplace_back(begin, end);
        total_ += end - begin;
        return;
    }
    // Every range that touches or overlaps [begin, end) merges into one.
    auto first = first_ending_at_or_after(ranges_, begin);
    auto last = first;
    while (last != ranges_.end() && last->first <= end) {
        begin = std::min(begin, last->first);
        end = std::max(end, last->second);
        total_ -= last->second - last->first;
        ++last;
    }
    first = ranges_.erase(first, last);
    ranges_.insert(first, Range{begin, end});
    total_ += end - begin;
}

bool ByteRanges::covers(std::uint64_t begin, std::uint64_t end) const {
    if (begin >= end) return true;
    auto range = first_ending_at_or_after(ranges_, end);
    return range != ranges_.end() && range->first <= begin;
}

std::vector<ByteRanges::Range> ByteRanges::intersect(std::uint64_t begin, std::uint64_t end) const {
    std::vector<Range> parts;
    if (begin >= end) return parts;
    for (auto range = first_ending_at_or_after(ranges_, begin + 1); range != ranges_.end() && range->first < end;
         ++range) {
        const std::uint64_t from = std::max(begin, range->first);
        const std::uint64_t to = std::min(end, range->second);
        if (from < to) parts.emplace_back(from, to);
    }
    return parts;
}

ByteRanges::Range ByteRanges::first_gap(std::uint64_t begin, std::uint64_t end) const {
    if (begin >= end) return {end, end};
    auto range = first_ending_at_or_after(ranges_, begin + 1);  // the first that ends past `begin`
    if (range != ranges_.end() && range->first <= begin) {
        begin = range->second;  // covered up to there; ranges are merged, so the next starts later
        ++range;
        if (begin >= end) return {end, end};
    }
    const std::uint64_t gap_end = range == ranges_.end() ? end : std::min(end, range->first);
    return {begin, gap_end};
}

BytesNotKept::BytesNotKept(std::uint64_t begin, std::uint64_t end)
    : std::runtime_error("bytes " + std::to_string(begin) + ".." + std::to_string(end) + " were not kept"),
      begin_(begin),
      end_(end) {}

void require_present(const ByteRanges* present, std::uint64_t begin, std::uint64_t end) {
    if (present == nullptr || present->covers(begin, end)) return;
    const auto gap = present->first_gap(begin, end);
    throw BytesNotKept(gap.first, gap.second);
}

}  // namespace wheelfix
