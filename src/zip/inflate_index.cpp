// inflate_indexed: one pass over a member that inflates it and indexes its blocks.
//
// Technique (zlib's examples/zran.c): at the start of a block, the next block
// starts at bit 8 * consumed - held, where `held` is how many of the consumed
// input bits the inflater has not decoded yet (zip/codec.hpp's
// Inflater::block_start_bits: zlib returns there after every block with Z_BLOCK;
// ISA-L stands there when its input ended inside a block header). Together with
// the output so far that is an access point. Where it is not byte aligned, the
// byte it starts in also holds the previous block's last bits; we keep that byte
// (from the input chunk, or the tail of the one before), so a splice restarting
// there can prime deflate with those bits.
//
// The compressed bytes come from Archive::open_raw (pread) in fixed chunks; the
// inflated ones go to a Delivery: a buffer handed to the sink when full, or the kept
// image itself, written by inflate() directly and digested on a Follower when big,
// so a 541 MB member costs this thread its inflate and little else. No
// MADV_HUGEPAGE on the image: docs/decisions.md says why.
#include "wheelfix/zip/inflate_index.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/thread_budget.hpp"
#include "wheelfix/util/timings.hpp"

#include "wheelfix/zip/codec.hpp"

#include "sink_pipeline.hpp"

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
#include <utility>

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
constexpr std::size_t kWindowSize = std::size_t(32) << 10;  // deflate's window
constexpr std::size_t kPipelineChunk = std::size_t(4) << 20;  // streaming through a SinkPipeline: few hand-overs

std::uint64_t plausible_size(std::uint64_t compressed_size) {
    if (compressed_size > UINT64_MAX / kMaxDeflateRatio) return UINT64_MAX;
    return compressed_size * kMaxDeflateRatio + 1;
}

[[noreturn]] void fail(const Archive& archive, const Member& member, const std::string& problem) {
    throw InputError(archive.path().string(), "member " + member.name + ": " + problem);
}

// ---- the digest -------------------------------------------------------------------

// CRC-32 of bytes delivered in order (continuing `crc`), the CRC at every block
// start, and SHA-256 when asked.
class RunningDigest {
public:
    explicit RunningDigest(bool sha256, std::uint32_t crc = 0) : crc_(crc) {
        if (sha256) sha_ = std::make_unique<Sha256>();
    }

    void update(std::span<const std::uint8_t> bytes) {
        if (bytes.empty()) return;
        crc_ = zip::crc32(crc_, bytes);
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
// against the central directory, digests (here or on a Follower), feeds the sink
// (on a SinkPipeline's thread for a big streamed member, the SHA-256 on whichever
// thread has time). The CRC-32 (ISA-L's is ~20x faster than the SHA-256) and the
// block starts' prefix CRCs stay on this thread.
class Delivery {
public:
    Delivery(const Archive& archive, const Member& member, const InflateSink& sink, InflateOptions options)
        : archive_(archive),
          member_(member),
          sink_(sink),
          keep_(options.keep),
          window_every_(options.window_every),
          digest_(options.sha256),
          sink_start_(options.sink_start) {
        if (!keep_) {
            const std::size_t chunk = buffer_size(member.size, kOutputChunk);
            if (member.size >= kFollowedFrom) start_pipeline(options, kPipelineChunk);
            if (!pipeline_) buffer_.resize(chunk);
            return;
        }
        // The size is untrusted, but deflate's ratio bounds it; the bytes are not
        // touched until the inflate writes them.
        image_.resize(std::min(member.size, plausible_size(member.compressed_size)) + 1);
        if (member.size >= kFollowedFrom) start_follower(options.sha256);
    }

    // Where the next inflate() writes; never empty.
    std::span<std::uint8_t> room() {
        if (!keep_) return buffer().subspan(buffered_);
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
            if (buffered_ == buffer().size()) flush();
        } else if (sink_) {
            feed_sink(bytes);
        }
    }

    // Resuming at `from` (index_blocks_from): the bytes before it count as produced,
    // their CRC as the CRC so far.
    void resume_at(const Window& from) {
        total_ = from.point.uncompressed;
        digest_ = RunningDigest(false, from.point.prefix_crc32);
    }
    const std::vector<std::uint32_t>& prefix_crcs() const { return digest_.prefix_crcs(); }

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
        if (pipeline_) pipeline_->finish();
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
        fill_window_crcs(result);
        result.size = total_;
        result.crc32 = digest.crc32();
        result.sha256 = piped_sha_ ? std::optional(piped_sha_->digest()) : digest.sha256();
        if (keep_) {
            image_.resize(static_cast<std::size_t>(total_));  // drops the byte over: no reallocation
            result.data = std::move(image_);
        }
    }

private:
    // Each window's access point is one of the blocks: it gets that block's prefix CRC.
    static void fill_window_crcs(InflatedMember& result) {
        auto block = result.blocks.begin();
        for (auto& window : result.windows) {
            block = std::lower_bound(block, result.blocks.end(), window.point.compressed_bit,
                                     [](const AccessPoint& point, std::uint64_t bit) { return point.compressed_bit < bit; });
            if (block == result.blocks.end() || block->compressed_bit != window.point.compressed_bit)
                throw std::logic_error("inflate_indexed: a window that is no block start");
            window.point.prefix_crc32 = block->prefix_crc32;
        }
    }

    // The streaming buffers become a SinkPipeline's; the sink moves to its thread,
    // and the SHA-256 goes to whichever thread has time for it (its `shared` job),
    // or into the sink's own hashing (its `fused` job: InflateOptions::sink_hashing).
    void start_pipeline(const InflateOptions& options, std::size_t chunk) {
        const std::uint64_t may_lag = options.sink_may_lag;
        if (options.sha256) piped_sha_ = std::make_unique<Sha256>();
        piped_hash_ = [this](std::span<const std::uint8_t> bytes) { piped_sha_->update(bytes); };
        if (options.sink_hashing)
            piped_sink_hashing_ = [this, hashing = options.sink_hashing](std::span<const std::uint8_t> bytes) {
                hashing(bytes, *piped_sha_);
            };
        if (sink_)
            pipeline_ = std::make_unique<SinkPipeline>(
                sink_, chunk, true, may_lag,
                SinkPipeline::Jobs{piped_sha_ ? &piped_hash_ : nullptr, &piped_sink_hashing_, &sink_start_});
        else if (piped_sha_) pipeline_ = std::make_unique<SinkPipeline>(piped_hash_, chunk, true, may_lag);
        // Without a thread to spare, a sink that hashes the member beside its own
        // hashing still does it, inside deliver(); other work runs here.
        const bool fuses = sink_ && piped_sha_ && piped_sink_hashing_;
        if (pipeline_ && (pipeline_->overlapped() || fuses)) {
            digest_ = RunningDigest(false);
            return;
        }
        pipeline_.reset();  // the budget is spent: digest and sink here
        piped_sha_.reset();
    }

    std::span<std::uint8_t> buffer() { return pipeline_ ? pipeline_->room() : std::span<std::uint8_t>(buffer_); }

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
        if (window_every_ != 0) keep_tail();  // before the buffer is handed on
        if (pipeline_) pipeline_->deliver(buffered_);
        else if (sink_ && buffered_) feed_sink(std::span<const std::uint8_t>(buffer_.data(), buffered_));
        buffered_ = 0;
    }

    // The sink on this thread, its start first.
    void feed_sink(std::span<const std::uint8_t> bytes) {
        if (sink_start_) std::exchange(sink_start_, nullptr)();
        sink_(bytes);
    }

    // Remembers the last kWindowSize bytes handed on, for window().
    void keep_tail() { tail_ = last_streamed_bytes(); }

    // Streaming: the last (up to) kWindowSize bytes produced, from what was handed
    // on (tail_) and the buffer, in a vector of exactly that size (a window is kept
    // for the member's whole reading).
    std::vector<std::uint8_t> last_streamed_bytes() {
        const std::size_t from_buffer = std::min(buffered_, kWindowSize);
        const std::size_t from_tail = std::min(tail_.size(), kWindowSize - from_buffer);
        std::vector<std::uint8_t> bytes;
        bytes.reserve(from_tail + from_buffer);
        bytes.insert(bytes.end(), tail_.end() - static_cast<std::ptrdiff_t>(from_tail), tail_.end());
        const auto buffered = buffer().first(buffered_);
        bytes.insert(bytes.end(), buffered.end() - static_cast<std::ptrdiff_t>(from_buffer), buffered.end());
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
    std::unique_ptr<Sha256> piped_sha_;        // streaming with a pipeline: the SHA-256, on its thread
    SinkPipeline::Sink piped_hash_;            // piped_sha_'s work: the pipeline's sink, or its shared job beside sink_
    SinkPipeline::Sink piped_sink_hashing_;    // sink_ and piped_hash_ in one call: the pipeline's fused job
    SinkPipeline::Start sink_start_;           // the sink's work before its first chunk; empty once run here
    std::unique_ptr<SinkPipeline> pipeline_;   // last: joined before what its thread uses goes
};

// ---- the inflate -------------------------------------------------------------------

// Raw inflate over the member's stored bytes (zip/codec.hpp), one step at a time,
// recording block starts: zlib stops after every block (Z_BLOCK); ISA-L stands at
// a block start only when its input ends inside a block header, so once
// `block_every` bytes have come out since the last start found, it is fed kSlice
// bytes at a time until it stands at one (a header is tens of bytes, a block tens
// of KB: a few blocks' worth of short slices find one).
//
// It may also start mid-stream, at a Window (the inflater resumed there with the
// window's bits and dictionary), and stop at the first block start at or past an
// inflated offset: index_blocks_from's local index around a splice's edits.
class BlockIndexer {
public:
    BlockIndexer(const Archive& archive, const Member& member, Backend backend, std::uint64_t block_every,
                 const Window* from = nullptr)
        : block_every_(block_every),
          archive_(archive),
          member_(member),
          raw_(archive.open_raw(member)),
          input_(buffer_size(member.compressed_size, kInputChunk)),
          inflater_(backend) {
        if (from != nullptr) resume_at(*from);
    }

    void run(Delivery& deliver, std::vector<AccessPoint>& blocks, std::vector<Window>& windows,
             std::uint64_t stop_at = UINT64_MAX) {
        blocks.push_back(start_);
        for (bool done = false; !done;) {
            const bool refilled = refill();
            auto room = deliver.room();
            auto step = inflate(next_slice(), room);
            done = step.ended;
            pending_ = pending_.subspan(step.consumed);
            consumed_ += step.consumed;
            produced_ += step.produced;
            deliver.produced(step.produced);
            if (!done && step.consumed == 0 && step.produced == 0 && pending_.empty() && !refilled)
                fail(archive_, member_, "truncated compressed data (the deflate stream has no end)");
            if (done) break;
            if (auto point = boundary(blocks.back())) {
                blocks.push_back(*point);
                deliver.block_start();
                if (deliver.wants_window()) windows.push_back({blocks.back(), deliver.window()});
                if (point->uncompressed >= stop_at) break;
            }
        }
    }

private:
    // A slice costs ISA-L a call (~5 us: it saves its 32 KiB history each time),
    // so slices are fed only while a start is overdue: after block_every_ bytes.
    static constexpr std::size_t kSlice = 64;
    static constexpr std::size_t kTail = 1024;  // compressed bytes kept from the last chunk: more than a header

    Inflater::Step inflate(std::span<const std::uint8_t> input, std::span<std::uint8_t> room) {
        try {
            return inflater_.inflate(input, room, /*stop_at_block=*/true);
        } catch (const CodecError& error) {
            fail(archive_, member_, error.what());
        }
    }

    // What the inflater gets next: all that is pending, or a short slice while
    // ISA-L is overdue for a block start.
    std::span<const std::uint8_t> next_slice() const {
        const bool overdue = inflater_.backend() == Backend::isal && produced_ - last_start_ >= block_every_;
        return overdue ? pending_.first(std::min(kSlice, pending_.size())) : pending_;
    }

    // Starts at `from`, the stored bytes read on from the byte after its bits.
    void resume_at(const Window& from) {
        const std::uint64_t next_byte = inflater_.resume(from.point.compressed_bit, from.point.partial_byte, from.dictionary);
        raw_.skip_to(next_byte);
        chunk_start_ = consumed_ = next_byte;
        produced_ = last_start_ = from.point.uncompressed;
        start_ = from.point;  // a block starts at least 10 bits later: no later start needs its byte
    }

    // More compressed bytes when the last are used; whether any came.
    bool refill() {
        if (!pending_.empty()) return true;
        if (input_done_) return false;
        const std::size_t kept = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_length_, kTail));
        tail_.assign(input_.begin() + static_cast<std::ptrdiff_t>(chunk_length_ - kept),
                     input_.begin() + static_cast<std::ptrdiff_t>(chunk_length_));
        chunk_start_ += chunk_length_;
        chunk_length_ = raw_.read(input_);
        input_done_ = chunk_length_ == 0;
        pending_ = std::span<const std::uint8_t>(input_.data(), chunk_length_);
        return !input_done_;
    }

    // The compressed byte at `offset`: in this chunk or the tail of the last.
    std::uint8_t compressed_byte(std::uint64_t offset) const {
        if (offset >= chunk_start_) return input_[static_cast<std::size_t>(offset - chunk_start_)];
        const std::uint64_t back = chunk_start_ - offset;
        if (back > tail_.size()) throw std::logic_error("inflate_indexed: a block start before the kept tail");
        return tail_[tail_.size() - static_cast<std::size_t>(back)];
    }

    // The block start the inflater stands at, if any and new. The prefix CRC is
    // filled in when the digest has it (Delivery::finish).
    std::optional<AccessPoint> boundary(const AccessPoint& last) {
        auto held = inflater_.block_start_bits();
        if (!held || *held > consumed_ * 8) return std::nullopt;
        const std::uint64_t bit = consumed_ * 8 - *held;
        if (bit <= last.compressed_bit) return std::nullopt;
        last_start_ = produced_;
        return AccessPoint{bit, produced_, static_cast<std::uint8_t>(bit % 8 ? compressed_byte(bit / 8) : 0), 0};
    }

    std::uint64_t block_every_;
    const Archive& archive_;
    const Member& member_;
    RawReader raw_;
    std::vector<std::uint8_t> input_;
    std::span<const std::uint8_t> pending_;  // of input_: read, not yet taken by the inflater
    std::uint64_t chunk_start_ = 0;          // compressed offset of input_[0]
    std::size_t chunk_length_ = 0;
    std::vector<std::uint8_t> tail_;         // the last bytes of the chunk before
    Inflater inflater_;
    bool input_done_ = false;
    std::uint64_t consumed_ = 0, produced_ = 0;
    std::uint64_t last_start_ = 0;           // inflated offset of the last block start found
    AccessPoint start_{0, 0, 0, 0};          // where the inflate starts: the stream's start or a window
};

}  // namespace

// How often ISA-L must find a block start: often for a kept member (a splice
// restarts and resumes at them: measured on 256 MB of libcublasLt, 256 KiB gives
// one per ~512 KiB with 9% of the input fed in slices; only when a caller asks for
// ISA-L on a kept member: index_backend), once per window when streaming with
// windows, never otherwise.
std::uint64_t block_every(const InflateOptions& options) {
    if (options.keep) return std::uint64_t(256) << 10;
    if (options.window_every != 0) return options.window_every;
    return UINT64_MAX;
}

Backend index_backend(const InflateOptions& options) {
    if (options.backend) return *options.backend;
    if (options.keep) return Backend::zlib;
    return default_backend();
}

InflatedMember inflate_indexed(const Archive& archive, const Member& member, const InflateSink& sink,
                               InflateOptions options) {
    const timings::Scope timer(timings::Phase::inflate);
    InflatedMember result;
    result.member = &member;
    Delivery deliver(archive, member, sink, options);
    if (member.method == Method::stored)
        archive.stream(member, [&](std::span<const std::uint8_t> chunk) { deliver.write(chunk); }, kOutputChunk);
    else
        BlockIndexer(archive, member, index_backend(options), block_every(options)).run(deliver, result.blocks, result.windows);
    deliver.finish(result);
    return result;
}

std::vector<AccessPoint> index_blocks_from(const Archive& archive, const Member& member, const Window* from,
                                           std::uint64_t until) {
    if (member.method != Method::deflated) throw std::invalid_argument("index_blocks_from: a member that is not deflated");
    const timings::Scope timer(timings::Phase::inflate);
    const InflateSink no_sink;
    Delivery deliver(archive, member, no_sink, InflateOptions{});  // through the CRC only
    if (from) deliver.resume_at(*from);
    std::vector<AccessPoint> blocks;
    std::vector<Window> no_windows;
    BlockIndexer(archive, member, Backend::zlib, UINT64_MAX, from).run(deliver, blocks, no_windows, until);
    const auto& prefix_crcs = deliver.prefix_crcs();
    for (std::size_t i = 0; i < prefix_crcs.size() && i + 1 < blocks.size(); ++i) blocks[i + 1].prefix_crc32 = prefix_crcs[i];
    return blocks;
}

}  // namespace wheelfix::zip
