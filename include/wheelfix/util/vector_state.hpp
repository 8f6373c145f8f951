// Clearing the upper halves of the x86 vector registers (VZEROUPPER).
//
// Why: code that uses 256- or 512-bit registers and returns without VZEROUPPER
// leaves them "dirty", and on this project's machines (AMD Zen 5) every
// legacy-SSE instruction after that runs slower until something clears them.
// libisal 2.30 has no VZEROUPPER at all (its AVX-512 CRC-32 and inflate kernels
// return dirty), and SHA-NI, the SHA-256 instructions, exist only in legacy-SSE
// form, and pay for the transition (docs/decisions.md, "Hashing and vector
// state", has the figure). So the codec clears them after each call into
// ISA-L (zip/codec.cpp), and util/sha256_blocks before it hashes.
//
// Contract: clear_upper_vector_state() executes VZEROUPPER when the CPU has AVX
// (asked once), and does nothing elsewhere (no AVX, not x86-64). It changes no
// value a caller holds: the compiler keeps no vector values live across the call.
#pragma once

namespace wheelfix {

void clear_upper_vector_state() noexcept;

}  // namespace wheelfix
