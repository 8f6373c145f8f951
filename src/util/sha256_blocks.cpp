// SHA-256 blocks with the SHA extensions (sha256_blocks.hpp has the contract).
//
// The round structure is FIPS 180-4's: each 128-bit step runs four rounds as two
// SHA256RNDS2 (two rounds each) on the state split as ABEF and CDGH, with the
// message schedule's next four words made by SHA256MSG1, an add of W[t-7..t-4]
// and SHA256MSG2. One stream is bound by SHA256RNDS2's latency (each depends on
// the one before); a second, independent stream fills the gaps, so two streams
// run interleaved (figures: bench/README.md, "the two SHA-256 in one pass, paired").
#include "sha256_blocks.hpp"

#include "wheelfix/util/vector_state.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <stdexcept>

namespace wheelfix::sha256_blocks {

#if defined(__x86_64__)

namespace {

alignas(16) constexpr std::uint32_t kRoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define WHEELFIX_SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))

// The chaining words as SHA256RNDS2 wants them: ABEF and CDGH.
struct Lanes {
    __m128i abef;
    __m128i cdgh;
};

WHEELFIX_SHA_TARGET inline Lanes load(const std::uint32_t* state) {
    const __m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state)), 0xB1);  // CDAB
    const __m128i efgh = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4)), 0x1B);
    return {_mm_alignr_epi8(dcba, efgh, 8), _mm_blend_epi16(efgh, dcba, 0xF0)};
}

WHEELFIX_SHA_TARGET inline void store(const Lanes& lanes, std::uint32_t* state) {
    const __m128i feba = _mm_shuffle_epi32(lanes.abef, 0x1B);
    const __m128i dchg = _mm_shuffle_epi32(lanes.cdgh, 0xB1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), _mm_alignr_epi8(dchg, feba, 8));
}

// N streams (1 or 2), `blocks` blocks each, their rounds interleaved step by step.
template <int N>
WHEELFIX_SHA_TARGET void compress_streams(std::uint32_t* const* states, const std::uint8_t* const* data,
                                          std::size_t blocks) {
    const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    Lanes lanes[N];
    const std::uint8_t* at[N];
    for (int s = 0; s < N; ++s) {
        lanes[s] = load(states[s]);
        at[s] = data[s];
    }
    for (std::size_t block = 0; block < blocks; ++block) {
        Lanes before[N];
        __m128i schedule[N][4];  // W[4g..4g+3] of the last four steps, by g % 4
        for (int s = 0; s < N; ++s) before[s] = lanes[s];
#pragma GCC unroll 16
        for (int step = 0; step < 16; ++step) {
            const __m128i constants = _mm_load_si128(reinterpret_cast<const __m128i*>(kRoundConstants + 4 * step));
            __m128i words[N];
            for (int s = 0; s < N; ++s) {
                if (step < 4)
                    schedule[s][step] = _mm_shuffle_epi8(
                        _mm_loadu_si128(reinterpret_cast<const __m128i*>(at[s] + 16 * step)), byte_swap);
                words[s] = _mm_add_epi32(schedule[s][step & 3], constants);
                lanes[s].cdgh = _mm_sha256rnds2_epu32(lanes[s].cdgh, lanes[s].abef, words[s]);
            }
            if (step >= 3 && step <= 14) {  // W for step + 1 (>= 4): + W[t-7..t-4], then sigma1 of the newest
                for (int s = 0; s < N; ++s) {
                    __m128i& next = schedule[s][(step + 1) & 3];
                    next = _mm_add_epi32(next, _mm_alignr_epi8(schedule[s][step & 3], schedule[s][(step - 1) & 3], 4));
                    next = _mm_sha256msg2_epu32(next, schedule[s][step & 3]);
                }
            }
            for (int s = 0; s < N; ++s) {
                words[s] = _mm_shuffle_epi32(words[s], 0x0E);
                lanes[s].abef = _mm_sha256rnds2_epu32(lanes[s].abef, lanes[s].cdgh, words[s]);
            }
            if (step >= 1 && step <= 12)  // W[t-16] + sigma0(W[t-15]) for step + 3
                for (int s = 0; s < N; ++s)
                    schedule[s][(step - 1) & 3] = _mm_sha256msg1_epu32(schedule[s][(step - 1) & 3], schedule[s][step & 3]);
        }
        for (int s = 0; s < N; ++s) {
            lanes[s].abef = _mm_add_epi32(lanes[s].abef, before[s].abef);
            lanes[s].cdgh = _mm_add_epi32(lanes[s].cdgh, before[s].cdgh);
            at[s] += 64;
        }
    }
    for (int s = 0; s < N; ++s) store(lanes[s], states[s]);
}

bool cpu_has_sha_extensions() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
    const bool ssse3 = ecx & bit_SSSE3, sse41 = ecx & bit_SSE4_1;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
    return ssse3 && sse41 && (ebx & bit_SHA);
}

}  // namespace

bool available() {
    static const bool has = cpu_has_sha_extensions();
    return has;
}

// Each starts clean of dirty upper vector state: its instructions are legacy SSE.
void compress(std::uint32_t state[8], const std::uint8_t* data, std::size_t blocks) {
    clear_upper_vector_state();
    compress_streams<1>(&state, &data, blocks);
}

void compress_pair(std::uint32_t first[8], const std::uint8_t* first_data, std::uint32_t second[8],
                   const std::uint8_t* second_data, std::size_t blocks) {
    std::uint32_t* const states[2] = {first, second};
    const std::uint8_t* const data[2] = {first_data, second_data};
    clear_upper_vector_state();
    compress_streams<2>(states, data, blocks);
}

#undef WHEELFIX_SHA_TARGET

#else

bool available() { return false; }

void compress(std::uint32_t*, const std::uint8_t*, std::size_t) {
    throw std::logic_error("sha256_blocks::compress without the SHA extensions");
}

void compress_pair(std::uint32_t*, const std::uint8_t*, std::uint32_t*, const std::uint8_t*, std::size_t) {
    throw std::logic_error("sha256_blocks::compress_pair without the SHA extensions");
}

#endif

}  // namespace wheelfix::sha256_blocks
