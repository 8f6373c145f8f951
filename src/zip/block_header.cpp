// Whether a deflate block could start at a given bit (block_header.hpp).
#include "block_header.hpp"

#include <algorithm>
#include <array>

namespace wheelfix::zip::block_header {

namespace {

using Bytes = std::span<const std::uint8_t>;

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

}  // namespace

bool could_start_block(Bytes data, std::uint64_t at) {
    if (at + 3 > data.size() * 8) return false;
    // Most offsets fail on the first 13 bits: BTYPE, then HLIT and HDIST of a dynamic block.
    const std::uint64_t head = peek57(data, at);
    const unsigned type = (head >> 1) & 3u;
    if (type == 0) return stored_header_ok(data, at);
    if (type != 2 || ((head >> 3) & 31u) > 29 || ((head >> 8) & 31u) > 29) return false;
    return dynamic_header_ok(data, at);
}

}  // namespace wheelfix::zip::block_header
