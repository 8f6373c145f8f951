// inflate_indexed: one pass over a member that inflates it and indexes its blocks.
//
// Technique (zlib's examples/zran.c): inflate the raw deflate stream with
// Z_BLOCK, which makes inflate() return at the end of every block. When it does,
// data_type says so (bit 128), whether the block just left was the last one (bit
// 64), and how many bits of the last byte it took are still unused (bits 0-2):
// the next block starts at bit  8 * total_in - unused. Together with total_out
// that is an access point. Where it is not byte aligned, the byte it starts in also
// holds the previous block's last bits; we remember that byte (the last one inflate
// consumed), so a splice restarting there can prime deflate with those bits.
//
// The compressed bytes come from Archive::open_raw in fixed chunks and the
// inflated bytes leave through `sink` in fixed chunks; only `keep` holds them all.
// Size and CRC-32 are checked against the central directory as the bytes pass.
// The indexer CRCs its output itself, incrementally: at each boundary it extends
// the CRC over the output produced since, so every access point carries the CRC of
// the prefix it starts at, and each byte is still CRC'd exactly once.
#include "wheelfix/zip/inflate_index.hpp"

#include "wheelfix/util/error.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <string>

namespace wheelfix::zip {
namespace {

constexpr std::size_t kInputChunk = std::size_t(256) << 10;
constexpr std::size_t kOutputChunk = std::size_t(1) << 20;
constexpr std::uint64_t kMaxDeflateRatio = 1032;  // deflate cannot expand more than this
constexpr int kBlockEnd = 128, kLastBlock = 64, kUnusedBits = 7;

using Sink = std::function<void(std::span<const std::uint8_t>)>;

std::uint64_t plausible_size(std::uint64_t compressed_size) {
    if (compressed_size > UINT64_MAX / kMaxDeflateRatio) return UINT64_MAX;
    return compressed_size * kMaxDeflateRatio + 1;
}

[[noreturn]] void fail(const Archive& archive, const Member& member, const std::string& problem) {
    throw InputError(archive.path().string(), "member " + member.name + ": " + problem);
}

// Where the inflated bytes go: checked against the central directory's size,
// CRC'd, handed to the sink, kept if asked.
class Delivery {
public:
    Delivery(const Archive& archive, const Member& member, const Sink& sink, InflatedMember& result, bool keep)
        : archive_(archive), member_(member), sink_(sink), result_(result), keep_(keep) {
        // The size is untrusted, but deflate's ratio bounds it: reserving it whole
        // avoids the copy (and the doubled peak) of a growing vector.
        if (keep_) result_.data.reserve(std::min(member.size, plausible_size(member.compressed_size)));
    }

    void operator()(std::span<const std::uint8_t> chunk) {
        if (chunk.empty()) return;
        take(chunk, static_cast<std::uint32_t>(crc32_z(result_.crc32, chunk.data(), chunk.size())));
    }

    // `chunk` whose CRC, folded into the running one, the caller already knows.
    void take(std::span<const std::uint8_t> chunk, std::uint32_t crc_after) {
        if (chunk.empty()) return;
        if (chunk.size() > member_.size - result_.size)
            fail(archive_, member_, "size mismatch (inflates to more than the " + std::to_string(member_.size) +
                                        " bytes the central directory says)");
        result_.size += chunk.size();
        result_.crc32 = crc_after;
        sink_(chunk);
        if (keep_) result_.data.insert(result_.data.end(), chunk.begin(), chunk.end());
    }

    void check_complete() const {
        if (result_.size != member_.size)
            fail(archive_, member_, "size mismatch (central directory says " + std::to_string(member_.size) +
                                        " bytes, inflated " + std::to_string(result_.size) + ")");
        if (result_.crc32 != member_.crc32) fail(archive_, member_, "CRC mismatch");
    }

private:
    const Archive& archive_;
    const Member& member_;
    const Sink& sink_;
    InflatedMember& result_;
    bool keep_;
};

// Buffers sized for the member (one byte over its size, so an overlong stream shows
// at once), at most `chunk`: thousands of small members must not cost 1 MiB each.
std::size_t buffer_size(std::uint64_t member_bytes, std::size_t chunk) {
    return static_cast<std::size_t>(std::clamp<std::uint64_t>(member_bytes + 1, 1, chunk));
}

// Raw inflate with Z_BLOCK over the member's stored bytes, one step at a time.
class BlockIndexer {
public:
    BlockIndexer(const Archive& archive, const Member& member)
        : archive_(archive),
          member_(member),
          raw_(archive.open_raw(member)),
          input_(buffer_size(member.compressed_size, kInputChunk)),
          output_(buffer_size(member.size, kOutputChunk)) {
        if (inflateInit2(&stream_, -MAX_WBITS) != Z_OK) throw std::bad_alloc();
        stream_.next_out = output_.data();
        stream_.avail_out = static_cast<uInt>(output_.size());
    }
    ~BlockIndexer() { inflateEnd(&stream_); }
    BlockIndexer(const BlockIndexer&) = delete;
    BlockIndexer& operator=(const BlockIndexer&) = delete;

    void run(Delivery& deliver, std::vector<AccessPoint>& blocks) {
        blocks.push_back({0, 0, 0});
        for (bool done = false; !done;) {
            refill();
            done = step();
            if (!done && at_block_boundary()) blocks.push_back(boundary());
            if (done || stream_.avail_out == 0) flush(deliver);
        }
    }

private:
    void refill() {
        if (stream_.avail_in != 0 || input_done_) return;
        std::size_t got = raw_.read(input_);
        input_done_ = got == 0;
        stream_.next_in = input_.data();
        stream_.avail_in = static_cast<uInt>(got);
    }

    // One inflate() call; true at the end of the stream.
    bool step() {
        uInt in_before = stream_.avail_in, out_before = stream_.avail_out;
        int status = inflate(&stream_, Z_BLOCK);
        // Inflate may still owe output for bits it holds after the input ran out;
        // only when it can make no progress at all is the stream cut short.
        if (status == Z_BUF_ERROR) fail(archive_, member_, "truncated compressed data (the deflate stream has no end)");
        if (status != Z_OK && status != Z_STREAM_END)
            fail(archive_, member_, std::string("corrupt compressed data (") + (stream_.msg ? stream_.msg : "inflate failed") + ")");
        if (stream_.avail_in < in_before) last_byte_ = stream_.next_in[-1];
        consumed_ += in_before - stream_.avail_in;
        produced_ += out_before - stream_.avail_out;
        return status == Z_STREAM_END;
    }

    bool at_block_boundary() const { return (stream_.data_type & kBlockEnd) && !(stream_.data_type & kLastBlock); }

    AccessPoint boundary() {
        std::uint64_t bit = consumed_ * 8 - static_cast<unsigned>(stream_.data_type & kUnusedBits);
        crc_pending();
        return {bit, produced_, static_cast<std::uint8_t>(bit % 8 ? last_byte_ : 0), crc_};
    }

    // Extends the CRC over the output produced since it last was: it then covers
    // exactly the produced_ bytes.
    void crc_pending() {
        std::size_t pending = output_.size() - stream_.avail_out;
        if (pending > crc_done_) crc_ = static_cast<std::uint32_t>(crc32_z(crc_, output_.data() + crc_done_, pending - crc_done_));
        crc_done_ = pending;
    }

    void flush(Delivery& deliver) {
        crc_pending();
        deliver.take(std::span<const std::uint8_t>(output_.data(), output_.size() - stream_.avail_out), crc_);
        crc_done_ = 0;
        stream_.next_out = output_.data();
        stream_.avail_out = static_cast<uInt>(output_.size());
    }

    const Archive& archive_;
    const Member& member_;
    RawReader raw_;
    std::vector<std::uint8_t> input_, output_;
    z_stream stream_{};
    bool input_done_ = false;
    std::uint64_t consumed_ = 0, produced_ = 0;
    std::uint8_t last_byte_ = 0;  // the last compressed byte inflate took: holds a boundary's first bits
    std::uint32_t crc_ = 0;       // CRC-32 of the output up to crc_done_ bytes into output_
    std::size_t crc_done_ = 0;
};

void inflate_stored(const Archive& archive, const Member& member, Delivery& deliver) {
    archive.stream(member, [&](std::span<const std::uint8_t> chunk) { deliver(chunk); }, kOutputChunk);
}

}  // namespace

InflatedMember inflate_indexed(const Archive& archive, const Member& member, const Sink& sink, bool keep) {
    InflatedMember result;
    result.member = &member;
    Delivery deliver(archive, member, sink, result, keep);
    if (member.method == Method::stored)
        inflate_stored(archive, member, deliver);
    else
        BlockIndexer(archive, member).run(deliver, result.blocks);
    deliver.check_complete();
    return result;
}

}  // namespace wheelfix::zip
