// A raw (headerless) deflate stream that appends its output to a vector: the
// splice's compressor (zip/splice.hpp).
//
// Why zlib here and not ISA-L (zip/codec.hpp): the splice glues a new stream into
// an old one at arbitrary bit offsets. That needs deflatePrime (bits written before
// the first block, and the padding blocks below), deflatePending (how many bits
// are still pending after Z_BLOCK) and Z_BLOCK itself (close a block without
// byte-aligning it); isal_deflate has none of them. The regions it compresses are
// bounded (the edits plus a window and the distance to the next block start), so
// zlib's speed costs milliseconds here; whole members go to parallel_deflate,
// which uses the codec.
//
// Contract: start() begins a new stream, optionally with a dictionary (the 32 KiB
// that precede the data, so the first bytes can refer back into them) and with up
// to 7 bits already written (deflatePrime: the tail of a block the stream is
// glued after). feed() compresses. Three ways to end:
// - end(final=true): Z_FINISH, the last block is marked final;
// - end(final=false): Z_SYNC_FLUSH, byte aligned after an empty stored block;
// - end_before(used, next): the output is to be followed by another stream's bytes
//   from a block that starts `used` bits (0-7) into its byte `next`. The current
//   block is closed with Z_BLOCK (not aligned: 0-7 bits pending), then empty
//   blocks pad the bit length to `used` mod 8 and the high 8 - used bits of `next`
//   complete the last byte. The output ends on a byte boundary and the other
//   stream continues with the byte after `next`, not shifted.
// Padding uses an empty fixed-code block (10 bits, what zlib's Z_PARTIAL_FLUSH
// emits) and an empty dynamic block of 95 bits (odd: the only way to an odd
// length) whose three codes are complete two-symbol codes, as zlib's own deflate
// makes them for PKZIP's sake; any inflater takes them. Misuse (a bad level) is
// std::invalid_argument; a zlib refusal is std::logic_error.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace wheelfix::zip {

class RawDeflater {
public:
    explicit RawDeflater(int level) {
        int status = deflateInit2(&stream_, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
        if (status == Z_STREAM_ERROR) throw std::invalid_argument("deflate level " + std::to_string(level));
        if (status != Z_OK) throw std::bad_alloc();
    }
    ~RawDeflater() { deflateEnd(&stream_); }
    RawDeflater(const RawDeflater&) = delete;
    RawDeflater& operator=(const RawDeflater&) = delete;

    void start(std::span<const std::uint8_t> dictionary, int prime_bits = 0, int prime_value = 0) {
        check(deflateReset(&stream_));
        if (!dictionary.empty())
            check(deflateSetDictionary(&stream_, dictionary.data(), static_cast<uInt>(dictionary.size())));
        if (prime_bits > 0) check(deflatePrime(&stream_, prime_bits, prime_value));
    }

    void feed(std::span<const std::uint8_t> input, std::vector<std::uint8_t>& out) {
        constexpr std::size_t kMaxStep = std::size_t(1) << 30;  // avail_in is 32 bits
        while (!input.empty()) {
            auto step = input.first(std::min(input.size(), kMaxStep));
            stream_.next_in = const_cast<Bytef*>(step.data());
            stream_.avail_in = static_cast<uInt>(step.size());
            run(Z_NO_FLUSH, out);
            input = input.subspan(step.size());
        }
    }

    void end(bool final_block, std::vector<std::uint8_t>& out) {
        stream_.next_in = nullptr;
        stream_.avail_in = 0;
        run(final_block ? Z_FINISH : Z_SYNC_FLUSH, out);
    }

    void end_before(int used, std::uint8_t next, std::vector<std::uint8_t>& out) {
        stream_.next_in = nullptr;
        stream_.avail_in = 0;
        run(Z_BLOCK, out);
        unsigned pending_bytes = 0;
        int pending_bits = 0;
        check(deflatePending(&stream_, &pending_bytes, &pending_bits));
        pad((used - pending_bits + 8) % 8);
        if (used > 0) prime(8 - used, next >> used);
        run(Z_NO_FLUSH, out);  // drains the completed bytes; nothing else is left to do
    }

private:
    struct Bits {
        int value;
        int count;
    };

    // Empty, non-final blocks adding `residue` bits modulo 8: 7 per dynamic block, 2 per fixed one.
    void pad(int residue) {
        static constexpr Bits kEmptyFixed[] = {{2, 3}, {0, 7}};  // BFINAL 0, BTYPE 01; end-of-block code 0000000
        static constexpr Bits kEmptyDynamic[] = {
            {4, 3},                          // BFINAL 0, BTYPE 10
            {0, 5}, {1, 5}, {15, 4},         // 257 literal/length codes, 2 distance codes, 19 code length codes
            {0, 3}, {0, 3}, {1, 3},          // code length code lengths in RFC 1951 order 16 17 18 0 8 7 ...:
            {0, 3}, {0, 3}, {0, 3}, {0, 3},  //   symbol 18 and symbol 1 get length 1 (codes 1 and 0)
            {0, 3}, {0, 3}, {0, 3}, {0, 3},
            {0, 3}, {0, 3}, {0, 3}, {0, 3},
            {0, 3}, {0, 3}, {1, 3}, {0, 3},
            {0, 1},                          // literal 0: length 1
            {1, 1}, {127, 7},                // 138 zeros (symbol 18, 7 extra bits: count - 11)
            {1, 1}, {106, 7},                // 117 zeros: literals 1-255
            {0, 1}, {0, 1}, {0, 1},          // end-of-block and both distance codes: length 1
            {1, 1},                          // the block's end-of-block code: 1
        };
        bool odd = residue % 2 != 0;
        if (odd)
            for (auto bits : kEmptyDynamic) prime(bits.count, bits.value);
        for (int fixed = (odd ? (residue + 1) % 8 : residue) / 2; fixed > 0; --fixed)
            for (auto bits : kEmptyFixed) prime(bits.count, bits.value);
    }

    void prime(int count, int value) { check(deflatePrime(&stream_, count, value)); }

    static void check(int status) {
        if (status != Z_OK) throw std::logic_error("zlib deflate setup failed");
    }

    // Deflates until the input is used and, for a flush, everything is out:
    // deflate() signals that by leaving room in the output buffer.
    void run(int flush, std::vector<std::uint8_t>& out) {
        constexpr std::size_t kStep = std::size_t(64) << 10;
        do {
            std::size_t used = out.size();
            out.resize(used + kStep);
            stream_.next_out = out.data() + used;
            stream_.avail_out = static_cast<uInt>(kStep);
            int status = deflate(&stream_, flush);
            out.resize(used + kStep - stream_.avail_out);
            if (status == Z_STREAM_ERROR) throw std::logic_error("zlib deflate failed");
        } while (stream_.avail_out == 0);
    }

    z_stream stream_{};
};

}  // namespace wheelfix::zip
