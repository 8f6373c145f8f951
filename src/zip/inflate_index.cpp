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
// The compressed bytes come from Archive::open_raw (pread) in fixed chunks. Where
// the inflated bytes go is a Delivery: a fixed buffer handed to the sink when full
// (streaming), or the kept image itself — sized once for the member (one byte
// over, so an overlong stream shows at once) and written by inflate() directly.
// Size and CRC-32 are checked against the central directory. The digest (CRC-32,
// the prefix CRC at each block start, SHA-256 when asked) runs either on this
// thread as the bytes pass, or, for a big kept image when the thread budget
// (util/thread_budget.hpp) has a share to spare, on a Follower: a second thread
// that digests the image up to where this one has published it final, in
// order, and prefaults the pages just ahead of the inflate (MADV_POPULATE_WRITE),
// so a 541 MB member costs this thread its inflate and little else.
//
// Why not MADV_HUGEPAGE on the image: measured here (a Firecracker VM, THP in
// madvise mode, free page reporting by virtio_balloon) a huge page freed a few
// seconds earlier has been handed back to the host, and faulting 541 MB in huge
// pages cost 0.8-1.2 s of system time against ~0.25 s in 4 KiB pages.
#include "wheelfix/zip/inflate_index.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/thread_budget.hpp"
#include "wheelfix/util/timings.hpp"

#include <zlib.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

namespace wheelfix::zip {
namespace {

constexpr std::size_t kInputChunk = std::size_t(256) << 10;
constexpr std::size_t kOutputChunk = std::size_t(1) << 20;     // streaming buffer; room per inflate() call
constexpr std::uint64_t kPublishEvery = std::uint64_t(512) << 10;  // bytes between hand-overs to the follower
constexpr std::uint64_t kPrefaultLead = std::uint64_t(32) << 20;   // how far ahead of the inflate pages are faulted
constexpr std::uint64_t kMaxDeflateRatio = 1032;  // deflate cannot expand more than this
constexpr int kBlockEnd = 128, kLastBlock = 64, kUnusedBits = 7;
constexpr std::size_t kWindowSize = std::size_t(32) << 10;  // deflate's window

std::uint64_t plausible_size(std::uint64_t compressed_size) {
    if (compressed_size > UINT64_MAX / kMaxDeflateRatio) return UINT64_MAX;
    return compressed_size * kMaxDeflateRatio + 1;
}

[[noreturn]] void fail(const Archive& archive, const Member& member, const std::string& problem) {
    throw InputError(archive.path().string(), "member " + member.name + ": " + problem);
}

// ---- the digest -------------------------------------------------------------------

// CRC-32 of bytes delivered in order, the CRC at every block start, and SHA-256
// when asked.
class RunningDigest {
public:
    explicit RunningDigest(bool sha256) {
        if (sha256) sha_ = std::make_unique<Sha256>();
    }

    void update(std::span<const std::uint8_t> bytes) {
        if (bytes.empty()) return;  // crc32 of a null buffer is not a no-op: it restarts at 0
        crc_ = static_cast<std::uint32_t>(crc32_z(crc_, bytes.data(), bytes.size()));
        if (sha_) sha_->update(bytes);
    }

    void mark_block_start() { prefix_crcs_.push_back(crc_); }

    // Digests image[done, end), marking the block starts (ascending, in that range).
    void advance(std::span<const std::uint8_t> image, std::uint64_t& done, std::uint64_t end,
                 std::span<const std::uint64_t> block_starts) {
        for (std::uint64_t start : block_starts) {
            update(image.subspan(done, start - done));
            done = start;
            mark_block_start();
        }
        update(image.subspan(done, end - done));
        done = end;
    }

    std::uint32_t crc32() const { return crc_; }
    const std::vector<std::uint32_t>& prefix_crcs() const { return prefix_crcs_; }
    std::optional<std::array<std::uint8_t, 32>> sha256() {
        if (!sha_) return std::nullopt;
        return sha_->digest();
    }

private:
    std::uint32_t crc_ = 0;
    std::vector<std::uint32_t> prefix_crcs_;
    std::unique_ptr<Sha256> sha_;
};

// ---- the follower -------------------------------------------------------------------

// Digests a kept image on a thread of its own while the inflate fills it. The
// inflating thread publishes how far the image is final and where blocks start;
// the follower digests up to there and keeps the pages up to kPrefaultLead past it
// faulted in (MADV_POPULATE_WRITE faults a page in as a write would, without
// changing a byte, so it may race the inflate's own writes). The image must
// outlive the follower: destruction abandons it and joins.
class Follower {
public:
    Follower(std::span<std::uint8_t> image, bool sha256, ThreadClaim claim)
        : image_(image), digest_(sha256), claim_(std::move(claim)), thread_([this] { run(); }) {}
    ~Follower() { stop(State::abandoned); }
    Follower(const Follower&) = delete;
    Follower& operator=(const Follower&) = delete;

    // image[0, end) is final; `block_starts` (taken, left empty) lie within it.
    void publish(std::uint64_t end, std::vector<std::uint64_t>& block_starts) {
        {
            std::lock_guard lock(mutex_);
            published_ = end;
            block_starts_.insert(block_starts_.end(), block_starts.begin(), block_starts.end());
        }
        block_starts.clear();
        wake_.notify_one();
    }

    // After the last publish: waits for the digest of everything published.
    RunningDigest& finish() {
        stop(State::finished);
        if (failure_) std::rethrow_exception(failure_);
        return digest_;
    }

private:
    enum class State { running, finished, abandoned };

    void stop(State state) {
        if (!thread_.joinable()) return;
        {
            std::lock_guard lock(mutex_);
            state_ = state;
        }
        wake_.notify_one();
        thread_.join();
    }

    void run() noexcept {
        try {
            follow();
        } catch (...) {
            failure_ = std::current_exception();
        }
    }

    void follow() {
        std::vector<std::uint64_t> starts;
        std::uint64_t end = 0;
        for (bool last = false; !last;) {
            prefault_ahead_of(end);
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [&] { return state_ != State::running || published_ > end || !block_starts_.empty(); });
                if (state_ == State::abandoned) return;
                end = published_;
                starts.swap(block_starts_);
                last = state_ == State::finished;
            }
            digest_.advance(image_, digested_, end, starts);
            starts.clear();
        }
    }

    // Faults in the whole pages of image[prefaulted_, end + kPrefaultLead).
    void prefault_ahead_of(std::uint64_t end) {
        std::uint64_t target = std::min<std::uint64_t>(image_.size(), end + kPrefaultLead);
        if (!prefaulting_ || target <= prefaulted_) return;
        static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
        auto first = (reinterpret_cast<std::uintptr_t>(image_.data() + prefaulted_) + page - 1) & ~(page - 1);
        auto last = reinterpret_cast<std::uintptr_t>(image_.data() + target) & ~(page - 1);
        if (last > first && ::madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE) != 0)
            prefaulting_ = false;  // an older kernel: the inflate faults its pages itself
        prefaulted_ = target;
    }

    std::span<std::uint8_t> image_;
    RunningDigest digest_;
    std::uint64_t digested_ = 0;   // follower's own
    std::uint64_t prefaulted_ = 0;
    bool prefaulting_ = true;
    std::mutex mutex_;
    std::condition_variable wake_;
    State state_ = State::running;             // under mutex_
    std::uint64_t published_ = 0;              // under mutex_
    std::vector<std::uint64_t> block_starts_;  // under mutex_
    std::exception_ptr failure_;
    ThreadClaim claim_;   // the thread's share of the budget, returned after it is joined
    std::thread thread_;  // last: starts once the members it uses exist
};

// ---- where the inflated bytes go ---------------------------------------------------

// Buffers sized for the member (one byte over its size, so an overlong stream shows
// at once), at most `chunk`: thousands of small members must not cost 1 MiB each.
std::size_t buffer_size(std::uint64_t member_bytes, std::size_t chunk) {
    return static_cast<std::size_t>(std::clamp<std::uint64_t>(member_bytes + 1, 1, chunk));
}

// Offers the inflate room to write into, takes what it wrote, checks the size
// against the central directory, digests (here or on a Follower), feeds the sink.
class Delivery {
public:
    Delivery(const Archive& archive, const Member& member, const InflateSink& sink, InflateOptions options)
        : archive_(archive),
          member_(member),
          sink_(sink),
          keep_(options.keep),
          window_every_(options.window_every),
          digest_(options.sha256) {
        if (!keep_) {
            buffer_.resize(buffer_size(member.size, kOutputChunk));
            return;
        }
        // The size is untrusted, but deflate's ratio bounds it; the bytes are not
        // touched until the inflate writes them.
        image_.resize(std::min(member.size, plausible_size(member.compressed_size)) + 1);
        if (member.size >= kFollowedFrom) start_follower(options.sha256);
    }

    // Where the next inflate() writes; never empty.
    std::span<std::uint8_t> room() {
        if (!keep_) return std::span(buffer_).subspan(buffered_);
        if (total_ == image_.size()) too_long();
        return std::span(image_).subspan(static_cast<std::size_t>(total_)).first(
            static_cast<std::size_t>(std::min<std::uint64_t>(kOutputChunk, image_.size() - total_)));
    }

    // `count` bytes were written at the start of room().
    void produced(std::size_t count) {
        if (count == 0) return;
        if (count > member_.size - std::min(total_, member_.size)) too_long();
        auto bytes = room().first(count);
        total_ += count;
        if (follower_) {
            if (total_ - published_ >= kPublishEvery) publish();
        } else {
            digest_.update(bytes);
        }
        if (!keep_) {
            buffered_ += count;
            if (buffered_ == buffer_.size()) flush();
        } else if (sink_) {
            sink_(bytes);
        }
    }

    // A deflate block starts where the bytes produced so far end.
    void block_start() {
        if (follower_) block_starts_.push_back(total_);
        else digest_.mark_block_start();
    }

    // Whether a block starting here gets a Window (InflateOptions::window_every).
    bool wants_window() const { return window_every_ != 0 && total_ - last_window_ >= window_every_; }

    // The (up to) kWindowSize bytes produced last: in the image, or in what was
    // handed to the sink (tail_) followed by the buffer.
    std::vector<std::uint8_t> window() {
        last_window_ = total_;
        if (keep_) {
            const auto begin = static_cast<std::size_t>(total_ - std::min<std::uint64_t>(total_, kWindowSize));
            return {image_.begin() + static_cast<std::ptrdiff_t>(begin), image_.begin() + static_cast<std::ptrdiff_t>(total_)};
        }
        return last_streamed_bytes();
    }

    // Bytes that need no inflating (a stored member), copied through room().
    void write(std::span<const std::uint8_t> bytes) {
        while (!bytes.empty()) {
            auto into = room();
            std::size_t count = std::min(into.size(), bytes.size());
            std::copy_n(bytes.begin(), count, into.begin());
            produced(count);
            bytes = bytes.subspan(count);
        }
    }

    // The end: the digest complete, size and CRC checked, the result filled in.
    void finish(InflatedMember& result) {
        if (!keep_) flush();
        RunningDigest& digest = follower_ ? followed_digest() : digest_;
        if (total_ != member_.size)
            fail(archive_, member_, "size mismatch (central directory says " + std::to_string(member_.size) +
                                        " bytes, inflated " + std::to_string(total_) + ")");
        if (digest.crc32() != member_.crc32) fail(archive_, member_, "CRC mismatch");
        const auto& prefix_crcs = digest.prefix_crcs();
        if (!result.blocks.empty() && prefix_crcs.size() + 1 != result.blocks.size())
            throw std::logic_error("inflate_indexed: " + std::to_string(prefix_crcs.size()) + " prefix CRCs for " +
                                   std::to_string(result.blocks.size()) + " blocks");
        for (std::size_t i = 0; i < prefix_crcs.size() && i + 1 < result.blocks.size(); ++i)
            result.blocks[i + 1].prefix_crc32 = prefix_crcs[i];
        result.size = total_;
        result.crc32 = digest.crc32();
        result.sha256 = digest.sha256();
        if (keep_) {
            image_.resize(static_cast<std::size_t>(total_));  // drops the byte over: no reallocation
            result.data = std::move(image_);
        }
    }

private:
    void start_follower(bool sha256) {
        auto claim = try_claim_thread();
        if (!claim) return;  // the budget is spent: digest here
        try {
            follower_ = std::make_unique<Follower>(std::span(image_), sha256, std::move(*claim));
        } catch (const std::system_error&) {
            follower_.reset();  // no thread to be had: digest here
        }
    }

    void publish() {
        follower_->publish(total_, block_starts_);
        published_ = total_;
    }

    RunningDigest& followed_digest() {
        publish();
        return follower_->finish();
    }

    void flush() {
        if (sink_ && buffered_) sink_(std::span<const std::uint8_t>(buffer_.data(), buffered_));
        if (window_every_ != 0) keep_tail();
        buffered_ = 0;
    }

    // Remembers the last kWindowSize bytes handed on, for window().
    void keep_tail() { tail_ = last_streamed_bytes(); }

    // Streaming: the last (up to) kWindowSize bytes produced, from what was handed
    // on (tail_) and the buffer, in a vector of exactly that size (a window is kept
    // for the member's whole reading).
    std::vector<std::uint8_t> last_streamed_bytes() const {
        const std::size_t from_buffer = std::min(buffered_, kWindowSize);
        const std::size_t from_tail = std::min(tail_.size(), kWindowSize - from_buffer);
        std::vector<std::uint8_t> bytes;
        bytes.reserve(from_tail + from_buffer);
        bytes.insert(bytes.end(), tail_.end() - static_cast<std::ptrdiff_t>(from_tail), tail_.end());
        bytes.insert(bytes.end(), buffer_.begin() + static_cast<std::ptrdiff_t>(buffered_ - from_buffer),
                     buffer_.begin() + static_cast<std::ptrdiff_t>(buffered_));
        return bytes;
    }

    [[noreturn]] void too_long() const {
        fail(archive_, member_, "size mismatch (inflates to more than the " + std::to_string(member_.size) +
                                    " bytes the central directory says)");
    }

    const Archive& archive_;
    const Member& member_;
    const InflateSink& sink_;
    bool keep_;
    std::uint64_t window_every_;
    std::uint64_t last_window_ = 0;            // where the last Window was taken
    std::vector<std::uint8_t> tail_;           // streaming with windows: the last bytes handed on
    RunningDigest digest_;                     // when there is no follower
    std::uint64_t total_ = 0;                  // bytes produced
    std::vector<std::uint8_t> buffer_;         // streaming: the bytes not yet handed to the sink
    std::size_t buffered_ = 0;
    InflatedBytes image_;                      // keeping: the member, plus one byte to catch an overlong stream
    std::uint64_t published_ = 0;              // bytes handed to the follower
    std::vector<std::uint64_t> block_starts_;  // not yet handed to it
    std::unique_ptr<Follower> follower_;       // after image_: joined before the bytes it reads are freed
};

// ---- the inflate -------------------------------------------------------------------

// Raw inflate with Z_BLOCK over the member's stored bytes, one step at a time.
class BlockIndexer {
public:
    BlockIndexer(const Archive& archive, const Member& member)
        : archive_(archive),
          member_(member),
          raw_(archive.open_raw(member)),
          input_(buffer_size(member.compressed_size, kInputChunk)) {
        if (inflateInit2(&stream_, -MAX_WBITS) != Z_OK) throw std::bad_alloc();
    }
    ~BlockIndexer() { inflateEnd(&stream_); }
    BlockIndexer(const BlockIndexer&) = delete;
    BlockIndexer& operator=(const BlockIndexer&) = delete;

    void run(Delivery& deliver, std::vector<AccessPoint>& blocks, std::vector<Window>& windows) {
        blocks.push_back({0, 0, 0, 0});
        for (bool done = false; !done;) {
            refill();
            auto room = deliver.room();
            stream_.next_out = room.data();
            stream_.avail_out = static_cast<uInt>(room.size());
            done = step();
            deliver.produced(room.size() - stream_.avail_out);
            if (!done && at_block_boundary()) {
                blocks.push_back(boundary());
                deliver.block_start();
                if (deliver.wants_window()) windows.push_back({blocks.back(), deliver.window()});
            }
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

    // The prefix CRC is filled in when the digest has it (Delivery::finish).
    AccessPoint boundary() const {
        std::uint64_t bit = consumed_ * 8 - static_cast<unsigned>(stream_.data_type & kUnusedBits);
        return {bit, produced_, static_cast<std::uint8_t>(bit % 8 ? last_byte_ : 0), 0};
    }

    const Archive& archive_;
    const Member& member_;
    RawReader raw_;
    std::vector<std::uint8_t> input_;
    z_stream stream_{};
    bool input_done_ = false;
    std::uint64_t consumed_ = 0, produced_ = 0;
    std::uint8_t last_byte_ = 0;  // the last compressed byte inflate took: holds a boundary's first bits
};

void inflate_stored(const Archive& archive, const Member& member, Delivery& deliver) {
    archive.stream(member, [&](std::span<const std::uint8_t> chunk) { deliver.write(chunk); }, kOutputChunk);
}

}  // namespace

InflatedMember inflate_indexed(const Archive& archive, const Member& member, const InflateSink& sink,
                               InflateOptions options) {
    const timings::Scope timer(timings::Phase::inflate);
    InflatedMember result;
    result.member = &member;
    Delivery deliver(archive, member, sink, options);
    if (member.method == Method::stored)
        inflate_stored(archive, member, deliver);
    else
        BlockIndexer(archive, member).run(deliver, result.blocks, result.windows);
    deliver.finish(result);
    return result;
}

InflatedMember inflate_indexed(const Archive& archive, const Member& member, const InflateSink& sink, bool keep) {
    return inflate_indexed(archive, member, sink, InflateOptions{keep, false});
}

}  // namespace wheelfix::zip
