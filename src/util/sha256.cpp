#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/timings.hpp"

#include "sha256_blocks.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace wheelfix {

namespace {
constexpr std::size_t kShaBlock = 64;
constexpr std::uint32_t kShaInitialChain[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                            0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
}  // namespace

// OpenSSL's context, or (ctx null) the chaining words of sha256_blocks with the
// bytes of a block not yet complete.
struct Sha256::State {
    EVP_MD_CTX* ctx = nullptr;
    std::uint32_t chain[8] = {};
    std::uint8_t pending[kShaBlock] = {};
    std::size_t pending_count = 0;
    std::uint64_t length = 0;  // bytes taken

    bool on_sha_extensions() const { return ctx == nullptr; }

    void take(std::span<const std::uint8_t> bytes) {
        if (!on_sha_extensions()) {
            if (!bytes.empty()) EVP_DigestUpdate(ctx, bytes.data(), bytes.size());
            return;
        }
        length += bytes.size();
        take_at_block_start(top_up(bytes));
    }

    // Completes the pending block from `bytes` (compressing it when full) and
    // returns the bytes left: none, or bytes that start a block.
    std::span<const std::uint8_t> top_up(std::span<const std::uint8_t> bytes) {
        if (pending_count == 0 || bytes.empty()) return bytes;
        const std::size_t count = std::min(kShaBlock - pending_count, bytes.size());
        std::memcpy(pending + pending_count, bytes.data(), count);
        pending_count += count;
        if (pending_count == kShaBlock) {
            sha256_blocks::compress(chain, pending, 1);
            pending_count = 0;
        }
        return bytes.subspan(count);
    }

    // Bytes that start a block (nothing pending, or no bytes): the whole blocks
    // compressed, the rest kept pending.
    void take_at_block_start(std::span<const std::uint8_t> bytes) {
        if (bytes.empty()) return;
        if (pending_count != 0) throw std::logic_error("Sha256: bytes taken mid-block as if at a block start");
        const std::size_t blocks = bytes.size() / kShaBlock;
        if (blocks) sha256_blocks::compress(chain, bytes.data(), blocks);
        const auto rest = bytes.subspan(blocks * kShaBlock);
        if (!rest.empty()) std::memcpy(pending + pending_count, rest.data(), rest.size());
        pending_count += rest.size();
    }

    std::array<std::uint8_t, 32> finish() {
        std::array<std::uint8_t, 32> out{};
        if (!on_sha_extensions()) {
            unsigned int size = 0;
            EVP_DigestFinal_ex(ctx, out.data(), &size);
            return out;
        }
        std::uint8_t last[2 * kShaBlock] = {};  // the pending bytes, 0x80, zeros, the bit length
        std::memcpy(last, pending, pending_count);
        last[pending_count] = 0x80;
        const std::size_t blocks = pending_count + 1 + 8 <= kShaBlock ? 1 : 2;
        const std::uint64_t bits = length * 8;
        for (int i = 0; i < 8; ++i) last[blocks * kShaBlock - 1 - i] = static_cast<std::uint8_t>(bits >> (8 * i));
        sha256_blocks::compress(chain, last, blocks);
        for (int word = 0; word < 8; ++word)
            for (int i = 0; i < 4; ++i) out[4 * word + i] = static_cast<std::uint8_t>(chain[word] >> (24 - 8 * i));
        return out;
    }
};

void init_crypto() {
    // Hashes need no configuration: never read openssl.cnf. A static build would
    // otherwise read the host's file, which may name modules to dlopen.
    static const bool once = OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr) == 1;
    (void)once;
}

Sha256::Sha256(Backend backend) : state_(std::make_unique<State>()) {
    if (backend == Backend::best && sha256_blocks::available()) {
        std::copy(std::begin(kShaInitialChain), std::end(kShaInitialChain), state_->chain);
        return;
    }
    init_crypto();
    state_->ctx = EVP_MD_CTX_new();
    if (!state_->ctx || EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("OpenSSL: cannot initialise SHA-256");
}

Sha256::~Sha256() { EVP_MD_CTX_free(state_->ctx); }

void Sha256::update(std::span<const std::uint8_t> bytes) {
    const timings::Scope timer(timings::Phase::hash);
    timings::count_bytes(timings::Phase::hash, bytes.size());
    state_->take(bytes);
}

void Sha256::update_pair(Sha256& first, std::span<const std::uint8_t> first_bytes, Sha256& second,
                         std::span<const std::uint8_t> second_bytes) {
    const timings::Scope timer(timings::Phase::hash);
    timings::count_bytes(timings::Phase::hash, first_bytes.size() + second_bytes.size());
    State& one = *first.state_;
    State& two = *second.state_;
    if (&one == &two || !one.on_sha_extensions() || !two.on_sha_extensions()) {
        one.take(first_bytes);
        two.take(second_bytes);
        return;
    }
    one.length += first_bytes.size();
    two.length += second_bytes.size();
    first_bytes = one.top_up(first_bytes);
    second_bytes = two.top_up(second_bytes);
    // Each stands at a block start now, or has no bytes left.
    const std::size_t blocks = std::min(first_bytes.size(), second_bytes.size()) / kShaBlock;
    if (blocks) sha256_blocks::compress_pair(one.chain, first_bytes.data(), two.chain, second_bytes.data(), blocks);
    one.take_at_block_start(first_bytes.subspan(blocks * kShaBlock));
    two.take_at_block_start(second_bytes.subspan(blocks * kShaBlock));
}

std::array<std::uint8_t, 32> Sha256::digest() { return state_->finish(); }

std::array<std::uint8_t, 32> sha256(std::span<const std::uint8_t> bytes) {
    Sha256 hasher;
    hasher.update(bytes);
    return hasher.digest();
}

namespace {
constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
}  // namespace

std::string urlsafe_b64_nopad(std::span<const std::uint8_t> bytes) {
    std::string out;
    out.reserve((bytes.size() * 4 + 2) / 3);
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        const std::size_t count = std::min<std::size_t>(3, bytes.size() - i);  // bytes in this group
        std::uint32_t v = 0;
        for (std::size_t k = 0; k < 3; ++k) v = (v << 8) | (k < count ? bytes[i + k] : 0);
        for (std::size_t k = 0; k <= count; ++k) out += kAlphabet[(v >> (18 - 6 * k)) & 63];  // no padding
    }
    return out;
}

bool urlsafe_b64_decode(std::string_view text, std::string& out) {
    while (!text.empty() && text.back() == '=') text.remove_suffix(1);
    out.clear();
    std::uint32_t acc = 0;
    int bits = 0;
    for (char c : text) {
        const auto v = kAlphabet.find(c);
        if (v == std::string_view::npos) return false;
        acc = (acc << 6) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xFF);
        }
    }
    return bits < 6;  // a single leftover char (6 bits) cannot come from real input
}

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
