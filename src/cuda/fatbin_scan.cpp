// FatbinScanner: walk fatbin containers as they stream past, keeping only what the
// parser reads (fatbin_scan.hpp has the contract; fatbin.cpp is the parser whose
// reads are mirrored here: container header, entry headers, zero padding).
#include "wheelfix/cuda/fatbin_scan.hpp"

#include "wheelfix/cuda/fatbin.hpp"

#include <algorithm>
#include <cstring>

namespace wheelfix::cuda {

namespace {

constexpr std::uint64_t kContainerHeader = 16;
constexpr std::uint64_t kEntryHeaderRead = 64;  // the parser reads no further into an entry header
constexpr std::uint64_t kEntryHeaderMin = 48;
constexpr std::uint64_t kMaxWindow = 64 * 1024;
constexpr std::uint8_t kMagic[4] = {0x50, 0xED, 0x55, 0xBA};  // fatbin_magic, little endian

}  // namespace

FatbinScanner::Progress FatbinScanner::need(SparseStream& stream, std::uint64_t begin, std::uint64_t end) {
    end = std::min(end, stream.size());
    if (stream.has(begin, end)) return Progress::advanced;
    stream.want(begin, end - std::min(begin, end));
    if (stream.has(begin, end)) return Progress::advanced;
    return stream.lost(begin, end) ? Progress::finished : Progress::waiting;
}

// The bytes from the start of the remembered tail (the last bytes of earlier
// chunks) to the end of the current chunk, as one sequence.
struct FatbinScanner::Joined {
    std::span<const std::uint8_t> tail;
    std::span<const std::uint8_t> chunk;
    std::uint64_t begin;      // file offset of tail[0]
    std::uint64_t run_start;  // where the zero run ending at `begin` starts

    std::uint64_t end() const { return begin + tail.size() + chunk.size(); }
    std::uint8_t at(std::uint64_t offset) const {
        const std::uint64_t index = offset - begin;
        return index < tail.size() ? tail[index] : chunk[index - tail.size()];
    }
    // Where the run of zeros that ends just before `offset` starts.
    std::uint64_t zero_run_before(std::uint64_t offset) const {
        while (offset > begin && at(offset - 1) == 0) --offset;
        return offset == begin ? run_start : offset;
    }
};

void FatbinScanner::see(SparseStream& stream, std::span<const std::uint8_t> chunk, std::uint64_t at) {
    const Joined joined{std::span<const std::uint8_t>(tail_.data(), tail_size_), chunk, at - tail_size_, tail_run_start_};
    const std::uint8_t* scan = chunk.data();
    const std::uint8_t* end = chunk.data() + chunk.size();
    while (scan < end) {
        const auto* hit = static_cast<const std::uint8_t*>(std::memchr(scan, kMagic[3], end - scan));
        if (hit == nullptr) break;
        const std::uint64_t magic_end = at + static_cast<std::uint64_t>(hit - chunk.data()) + 1;
        if (magic_end >= joined.begin + 4 && joined.at(magic_end - 2) == kMagic[2] &&
            joined.at(magic_end - 3) == kMagic[1] && joined.at(magic_end - 4) == kMagic[0])
            found_magic(stream, magic_end - 4, joined.zero_run_before(magic_end - 4), at);
        scan = hit + 1;
    }
    // The new tail: the last (up to) three bytes of tail and chunk together.
    const std::uint64_t tail_begin = joined.end() - std::min<std::uint64_t>(3, joined.end() - joined.begin);
    std::array<std::uint8_t, 3> tail{};
    for (std::uint64_t offset = tail_begin; offset < joined.end(); ++offset) tail[offset - tail_begin] = joined.at(offset);
    tail_run_start_ = joined.zero_run_before(tail_begin);
    tail_ = tail;
    tail_size_ = static_cast<std::size_t>(joined.end() - tail_begin);
}

void FatbinScanner::found_magic(SparseStream& stream, std::uint64_t offset, std::uint64_t zero_run_start,
                                std::uint64_t chunk_at) {
    if (containers_found_ >= kMaxContainers || walks_.size() >= kMaxActiveWalks) return;
    ++containers_found_;
    // The parser reaches the container through the zeros before it; a magic that
    // began in an earlier chunk is kept from the bytes remembered here.
    stream.vouch_zero(zero_run_start, offset);
    if (offset < chunk_at) stream.vouch(offset, std::span(kMagic).first(static_cast<std::size_t>(chunk_at - offset)));
    walks_.push_back(Walk{Step::container_header, offset, offset, 64, 0});
}

void FatbinScanner::learn(SparseStream& stream) {
    for (std::size_t i = 0; i < walks_.size();) {
        Progress progress = Progress::advanced;
        while (progress == Progress::advanced) progress = advance(stream, walks_[i]);
        if (progress == Progress::finished) {
            walks_[i] = walks_.back();
            walks_.pop_back();
        } else {
            ++i;
        }
    }
}

FatbinScanner::Progress FatbinScanner::advance(SparseStream& stream, Walk& walk) {
    switch (walk.step) {
        case Step::container_header: return read_container_header(stream, walk);
        case Step::entries: return read_entry_header(stream, walk);
        case Step::padding_after: break;
    }
    // Between containers the parser skips zeros, then reads a container header at
    // the first other byte (a magic there has a walk of its own).
    const Progress progress = skip_padding(stream, walk, stream.size());
    if (progress != Progress::advanced) return progress;
    if (walk.scanned < stream.size()) need(stream, walk.scanned, walk.scanned + kContainerHeader);
    return Progress::finished;
}

FatbinScanner::Progress FatbinScanner::read_container_header(SparseStream& stream, Walk& walk) {
    const std::uint64_t at = walk.at;
    if (at + kContainerHeader > stream.size()) {
        need(stream, at, stream.size());
        return Progress::finished;
    }
    if (const Progress kept = need(stream, at, at + kContainerHeader); kept != Progress::advanced) return kept;
    const auto image = stream.image();
    const std::uint64_t header_size = read_le(image, at + 6, 2);
    const std::uint64_t payload_size = read_le(image, at + 8, 8);
    if (read_le(image, at, 4) != fatbin_magic || header_size < kContainerHeader) return Progress::finished;
    const std::uint64_t room = stream.size() - at;
    if (header_size > room || payload_size > room - header_size) return Progress::finished;
    walk.step = Step::entries;
    walk.at = walk.scanned = at + header_size;
    walk.payload_end = walk.at + payload_size;
    walk.window = 64;
    return Progress::advanced;
}

FatbinScanner::Progress FatbinScanner::read_entry_header(SparseStream& stream, Walk& walk) {
    const Progress progress = skip_padding(stream, walk, walk.payload_end);
    if (progress != Progress::advanced) return progress;
    if (walk.scanned == walk.payload_end) {  // only zeros left: the container ends
        walk.step = Step::padding_after;
        walk.at = walk.scanned = walk.payload_end;
        walk.window = 64;
        return Progress::advanced;
    }
    const std::uint64_t at = walk.at;
    const Progress kept = need(stream, at, std::min(at + kEntryHeaderRead, walk.payload_end));
    if (kept != Progress::advanced) return kept;
    const std::uint64_t left = walk.payload_end - at;
    if (left < 16) return Progress::finished;
    const auto image = stream.image();
    const std::uint64_t header_size = read_le(image, at + 4, 4);
    const std::uint64_t payload_size = read_le(image, at + 8, 8);
    if (header_size < kEntryHeaderMin || header_size > left || payload_size > left - header_size)
        return Progress::finished;
    walk.at = walk.scanned = at + header_size + payload_size;
    walk.window = 64;
    return Progress::advanced;
}

// Moves walk.scanned over zeros towards `end`: to the first non-zero byte (kept),
// or to `end`. Windows grow while the zeros go on, so a long run costs few rounds.
FatbinScanner::Progress FatbinScanner::skip_padding(SparseStream& stream, Walk& walk, std::uint64_t end) {
    while (walk.scanned < end) {
        const std::uint64_t to = std::min(end, walk.scanned + walk.window);
        if (const Progress kept = need(stream, walk.scanned, to); kept != Progress::advanced) return kept;
        const auto image = stream.image();
        const auto* first = image.data() + walk.scanned;
        const auto* last = image.data() + to;
        const auto* nonzero = std::find_if(first, last, [](std::uint8_t byte) { return byte != 0; });
        walk.scanned += static_cast<std::uint64_t>(nonzero - first);
        if (nonzero != last) return Progress::advanced;
        walk.window = std::min(walk.window * 2, kMaxWindow);
    }
    return Progress::advanced;
}

}  // namespace wheelfix::cuda
