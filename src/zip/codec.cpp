// The two codec backends behind zip/codec.hpp: ISA-L's igzip (when built with
// it) and zlib.
//
// ISA-L facts this relies on (igzip_lib.h and igzip_inflate.c of 2.30):
// - isal_inflate() with crc_flag ISAL_DEFLATE reads a raw stream; it never stops
//   at a block end on its own. When its input runs out inside a block header it
//   keeps the header's bytes read so far in tmp_in_buffer (tmp_in_size) and the
//   bits before them in read_in (read_in_length), in block_state ISAL_BLOCK_HDR:
//   the header starts 8 * tmp_in_size + read_in_length bits before the end of the
//   input it took. (Checked against zlib's Z_BLOCK boundaries on 256 MB of
//   libcublasLt: every one of them agreed, bit and output offset.)
// - Resuming inside a stream: read_in/read_in_length may be preset with the bits
//   of the boundary's byte before the first isal_inflate() call (rapidgzip starts
//   ISA-L at block offsets the same way), and isal_inflate_set_dict() takes the
//   window while block_state is still ISAL_BLOCK_NEW_HDR.
// - Lookback is checked against pointers (the output buffer and its own 32 KiB
//   history copy), not against total_out, which is 32 bits and wraps on members
//   over 4 GiB: we count bytes ourselves and never read it.
// - isal_deflate(): level 0-3 with a level_buf of ISAL_DEF_LVLn_DEFAULT bytes;
//   end_of_stream ends with a final block (state ZSTATE_END); flush SYNC_FLUSH with
//   no input left ends byte aligned after an empty stored block and returns to
//   ZSTATE_NEW_HDR. isal_deflate_set_dict() right after a reset primes the window.
// - crc32_gzip_refl(crc, buf, len) is zlib's crc32(crc, buf, len).
#include "wheelfix/zip/codec.hpp"

#include "wheelfix/util/timings.hpp"
#include "wheelfix/util/vector_state.hpp"

#include "raw_deflate.hpp"

#include <zlib.h>

#ifdef WHEELFIX_HAVE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#endif

#include <algorithm>
#include <new>
#include <string>

namespace wheelfix::zip {
namespace {

constexpr std::size_t kMaxStep = std::size_t(1) << 30;  // both libraries count in 32 bits

void require_compiled(Backend backend) {
#ifndef WHEELFIX_HAVE_ISAL
    if (backend == Backend::isal) throw std::invalid_argument("this wheelfix is built without ISA-L");
#else
    (void)backend;
#endif
}

std::string zlib_problem(const z_stream& stream, const char* fallback) {
    return std::string("corrupt compressed data (") + (stream.msg ? stream.msg : fallback) + ")";
}

}  // namespace

std::string_view backend_name(Backend backend) noexcept { return backend == Backend::isal ? "isa-l" : "zlib"; }

Backend default_backend() noexcept {
#ifdef WHEELFIX_HAVE_ISAL
    return Backend::isal;
#else
    return Backend::zlib;
#endif
}

std::vector<Backend> compiled_backends() {
#ifdef WHEELFIX_HAVE_ISAL
    return {Backend::isal, Backend::zlib};
#else
    return {Backend::zlib};
#endif
}

// ---- CRC-32 --------------------------------------------------------------------------

std::uint32_t crc32_with(Backend backend, std::uint32_t crc, std::span<const std::uint8_t> bytes) {
    if (bytes.empty()) return crc;  // zlib's crc32 of a null buffer restarts at 0
    require_compiled(backend);
#ifdef WHEELFIX_HAVE_ISAL
    if (backend == Backend::isal) {
        for (std::size_t at = 0; at < bytes.size(); at += kMaxStep) {
            auto step = bytes.subspan(at, std::min(kMaxStep, bytes.size() - at));
            crc = crc32_gzip_refl(crc, step.data(), step.size());
        }
        clear_upper_vector_state();
        return crc;
    }
#endif
    return static_cast<std::uint32_t>(crc32_z(crc, bytes.data(), bytes.size()));
}

std::uint32_t crc32(std::uint32_t crc, std::span<const std::uint8_t> bytes) {
    return crc32_with(default_backend(), crc, bytes);
}

std::uint32_t crc32_combine(std::uint32_t first, std::uint32_t second, std::uint64_t second_length) {
    return static_cast<std::uint32_t>(::crc32_combine64(first, second, static_cast<z_off64_t>(second_length)));
}

// ---- inflate ---------------------------------------------------------------------------

struct Inflater::Impl {
    virtual ~Impl() = default;
    virtual void resume(int used, std::uint8_t byte, std::span<const std::uint8_t> dictionary) = 0;
    virtual Step inflate(std::span<const std::uint8_t> input, std::span<std::uint8_t> output, bool stop_at_block) = 0;
    virtual std::optional<unsigned> block_start_bits() const = 0;
    virtual Backend backend() const noexcept = 0;
};

namespace {

class ZlibInflate final : public Inflater::Impl {
public:
    ZlibInflate() { init(); }
    ~ZlibInflate() override { inflateEnd(&stream_); }

    void resume(int used, std::uint8_t byte, std::span<const std::uint8_t> dictionary) override {
        inflateEnd(&stream_);
        stream_ = {};
        init();
        if (used != 0 && inflatePrime(&stream_, 8 - used, byte >> used) != Z_OK)
            throw std::logic_error("zlib inflatePrime failed");
        if (!dictionary.empty() &&
            inflateSetDictionary(&stream_, dictionary.data(), static_cast<uInt>(dictionary.size())) != Z_OK)
            throw std::logic_error("zlib inflateSetDictionary failed");
    }

    Inflater::Step inflate(std::span<const std::uint8_t> input, std::span<std::uint8_t> output, bool stop_at_block) override {
        input = input.first(std::min(input.size(), kMaxStep));
        output = output.first(std::min(output.size(), kMaxStep));
        stream_.next_in = const_cast<Bytef*>(input.data());
        stream_.avail_in = static_cast<uInt>(input.size());
        stream_.next_out = output.data();
        stream_.avail_out = static_cast<uInt>(output.size());
        int status = ::inflate(&stream_, stop_at_block ? Z_BLOCK : Z_NO_FLUSH);
        Inflater::Step step{input.size() - stream_.avail_in, output.size() - stream_.avail_out, status == Z_STREAM_END};
        if (status == Z_DATA_ERROR || status == Z_NEED_DICT) throw CodecError(zlib_problem(stream_, "inflate failed"));
        if (status == Z_MEM_ERROR) throw std::bad_alloc();
        if (status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR)
            throw CodecError(zlib_problem(stream_, "inflate failed"));
        return step;
    }

    std::optional<unsigned> block_start_bits() const override {
        constexpr int kBlockEnd = 128, kLastBlock = 64, kUnusedBits = 7;
        if (!(stream_.data_type & kBlockEnd) || (stream_.data_type & kLastBlock)) return std::nullopt;
        return static_cast<unsigned>(stream_.data_type & kUnusedBits);
    }

    Backend backend() const noexcept override { return Backend::zlib; }

private:
    void init() {
        if (inflateInit2(&stream_, -MAX_WBITS) != Z_OK) throw std::bad_alloc();
    }
    z_stream stream_{};
};

#ifdef WHEELFIX_HAVE_ISAL
class IsalInflate final : public Inflater::Impl {
public:
    IsalInflate() { isal_inflate_init(&state_); }

    void resume(int used, std::uint8_t byte, std::span<const std::uint8_t> dictionary) override {
        isal_inflate_init(&state_);
        if (used != 0) {
            state_.read_in = byte >> used;
            state_.read_in_length = 8 - used;
        }
        if (!dictionary.empty() &&
            isal_inflate_set_dict(&state_, const_cast<std::uint8_t*>(dictionary.data()),
                                  static_cast<std::uint32_t>(dictionary.size())) != COMP_OK)
            throw std::logic_error("isal_inflate_set_dict failed");
    }

    Inflater::Step inflate(std::span<const std::uint8_t> input, std::span<std::uint8_t> output, bool) override {
        input = input.first(std::min(input.size(), kMaxStep));
        output = output.first(std::min(output.size(), kMaxStep));
        state_.next_in = const_cast<std::uint8_t*>(input.data());
        state_.avail_in = static_cast<std::uint32_t>(input.size());
        state_.next_out = output.data();
        state_.avail_out = static_cast<std::uint32_t>(output.size());
        int status = isal_inflate(&state_);
        clear_upper_vector_state();
        if (status < 0) throw CodecError(problem(status));
        return {input.size() - state_.avail_in, output.size() - state_.avail_out, state_.block_state == ISAL_BLOCK_FINISH};
    }

    // Only ISAL_BLOCK_HDR: a call does not end in NEW_HDR mid-stream (it reads on
    // into the header), and at the very start NEW_HDR is no boundary found.
    std::optional<unsigned> block_start_bits() const override {
        bool output_delivered = state_.tmp_out_valid == state_.tmp_out_processed && state_.write_overflow_len == 0 &&
                                state_.copy_overflow_length == 0;
        if (state_.block_state != ISAL_BLOCK_HDR || !output_delivered) return std::nullopt;
        return static_cast<unsigned>(state_.tmp_in_size) * 8 + static_cast<unsigned>(state_.read_in_length);
    }

    Backend backend() const noexcept override { return Backend::isal; }

private:
    static std::string problem(int status) {
        switch (status) {
        case ISAL_INVALID_BLOCK: return "corrupt compressed data (invalid block)";
        case ISAL_INVALID_SYMBOL: return "corrupt compressed data (invalid code)";
        case ISAL_INVALID_LOOKBACK: return "corrupt compressed data (invalid distance too far back)";
        default: return "corrupt compressed data (inflate failed: " + std::to_string(status) + ")";
        }
    }

    inflate_state state_{};
};
#endif

std::unique_ptr<Inflater::Impl> make_inflate(Backend backend) {
    require_compiled(backend);
#ifdef WHEELFIX_HAVE_ISAL
    if (backend == Backend::isal) return std::make_unique<IsalInflate>();
#endif
    return std::make_unique<ZlibInflate>();
}

}  // namespace

Inflater::Inflater(Backend backend) : impl_(make_inflate(backend)) {}
Inflater::~Inflater() = default;

std::uint64_t Inflater::resume(std::uint64_t bit, std::uint8_t byte, std::span<const std::uint8_t> dictionary) {
    const int used = static_cast<int>(bit % 8);  // bits of `byte` that end the block before
    impl_->resume(used, byte, dictionary);
    return bit / 8 + (used != 0 ? 1 : 0);
}

Inflater::Step Inflater::inflate(std::span<const std::uint8_t> input, std::span<std::uint8_t> output, bool stop_at_block) {
    auto step = impl_->inflate(input, output, stop_at_block);
    timings::count_bytes(timings::Phase::inflate, step.produced);
    return step;
}

std::optional<unsigned> Inflater::block_start_bits() const { return impl_->block_start_bits(); }
Backend Inflater::backend() const noexcept { return impl_->backend(); }

// ---- deflate ---------------------------------------------------------------------------

struct Deflater::Impl {
    virtual ~Impl() = default;
    virtual void start(std::span<const std::uint8_t> dictionary) = 0;
    virtual void feed(std::span<const std::uint8_t> input, std::vector<std::uint8_t>& out) = 0;
    virtual void end(bool final_block, std::vector<std::uint8_t>& out) = 0;
};

namespace {

// zlib's raw deflate is the splice's compressor too (raw_deflate.hpp): one copy of it.
class ZlibDeflate final : public Deflater::Impl {
public:
    explicit ZlibDeflate(int level) : raw_(level) {}

    void start(std::span<const std::uint8_t> dictionary) override { raw_.start(dictionary); }
    void feed(std::span<const std::uint8_t> input, std::vector<std::uint8_t>& out) override { raw_.feed(input, out); }
    void end(bool final_block, std::vector<std::uint8_t>& out) override { raw_.end(final_block, out); }

private:
    RawDeflater raw_;
};

#ifdef WHEELFIX_HAVE_ISAL
std::size_t isal_level_buffer(int level) {
    switch (level) {
    case 0: return ISAL_DEF_LVL0_DEFAULT;
    case 1: return ISAL_DEF_LVL1_DEFAULT;
    case 2: return ISAL_DEF_LVL2_DEFAULT;
    case 3: return ISAL_DEF_LVL3_DEFAULT;
    default: throw std::invalid_argument("ISA-L deflate level " + std::to_string(level) + " (0-3)");
    }
}

class IsalDeflate final : public Deflater::Impl {
public:
    explicit IsalDeflate(int level) : level_(level), level_buffer_(isal_level_buffer(level)) {
        stream_ = std::make_unique<isal_zstream>();
        isal_deflate_init(stream_.get());
        start({});
    }

    void start(std::span<const std::uint8_t> dictionary) override {
        auto& s = *stream_;
        isal_deflate_reset(&s);
        s.level = static_cast<std::uint32_t>(level_);
        s.level_buf = level_buffer_.empty() ? nullptr : level_buffer_.data();
        s.level_buf_size = static_cast<std::uint32_t>(level_buffer_.size());
        s.gzip_flag = IGZIP_DEFLATE;
        s.hist_bits = 0;  // 32 KiB
        s.end_of_stream = 0;
        s.flush = NO_FLUSH;
        if (!dictionary.empty() &&
            isal_deflate_set_dict(&s, const_cast<std::uint8_t*>(dictionary.data()),
                                  static_cast<std::uint32_t>(dictionary.size())) != COMP_OK)
            throw std::logic_error("isal_deflate_set_dict failed");
    }

    void feed(std::span<const std::uint8_t> input, std::vector<std::uint8_t>& out) override {
        auto& s = *stream_;
        while (!input.empty()) {
            auto step = input.first(std::min(input.size(), kMaxStep));
            s.next_in = const_cast<std::uint8_t*>(step.data());
            s.avail_in = static_cast<std::uint32_t>(step.size());
            s.flush = NO_FLUSH;
            s.end_of_stream = 0;
            while (run_once(out) || s.avail_in != 0) {
            }
            input = input.subspan(step.size());
        }
    }

    void end(bool final_block, std::vector<std::uint8_t>& out) override {
        auto& s = *stream_;
        s.next_in = nullptr;
        s.avail_in = 0;
        s.end_of_stream = final_block ? 1 : 0;
        s.flush = final_block ? NO_FLUSH : SYNC_FLUSH;
        const int done = final_block ? ZSTATE_END : ZSTATE_NEW_HDR;
        for (int rounds = 0;; ++rounds) {
            bool full = run_once(out);
            if (!full && s.internal_state.state == done) break;
            if (rounds > (1 << 20)) throw std::logic_error("isal_deflate does not finish");
        }
    }

private:
    // One isal_deflate() call into 64 KiB of fresh room; true when the room was filled.
    bool run_once(std::vector<std::uint8_t>& out) {
        constexpr std::size_t kStep = std::size_t(64) << 10;
        auto& s = *stream_;
        const std::size_t used = out.size();
        out.resize(used + kStep);
        s.next_out = out.data() + used;
        s.avail_out = static_cast<std::uint32_t>(kStep);
        int status = isal_deflate(&s);
        clear_upper_vector_state();
        out.resize(used + kStep - s.avail_out);
        if (status != COMP_OK) throw std::logic_error("isal_deflate failed: " + std::to_string(status));
        return s.avail_out == 0;
    }

    int level_;
    std::vector<std::uint8_t> level_buffer_;
    std::unique_ptr<isal_zstream> stream_;  // 80 KB: kept off the caller's stack
};
#endif

std::unique_ptr<Deflater::Impl> make_deflate(Backend backend, int level) {
    require_compiled(backend);
#ifdef WHEELFIX_HAVE_ISAL
    if (backend == Backend::isal) return std::make_unique<IsalDeflate>(level);
#endif
    return std::make_unique<ZlibDeflate>(level);
}

}  // namespace

Deflater::Deflater(Backend backend, int level) : impl_(make_deflate(backend, level)) {}
Deflater::~Deflater() = default;

void Deflater::start(std::span<const std::uint8_t> dictionary) { impl_->start(dictionary); }

void Deflater::feed(std::span<const std::uint8_t> input, std::vector<std::uint8_t>& out) {
    impl_->feed(input, out);
}

void Deflater::end(bool final_block, std::vector<std::uint8_t>& out) {
    impl_->end(final_block, out);
}

DeflateChoice member_deflate() noexcept {
#ifdef WHEELFIX_HAVE_ISAL
    return {Backend::isal, 1};
#else
    return {Backend::zlib, 6};
#endif
}

}  // namespace wheelfix::zip
