// SHA-256 over bytes, incrementally (OpenSSL libcrypto: SHA-NI/AVX2 code paths;
// a hand-rolled SHA-256 would be the slowest step of verify on big wheels).
//
// Contract: feed bytes with update() in any chunking; digest() returns the 32
// raw bytes and may be called once. urlsafe_b64_nopad() gives RECORD's spelling.
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
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;

    void update(std::span<const std::uint8_t> bytes);
    std::array<std::uint8_t, 32> digest();

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
