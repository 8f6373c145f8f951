// The end of a member's content without inflating what comes before it
// (tail_inflate.hpp: the method, and why its answer can be trusted).
#include "wheelfix/zip/tail_inflate.hpp"

#include "wheelfix/util/timings.hpp"

#include "block_header.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <span>

namespace wheelfix::zip {

// File-local, and named so that its names stay apart from other files' in a unity
// build's translation unit.
namespace {
namespace tail_search {

using Bytes = std::span<const std::uint8_t>;
using block_header::could_start_block;

constexpr std::size_t kWindow = 32768;

struct Inflater {
    z_stream stream{};
    Inflater() {
        if (inflateInit2(&stream, -15) != Z_OK) throw std::bad_alloc();
    }
    ~Inflater() { inflateEnd(&stream); }
    Inflater(const Inflater&) = delete;
    Inflater& operator=(const Inflater&) = delete;
};

// What one inflate_tail call may spend, whatever the bytes (tail_inflate.hpp).
struct Budget {
    std::uint64_t scan_bytes = kScanBytes;   // compressed bytes whose bit offsets are tried
    std::uint64_t inflated = kInflateBudget; // bytes inflated by every candidate together
    int candidates = kMaxCandidates;
};

// `data` inflated from bit `at` to its end, after a window of `fill` bytes; nullopt
// unless the deflate stream ends exactly with the data, within `limit` bytes and
// the budget (which pays for what was inflated, either way).
std::optional<std::vector<std::uint8_t>> inflate_from(Bytes data, std::uint64_t at, std::uint8_t fill, std::uint64_t limit,
                                                      Budget& budget) {
    limit = std::min(limit, budget.inflated);
    Inflater inflater;
    z_stream& stream = inflater.stream;
    const std::vector<std::uint8_t> window(kWindow, fill);
    if (inflateSetDictionary(&stream, window.data(), static_cast<uInt>(window.size())) != Z_OK) return std::nullopt;
    std::size_t byte = static_cast<std::size_t>(at / 8);
    if (const unsigned shift = at % 8; shift != 0) {
        if (inflatePrime(&stream, static_cast<int>(8 - shift), data[byte] >> shift) != Z_OK) return std::nullopt;
        ++byte;
    }
    stream.next_in = const_cast<Bytef*>(data.data() + byte);
    stream.avail_in = static_cast<uInt>(data.size() - byte);
    std::vector<std::uint8_t> out;
    int status = Z_OK;
    while (status == Z_OK && out.size() <= limit) {
        const std::size_t have = out.size();
        out.resize(have + static_cast<std::size_t>(std::min<std::uint64_t>(256u << 10, limit + 1 - have)));
        stream.next_out = out.data() + have;
        stream.avail_out = static_cast<uInt>(out.size() - have);
        status = inflate(&stream, Z_NO_FLUSH);  // Z_BUF_ERROR once the data ends before the stream
        out.resize(out.size() - stream.avail_out);
    }
    budget.inflated -= std::min<std::uint64_t>(budget.inflated, out.size());
    timings::count_bytes(timings::Phase::inflate, out.size());  // every candidate's, kept or not
    if (status != Z_STREAM_END || stream.avail_in != 0 || out.size() > limit) return std::nullopt;
    return out;
}

// Where the longest common suffix of two equally long buffers starts.
std::size_t agreeing_suffix(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
    constexpr std::size_t kStep = 4096;
    std::size_t end = a.size();
    while (end >= kStep && std::memcmp(a.data() + end - kStep, b.data() + end - kStep, kStep) == 0) end -= kStep;
    while (end > 0 && a[end - 1] == b[end - 1]) --end;
    return end;
}

struct TailDecode {
    std::uint64_t start_bit = 0;  // in the member's compressed bytes
    MemberTail tail;              // the bytes that do not depend on the unknown window
};

std::vector<std::uint8_t> read_last(const Archive& archive, const Member& member, std::uint64_t count) {
    RawReader reader = archive.open_raw(member);
    reader.skip_to(member.compressed_size - count);
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(count));
    if (reader.read(bytes) != bytes.size()) throw std::logic_error("zip: raw read ended early");
    return bytes;
}

// The first block start in the last `back` compressed bytes that inflates to the
// stream's end, and what of it does not depend on the window before it.
std::optional<TailDecode> decode_back(const Archive& archive, const Member& member, std::uint64_t back, Budget& budget) {
    const std::vector<std::uint8_t> raw = [&] {
        const timings::Scope scope(timings::Phase::read);
        return read_last(archive, member, back);
    }();
    const timings::Scope scope(timings::Phase::inflate);
    const std::uint64_t limit = std::min(member.size, kMaxTailInflated);
    const std::uint64_t scan_end = 8 * std::min<std::uint64_t>(raw.size(), budget.scan_bytes);
    for (std::uint64_t at = 0; at < scan_end; ++at) {
        if (at % 8 == 0) --budget.scan_bytes;
        if (!could_start_block(raw, at)) continue;
        if (budget.candidates-- <= 0) return std::nullopt;
        auto zeros = inflate_from(raw, at, 0x00, limit, budget);
        if (!zeros) continue;
        auto ones = inflate_from(raw, at, 0xff, limit, budget);
        if (!ones || ones->size() != zeros->size()) continue;
        const std::size_t known_from = agreeing_suffix(*zeros, *ones);
        TailDecode decode;
        decode.start_bit = (member.compressed_size - back) * 8 + at;
        decode.tail.begin = member.size - zeros->size() + known_from;
        decode.tail.bytes.assign(zeros->begin() + static_cast<std::ptrdiff_t>(known_from), zeros->end());
        return decode;
    }
    return std::nullopt;
}

// Two decodes from different starts agree on every byte both give.
bool agree(const MemberTail& near, const MemberTail& far) {
    const std::uint64_t from = std::max(near.begin, far.begin);
    const std::uint64_t count = near.bytes.size() - (from - near.begin);
    return count == far.bytes.size() - (from - far.begin) &&
           std::equal(near.bytes.begin() + static_cast<std::ptrdiff_t>(from - near.begin), near.bytes.end(),
                      far.bytes.begin() + static_cast<std::ptrdiff_t>(from - far.begin));
}

std::optional<MemberTail> stored_tail(const Archive& archive, const Member& member, std::uint64_t from) {
    if (member.compressed_size != member.size || member.size - from > kMaxTailInflated) return std::nullopt;
    const timings::Scope scope(timings::Phase::read);
    return MemberTail{from, read_last(archive, member, member.size - from)};
}

}  // namespace tail_search
}  // namespace

std::optional<MemberTail> inflate_tail(const Archive& archive, const Member& member, std::uint64_t from) {
    from = std::min(from, member.size);
    if (member.method == Method::stored) return tail_search::stored_tail(archive, member, from);
    if (member.method != Method::deflated) return std::nullopt;
    tail_search::Budget budget;
    for (std::uint64_t back = kFirstBack; back <= kMaxBack && 2 * back <= member.compressed_size; back *= 2) {
        const auto near = tail_search::decode_back(archive, member, back, budget);
        if (!near || near->tail.begin > from) continue;
        const auto far = tail_search::decode_back(archive, member, 2 * back, budget);
        if (!far || far->start_bit >= near->start_bit || !tail_search::agree(near->tail, far->tail)) return std::nullopt;
        return near->tail;
    }
    return std::nullopt;
}

}  // namespace wheelfix::zip
