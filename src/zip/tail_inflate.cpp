// The end of a member's content without inflating what comes before it
// (tail_inflate.hpp: the method, and why its answer can be trusted).
#include "wheelfix/zip/tail_inflate.hpp"

#include "wheelfix/util/timings.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <span>

namespace wheelfix::zip {

// File-local, and named so that its names stay apart from other files' in a unity
// build's translation unit.
namespace {
namespace tail_search {

using Bytes = std::span<const std::uint8_t>;

constexpr std::size_t kWindow = 32768;

// Bits of `data` from bit `at` on, least significant first, as deflate packs them.
class BitCursor {
public:
    BitCursor(Bytes data, std::uint64_t at) : data_(data), at_(at) {}

    // The next `count` (<= 24) bits, or false when the data ends first.
    bool take(unsigned count, std::uint32_t& value) {
        if (at_ + count > data_.size() * 8) return false;
        value = 0;
        for (unsigned i = 0; i < count; ++i, ++at_)
            value |= static_cast<std::uint32_t>((data_[at_ >> 3] >> (at_ & 7)) & 1u) << i;
        return true;
    }

private:
    Bytes data_;
    std::uint64_t at_;
};

// The 57 bits from bit `at` on, least significant first (zero-filled past the data).
std::uint64_t peek57(Bytes data, std::uint64_t at) {
    std::uint64_t word = 0;
    const std::size_t byte = static_cast<std::size_t>(at / 8);
    for (std::size_t i = 0; i < 8 && byte + i < data.size(); ++i) word |= std::uint64_t(data[byte + i]) << (8 * i);
    return word >> (at % 8);
}

// A canonical Huffman code given by its code lengths, as deflate defines it.
struct HuffmanCode {
    std::array<std::uint16_t, 16> count{};   // codes of each length
    std::array<std::uint16_t, 320> symbol{}; // symbols by code

    // zlib's inflate_table rules: no length over-subscribed; a set left incomplete
    // only when its longest code is 1 bit (one code), or empty if `empty_ok`.
    bool build(std::span<const std::uint8_t> lengths, bool incomplete_ok, bool empty_ok) {
        count.fill(0);
        unsigned longest = 0;
        for (std::uint8_t length : lengths) {
            ++count[length];
            longest = std::max<unsigned>(longest, length);
        }
        if (longest == 0) return empty_ok;
        int left = 1;
        for (unsigned length = 1; length < count.size(); ++length) {
            left = left * 2 - count[length];
            if (left < 0) return false;
        }
        if (left > 0 && (!incomplete_ok || longest != 1)) return false;
        std::array<std::uint16_t, 16> offset{};
        for (unsigned length = 1; length + 1 < offset.size(); ++length) offset[length + 1] = offset[length] + count[length];
        for (std::size_t s = 0; s < lengths.size(); ++s)
            if (lengths[s] != 0) symbol[offset[lengths[s]]++] = static_cast<std::uint16_t>(s);
        return true;
    }

    // The next symbol, or -1 (no such code, or the data ends).
    int decode(BitCursor& bits) const {
        int code = 0, first = 0, index = 0;
        for (unsigned length = 1; length < count.size(); ++length) {
            std::uint32_t bit = 0;
            if (!bits.take(1, bit)) return -1;
            code |= static_cast<int>(bit);
            const int here = count[length];
            if (code - here < first) return symbol[static_cast<std::size_t>(index + (code - first))];
            index += here;
            first = (first + here) << 1;
            code <<= 1;
        }
        return -1;
    }
};

constexpr std::array<std::uint8_t, 19> kCodeLengthOrder{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

// Whether a dynamic Huffman block header that zlib accepts starts at `at` (the
// BFINAL bit), BTYPE being 2.
bool dynamic_header_ok(Bytes data, std::uint64_t at) {
    const std::uint64_t head = peek57(data, at + 3);
    const unsigned hlit = head & 31u, hdist = (head >> 5) & 31u, hclen = (head >> 10) & 15u;
    if (hlit > 29 || hdist > 29) return false;
    const std::uint64_t precode_bits = 3 * (hclen + 4);
    if (at + 17 + precode_bits > data.size() * 8) return false;
    const std::uint64_t packed = peek57(data, at + 17);
    std::array<std::uint8_t, 19> code_lengths{};
    for (unsigned i = 0; i < hclen + 4; ++i) code_lengths[kCodeLengthOrder[i]] = (packed >> (3 * i)) & 7u;
    BitCursor bits(data, at + 17 + precode_bits);
    HuffmanCode precode;
    if (!precode.build(code_lengths, false, false)) return false;
    const std::size_t literal_count = 257 + hlit, total = literal_count + 1 + hdist;
    std::array<std::uint8_t, 320> lengths{};
    for (std::size_t index = 0; index < total;) {
        const int symbol = precode.decode(bits);
        if (symbol < 0) return false;
        if (symbol < 16) {
            lengths[index++] = static_cast<std::uint8_t>(symbol);
            continue;
        }
        std::uint8_t repeated = 0;
        std::uint32_t extra = 0, times = 0;
        if (symbol == 16) {
            if (index == 0 || !bits.take(2, extra)) return false;
            repeated = lengths[index - 1];
            times = 3 + extra;
        } else if (symbol == 17) {
            if (!bits.take(3, extra)) return false;
            times = 3 + extra;
        } else {
            if (!bits.take(7, extra)) return false;
            times = 11 + extra;
        }
        if (index + times > total) return false;
        std::fill_n(lengths.begin() + static_cast<std::ptrdiff_t>(index), times, repeated);
        index += times;
    }
    if (lengths[256] == 0) return false;  // no end-of-block code
    HuffmanCode code;
    return code.build(std::span(lengths).first(literal_count), true, false) &&
           code.build(std::span(lengths).subspan(literal_count, 1 + hdist), true, true);
}

// Whether a stored block header starts at `at`: LEN and NLEN, byte aligned after
// the 3 header bits, are each other's complement.
bool stored_header_ok(Bytes data, std::uint64_t at) {
    const std::uint64_t byte = (at + 3 + 7) / 8;
    if (byte + 4 > data.size()) return false;
    const unsigned length = data[byte] | (data[byte + 1] << 8);
    const unsigned complement = data[byte + 2] | (data[byte + 3] << 8);
    return length == (~complement & 0xffffu);
}


bool could_start_block(Bytes data, std::uint64_t at) {
    if (at + 3 > data.size() * 8) return false;
    // Most offsets fail on the first 13 bits: BTYPE, then HLIT and HDIST of a dynamic block.
    const std::uint64_t head = peek57(data, at);
    const unsigned type = (head >> 1) & 3u;
    if (type == 0) return stored_header_ok(data, at);
    if (type != 2 || ((head >> 3) & 31u) > 29 || ((head >> 8) & 31u) > 29) return false;
    return dynamic_header_ok(data, at);
}

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
