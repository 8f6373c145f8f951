// Whether a deflate block could start at a given bit: the test a reader that
// enters a stream in the middle uses to find where to begin (zip/far_read.hpp)
//. Internal to the zip layer, like raw_deflate.hpp.
//
// Contract: could_start_block(data, at) is true when the bits of `data` from bit
// `at` on (least significant first, as deflate packs them; `at` is the BFINAL bit)
// are a block header that zlib's inflate would accept:
//   - a dynamic Huffman block (BTYPE 2) whose code lengths form prefix codes as
//     zlib's inflate_table demands: HLIT and HDIST at most 29, none
//     over-subscribed, the code-length code complete, the literal/length and
//     distance codes complete or a single code (the distance code may be empty),
//     and an end-of-block code;
//   - a stored block (BTYPE 0) whose LEN, byte aligned after the 3 header bits, is
//     the complement of its NLEN.
// Fixed Huffman blocks (BTYPE 1), which any bits can start, are never accepted,
// nor is a header that runs past the end of `data`. A pure function of the bits:
// it reads at most the header (a few hundred bytes) and allocates nothing.
#pragma once

#include <cstdint>
#include <span>

namespace wheelfix::zip::block_header {

bool could_start_block(std::span<const std::uint8_t> data, std::uint64_t at);

}  // namespace wheelfix::zip::block_header
