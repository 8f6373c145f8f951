// SHA-256 over bytes, incrementally: with the CPU's SHA extensions where it has
// them (x86-64 SHA-NI, util/sha256_blocks: the rate of OpenSSL's own SHA-NI code,
// and two streams interleaved at ~1.5x that, which OpenSSL has no call for),
// else OpenSSL libcrypto (its SHA-NI/AVX2/ARMv8 code paths).
//
// Contract: feed bytes with update() in any chunking; digest() returns the 32
// raw bytes and may be called once. update_pair(a, A, b, B) gives a and b the
// digests a.update(A) and b.update(B) would, hashing the two streams' blocks
// together where both hashers run on the SHA extensions (relink hashes a member
// and its edited copy in one pass: repair/plan.cpp). Backend::openssl asks for
// OpenSSL whatever the CPU (tests: the two backends must agree).
// urlsafe_b64_nopad() gives RECORD's spelling.
// init_crypto() initialises libcrypto once without reading any openssl.cnf (the
// static build must not follow a host's config to modules); every EVP user calls it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace wheelfix {

void init_crypto();

class Sha256 {
public:
    enum class Backend { best, openssl };
    explicit Sha256(Backend backend = Backend::best);
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;

    void update(std::span<const std::uint8_t> bytes);
    std::array<std::uint8_t, 32> digest();
    static void update_pair(Sha256& first, std::span<const std::uint8_t> first_bytes, Sha256& second,
                            std::span<const std::uint8_t> second_bytes);

private:
    struct State;
    std::unique_ptr<State> state_;
};

std::array<std::uint8_t, 32> sha256(std::span<const std::uint8_t> bytes);
// Lower-case hex, as sha256sum prints it.
std::string hex_digest(std::span<const std::uint8_t> digest);

// Base64 with the URL-safe alphabet (-_) and no '=' padding, as RECORD uses.
std::string urlsafe_b64_nopad(std::span<const std::uint8_t> bytes);
// The inverse; returns false on characters outside the alphabet.
bool urlsafe_b64_decode(std::string_view text, std::string& out);

}  // namespace wheelfix
