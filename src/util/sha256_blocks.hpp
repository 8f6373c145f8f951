// SHA-256's compression function on whole 64-byte blocks with the x86 SHA
// extensions (SHA-NI), one stream at a time or two interleaved (util/sha256.hpp
// says why: OpenSSL has no call that hashes two independent streams together).
//
// Contract: available() tells whether this CPU runs them (x86-64 with SHA, SSSE3
// and SSE4.1, asked of cpuid once); where it is false (another CPU, another
// architecture) the other functions must not be called. compress(state, data, n)
// applies the compression function to n blocks at `data` in order, updating the
// eight 32-bit chaining words `state` (H0..H7, host order). compress_pair does it
// for two states and two block runs of the same length, interleaving their rounds
// so that the two dependency chains share the SHA units: each result equals
// compress's on its own. Padding and partial blocks are the caller's (sha256.cpp).
// Tests compare both with OpenSSL on random bytes (tests/unit/test_util.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace wheelfix::sha256_blocks {

bool available();
void compress(std::uint32_t state[8], const std::uint8_t* data, std::size_t blocks);
void compress_pair(std::uint32_t first[8], const std::uint8_t* first_data, std::uint32_t second[8],
                   const std::uint8_t* second_data, std::size_t blocks);

}  // namespace wheelfix::sha256_blocks
