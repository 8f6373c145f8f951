// The compression core: raw deflate streams in and out, and CRC-32, behind one
// small interface with two backends.
//
// Contract:
// - Backend::isal (Intel ISA-L's igzip; the default when the build has it,
//   `WHEELFIX_ISAL`) and Backend::zlib (always built: the fallback and the test
//   oracle). Both read and write standard raw deflate (RFC 1951): either inflates
//   what the other deflates. Asking for Backend::isal in a zlib-only build is
//   std::invalid_argument; compiled_backends() says what this build has.
// - crc32() is zlib's crc32() (reflected CRC-32, ISO-HDLC), chainable:
//   crc32(crc32(0, a), b) == crc32(0, a ++ b). crc32_combine() joins two CRCs
//   (zlib's arithmetic: ISA-L has none).
// - Inflater: one raw deflate stream, streaming. inflate() takes what input and
//   output room it is given and reports what it used; a corrupt stream is
//   CodecError (the caller names the file). A step that neither consumes nor
//   produces (and has not ended) means the input it was given is not enough: the
//   caller brings more, or, with none left, the stream is truncated.
//   resume(bit, byte, dictionary) starts the inflater at a deflate block boundary at
//   bit `bit` of a stream: `byte` is the stream's byte bit / 8 (its low bit % 8 bits
//   end the previous block), `dictionary` the (up to 32 KiB) output before the
//   boundary. It returns the offset of the stream's byte to feed the inflater from.
//   block_start_bits(): when the inflater stands at the start of a block it has not
//   begun to decode, how many of the input bits it consumed are that block's (so
//   the block starts at 8 * consumed - that many bits), else nullopt. zlib stops
//   there after every block when asked (stop_at_block); ISA-L never stops on its
//   own, but when its input ends inside a block header it stands there, so a
//   caller that wants block starts feeds it short slices (zip/inflate_index.hpp).
// - Deflater: raw deflate at a level of its backend (ISA-L 0-3, zlib 0-9; others
//   are std::invalid_argument). start() begins a stream, optionally with a
//   dictionary (the bytes before the data: matches may reach into it). end(true)
//   ends with the final block; end(false) with a sync flush (an empty stored
//   block: byte aligned), so another stream's bytes may follow (parallel_deflate's
//   chunks). Deterministic: the same input, level, backend and build give the same
//   bytes (docs/compression.md says which backend makes the reference output).
// - member_deflate(): the backend and level new and rewritten zip members are
//   deflated with (chosen by measurement: bench/README.md, "Compression levels").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::zip {

enum class Backend : std::uint8_t { isal, zlib };

std::string_view backend_name(Backend backend) noexcept;
Backend default_backend() noexcept;                 // isal when built with it, else zlib
std::vector<Backend> compiled_backends();           // the default first

struct CodecError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::uint32_t crc32(std::uint32_t crc, std::span<const std::uint8_t> bytes);
std::uint32_t crc32_with(Backend backend, std::uint32_t crc, std::span<const std::uint8_t> bytes);
std::uint32_t crc32_combine(std::uint32_t first, std::uint32_t second, std::uint64_t second_length);

class Inflater {
public:
    explicit Inflater(Backend backend = default_backend());
    ~Inflater();
    Inflater(const Inflater&) = delete;
    Inflater& operator=(const Inflater&) = delete;

    struct Step {
        std::size_t consumed = 0;
        std::size_t produced = 0;
        bool ended = false;  // the final block is decoded and all its output delivered
    };

    std::uint64_t resume(std::uint64_t bit, std::uint8_t byte, std::span<const std::uint8_t> dictionary);
    Step inflate(std::span<const std::uint8_t> input, std::span<std::uint8_t> output, bool stop_at_block = false);
    std::optional<unsigned> block_start_bits() const;
    Backend backend() const noexcept;

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

class Deflater {
public:
    Deflater(Backend backend, int level);
    ~Deflater();
    Deflater(const Deflater&) = delete;
    Deflater& operator=(const Deflater&) = delete;

    void start(std::span<const std::uint8_t> dictionary = {});
    void feed(std::span<const std::uint8_t> input, std::vector<std::uint8_t>& out);
    void end(bool final_block, std::vector<std::uint8_t>& out);

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

struct DeflateChoice {
    Backend backend;
    int level;
};
DeflateChoice member_deflate() noexcept;

}  // namespace wheelfix::zip
