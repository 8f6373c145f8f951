// VZEROUPPER where the CPU has AVX (util/vector_state.hpp has the contract and why).
#include "wheelfix/util/vector_state.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace wheelfix {

#if defined(__x86_64__)

namespace {

__attribute__((target("avx"))) void zero_upper() noexcept { _mm256_zeroupper(); }

bool cpu_has_avx() noexcept {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx");
}

}  // namespace

void clear_upper_vector_state() noexcept {
    static const bool has_avx = cpu_has_avx();
    if (has_avx) zero_upper();
}

#else

void clear_upper_vector_state() noexcept {}

#endif

}  // namespace wheelfix
