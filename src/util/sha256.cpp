#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/timings.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <stdexcept>

namespace wheelfix {

struct Sha256::State {
    EVP_MD_CTX* ctx = nullptr;
};

void init_crypto() {
    // Hashes need no configuration: never read openssl.cnf. A static build would
    // otherwise read the host's file, which may name modules to dlopen.
    static const bool once = OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr) == 1;
    (void)once;
}

Sha256::Sha256() : state_(std::make_unique<State>()) {
    init_crypto();
    state_->ctx = EVP_MD_CTX_new();
    if (!state_->ctx || EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("OpenSSL: cannot initialise SHA-256");
}

Sha256::~Sha256() { EVP_MD_CTX_free(state_->ctx); }

void Sha256::update(std::span<const std::uint8_t> bytes) {
    const timings::Scope timer(timings::Phase::hash);
    timings::count_bytes(timings::Phase::hash, bytes.size());
    if (!bytes.empty()) EVP_DigestUpdate(state_->ctx, bytes.data(), bytes.size());
}

std::array<std::uint8_t, 32> Sha256::digest() {
    std::array<std::uint8_t, 32> out{};
    unsigned int len = 0;
    EVP_DigestFinal_ex(state_->ctx, out.data(), &len);
    return out;
}

std::array<std::uint8_t, 32> sha256(std::span<const std::uint8_t> bytes) {
    Sha256 hasher;
    hasher.update(bytes);
    return hasher.digest();
}

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int decode_char(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
}
}  // namespace

std::string urlsafe_b64_nopad(std::span<const std::uint8_t> bytes) {
    std::string out;
    out.reserve((bytes.size() * 4 + 2) / 3);
    std::size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        std::uint32_t v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
        for (int shift = 18; shift >= 0; shift -= 6) out += kAlphabet[(v >> shift) & 63];
    }
    std::size_t rest = bytes.size() - i;
    if (rest == 1) {
        std::uint32_t v = bytes[i] << 16;
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
    } else if (rest == 2) {
        std::uint32_t v = (bytes[i] << 16) | (bytes[i + 1] << 8);
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += kAlphabet[(v >> 6) & 63];
    }
    return out;
}

bool urlsafe_b64_decode(std::string_view text, std::string& out) {
    while (!text.empty() && text.back() == '=') text.remove_suffix(1);
    out.clear();
    std::uint32_t acc = 0;
    int bits = 0;
    for (char c : text) {
        int v = decode_char(c);
        if (v < 0) return false;
        acc = (acc << 6) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xFF);
        }
    }
    return bits < 6;  // a single leftover char (6 bits) cannot come from real input
}

}  // namespace wheelfix

namespace wheelfix {

std::string hex_digest(std::span<const std::uint8_t> digest) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(digest.size() * 2);
    for (std::uint8_t byte : digest) {
        out += kDigits[byte >> 4];
        out += kDigits[byte & 15];
    }
    return out;
}

}  // namespace wheelfix
