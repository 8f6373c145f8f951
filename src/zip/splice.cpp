// plan_splice: a new deflate stream for an edited member that reuses the original
// compressed bytes everywhere except around the edits.
//
// Technique (zlib's examples/zran.c for the index, gzjoin.c for joining streams):
// a deflate block decodes from its own bits plus the 32 KiB of output before it.
// So for an edit [a, b) (original coordinates) we restart at the last block
// boundary p <= a and resume the original at the first boundary q >= b + 32 KiB:
// from q on, the window holds original bytes again and the original blocks decode
// as before, whatever the edit did to the length. The new stream is
//
//   original bytes [0, p/8)                  copied as stored
//   deflate of the new content [p, q)        dictionary: the 32 KiB before p;
//                                            primed with the p%8 bits of p's byte
//                                            that end the block before p
//   the byte holding q, rebuilt              our last bits, padded with empty
//                                            blocks to q%8 bits, then the original
//                                            byte's high 8 - q%8 bits (q's start)
//   original bytes [q/8 + 1, end)            copied as stored (from q/8 if aligned)
//
// so the original tail is never bit-shifted and any boundary can be q, not only
// the one in eight that is byte aligned (see RawDeflater::end_before). Without a
// q the middle runs to the end and ends with Z_FINISH. Regions whose [p, q]
// meet are merged. The bytes before p never include the final block (p is a
// block start). The new content is never materialized. Its SHA-256 runs on a
// thread of its own (when the thread budget spares one) over the content as a list of spans (subspans of the inflated
// original and the edits' bytes, apply_edits' order), while this thread deflates.
// Its CRC-32 never reads the unchanged spans: they run between access points (or
// to the member's end), whose prefix CRCs inflate_indexed recorded, so with
// crc32_combine's linearity (zlib >= 1.2.12: combine(c1, c2, n) = shift(c1, n) ^ c2)
//   crc(span [s, e)) = prefix(e) ^ combine(prefix(s), 0, e - s)
// and the span is folded into the running CRC with crc32_combine; only the bytes
// fed to deflate are CRC'd directly. A stored original, or a splice that would
// re-deflate everything, goes to parallel_deflate.
#include "wheelfix/zip/splice.hpp"

#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/sparse_stream.hpp"
#include "wheelfix/util/thread_budget.hpp"
#include "wheelfix/util/timings.hpp"

#include "wheelfix/zip/codec.hpp"

#include "raw_deflate.hpp"

#include <algorithm>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <thread>

namespace wheelfix::zip {
namespace {

constexpr std::uint64_t kWindow = std::uint64_t(32) << 10;

// Re-deflated stretch of the original: from block `restart` (p) to block `resume`
// (q; blocks.size() means to the end), holding edits [first_edit, end_edit).
struct Region {
    std::size_t restart = 0;
    std::size_t resume = 0;
    std::size_t first_edit = 0;
    std::size_t end_edit = 0;
};

// The last boundary at or before uncompressed offset `at` (blocks[0] is {0, 0}).
std::size_t restart_for(const std::vector<AccessPoint>& blocks, std::uint64_t at) {
    auto after = std::upper_bound(blocks.begin(), blocks.end(), at,
                                  [](std::uint64_t offset, const AccessPoint& point) { return offset < point.uncompressed; });
    return static_cast<std::size_t>(after - blocks.begin()) - 1;
}

// The first boundary a full window past `edit_end`, or blocks.size().
std::size_t resume_for(const std::vector<AccessPoint>& blocks, std::uint64_t edit_end) {
    auto it = std::lower_bound(blocks.begin(), blocks.end(), edit_end + kWindow,
                               [](const AccessPoint& point, std::uint64_t offset) { return point.uncompressed < offset; });
    return static_cast<std::size_t>(it - blocks.begin());
}

std::vector<Region> plan_regions(const std::vector<AccessPoint>& blocks, const ByteEdits& edits) {
    std::vector<Region> regions;
    for (std::size_t i = 0; i < edits.size(); ++i) {
        std::size_t restart = restart_for(blocks, edits[i].offset);
        std::size_t resume = resume_for(blocks, edits[i].offset + edits[i].length);
        // Meeting at the same boundary merges too: q's byte is rebuilt by the first.
        if (!regions.empty() && restart <= regions.back().resume) {
            regions.back().resume = std::max(regions.back().resume, resume);
            regions.back().end_edit = i + 1;
        } else {
            regions.push_back({restart, resume, i, i + 1});
        }
    }
    return regions;
}

bool rewrites_everything(const std::vector<Region>& regions, std::size_t block_count) {
    return regions.size() == 1 && regions[0].restart == 0 && regions[0].resume == block_count;
}

using ContentSpans = std::vector<std::span<const std::uint8_t>>;

// The new content as apply_edits(data, edits) would lay it out, without copying:
// the original between edits, each edit's bytes. Empty spans are left out.
ContentSpans new_content(std::span<const std::uint8_t> data, const ByteEdits& edits) {
    ContentSpans spans;
    std::uint64_t cursor = 0;
    auto add = [&](std::span<const std::uint8_t> span) {
        if (!span.empty()) spans.push_back(span);
    };
    for (const auto& edit : edits) {
        add(data.subspan(cursor, edit.offset - cursor));
        add(edit.bytes);
        cursor = edit.offset + edit.length;
    }
    add(data.subspan(cursor));
    return spans;
}

// Feeds the new content, in order, to a hash.
using ContentFeed = std::function<void(Sha256&)>;

ContentFeed feed_spans(ContentSpans spans) {
    return [spans = std::move(spans)](Sha256& hash) {
        for (const auto& span : spans) hash.update(span);
    };
}

// SHA-256 of what `feed` gives, in order: on a thread of its own from construction when the
// thread budget spares one, else in digest(). digest() joins the thread (so does
// destruction, on an early exit).
class BackgroundSha256 {
public:
    explicit BackgroundSha256(ContentFeed feed) : feed_(std::move(feed)), claim_(try_claim_thread()) {
        if (claim_) thread_.emplace([this] { hash_all(); });
    }

    std::array<std::uint8_t, 32> digest() {
        if (thread_) thread_->join();
        else hash_all();
        if (failure_) std::rethrow_exception(failure_);
        return hash_.digest();
    }

private:
    void hash_all() {
        try {
            feed_(hash_);
        } catch (...) {
            failure_ = std::current_exception();
        }
    }

    ContentFeed feed_;
    Sha256 hash_;
    std::exception_ptr failure_;
    std::optional<ThreadClaim> claim_;    // the thread's share of the budget, returned after the join
    std::optional<std::jthread> thread_;  // last: starts once the members it uses exist, joins before they go
};

// CRC-32 of the span [s, e) given the CRCs of the prefixes [0, s) and [0, e).
std::uint32_t crc_between(std::uint32_t prefix_start, std::uint32_t prefix_end, std::uint64_t length) {
    return prefix_end ^ crc32_combine(prefix_start, 0, length);
}

// Builds the pieces in stream order while CRC-ing the new content in content
// order (and hashing it on a second thread).
class Splicer {
public:
    // `data` holds the original's inflated bytes, at least those of every region
    // ([p - 32 KiB, q)); `feed` gives the whole new content to the SHA-256.
    Splicer(const InflatedMember& original, std::span<const std::uint8_t> data, const ByteEdits& edits, int level)
        : original_(original), data_(data), edits_(edits), deflater_(level) {}

    PrecompressedMember run(const std::vector<Region>& regions, ContentFeed feed) {
        BackgroundSha256 hash(std::move(feed));
        auto out = run(regions);
        out.sha256 = hash.digest();
        return out;
    }

    // Without the SHA-256 (the caller's).
    PrecompressedMember run(const std::vector<Region>& regions) {
        for (const auto& region : regions) redeflate(region);
        keep_unchanged_until(original_.blocks.size());
        copy_original_until(original_.member->compressed_size);
        out_.size = edited_size(edits_, original_.size);
        out_.crc32 = crc_;
        return std::move(out_);
    }

private:
    void redeflate(const Region& region) {
        const AccessPoint& p = original_.blocks[region.restart];
        copy_original_until(p.compressed_bit / 8);
        keep_unchanged_until(region.restart);

        int bits = static_cast<int>(p.compressed_bit % 8);
        std::uint64_t window = std::min(p.uncompressed, kWindow);
        deflater_.start(data_.subspan(p.uncompressed - window, window), bits, p.partial_byte & ((1 << bits) - 1));
        CompressedPiece piece;
        std::uint64_t cursor = p.uncompressed;
        for (std::size_t i = region.first_edit; i < region.end_edit; ++i) {
            const ByteEdit& edit = edits_[i];
            feed(data_.subspan(cursor, edit.offset - cursor), piece);
            feed(edit.bytes, piece);
            cursor = edit.offset + edit.length;
        }
        bool to_end = region.resume == original_.blocks.size();
        std::uint64_t stop = to_end ? original_.size : original_.blocks[region.resume].uncompressed;
        feed(data_.subspan(cursor, stop - cursor), piece);
        if (to_end)
            finish(piece);
        else
            join_before(original_.blocks[region.resume], piece);
        append(std::move(piece));
        unchanged_from_ = region.resume;
    }

    void finish(CompressedPiece& piece) {
        deflater_.end(true, piece.bytes);
        compressed_cursor_ = original_.member->compressed_size;
    }

    // Ends the deflated piece so that the original continues at q unshifted.
    void join_before(const AccessPoint& q, CompressedPiece& piece) {
        int used = static_cast<int>(q.compressed_bit % 8);
        deflater_.end_before(used, q.partial_byte, piece.bytes);
        compressed_cursor_ = q.compressed_bit / 8 + (used ? 1 : 0);
    }

    void feed(std::span<const std::uint8_t> bytes, CompressedPiece& piece) {
        account(bytes);
        out_.recompressed_bytes += bytes.size();
        deflater_.feed(bytes, piece.bytes);
    }

    // Boundary i's uncompressed offset and prefix CRC; i == blocks.size() is the end.
    std::uint64_t offset_of(std::size_t i) const {
        return i == original_.blocks.size() ? original_.size : original_.blocks[i].uncompressed;
    }
    std::uint32_t prefix_crc_of(std::size_t i) const {
        return i == original_.blocks.size() ? original_.crc32 : original_.blocks[i].prefix_crc32;
    }

    // The original from boundary unchanged_from_ to boundary `boundary`, unchanged:
    // its CRC comes from the index, not from its bytes.
    void keep_unchanged_until(std::size_t boundary) {
        std::uint64_t length = offset_of(boundary) - offset_of(unchanged_from_);
        if (length != 0) {
            std::uint32_t span = crc_between(prefix_crc_of(unchanged_from_), prefix_crc_of(boundary), length);
            crc_ = crc32_combine(crc_, span, length);
        }
        unchanged_from_ = boundary;
    }

    void copy_original_until(std::uint64_t byte) {
        if (byte > compressed_cursor_) {
            CompressedPiece piece;
            piece.from_original = true;
            piece.original_offset = compressed_cursor_;
            piece.length = byte - compressed_cursor_;
            append(std::move(piece));
        }
        compressed_cursor_ = byte;
    }

    void append(CompressedPiece piece) {
        if (!piece.from_original) piece.length = piece.bytes.size();
        out_.compressed_size += piece.length;
        out_.pieces.push_back(std::move(piece));
    }

    void account(std::span<const std::uint8_t> bytes) {
        crc_ = crc32(crc_, bytes);
    }

    const InflatedMember& original_;
    std::span<const std::uint8_t> data_;
    const ByteEdits& edits_;
    RawDeflater deflater_;
    PrecompressedMember out_;
    std::uint32_t crc_ = 0;
    std::size_t unchanged_from_ = 0;         // boundary the original content is accounted up to
    std::uint64_t compressed_cursor_ = 0;    // original stream emitted (or skipped) up to here
};

void check_arguments(const InflatedMember& original, const ByteEdits& edits) {
    if (!original.member) throw std::invalid_argument("plan_splice: the original has no member");
    if (original.data.size() != original.size)
        throw std::invalid_argument("plan_splice: the original's inflated bytes were not kept");
    if (auto problem = edits_problem(edits, original.size); !problem.empty())
        throw std::invalid_argument("plan_splice: " + problem);
}

PrecompressedMember unchanged(const InflatedMember& original) {
    PrecompressedMember out;
    CompressedPiece whole;
    whole.from_original = true;
    whole.length = original.member->compressed_size;
    out.pieces.push_back(std::move(whole));
    out.compressed_size = original.member->compressed_size;
    out.size = original.size;
    out.crc32 = original.crc32;
    out.sha256 = sha256(original.data);
    return out;
}

}  // namespace

PrecompressedMember plan_splice(const InflatedMember& original, const ByteEdits& edits, int level) {
    const timings::Scope timer(timings::Phase::deflate);
    check_arguments(original, edits);
    const auto& blocks = original.blocks;
    bool deflated = original.member->method == Method::deflated && !blocks.empty();
    if (deflated && edits.empty()) return unchanged(original);
    auto regions = deflated ? plan_regions(blocks, edits) : std::vector<Region>{};
    if (!deflated || rewrites_everything(regions, blocks.size()))
        return parallel_deflate(apply_edits(original.data, edits));
    return Splicer(original, original.data, edits, level).run(regions, feed_spans(new_content(original.data, edits)));
}

namespace {

// The original bytes each region re-deflates: the 32 KiB before p, up to q.
ByteRanges region_bytes(const InflatedMember& index, const std::vector<Region>& regions) {
    ByteRanges ranges;
    for (const auto& region : regions) {
        const std::uint64_t from = index.blocks[region.restart].uncompressed;
        const std::uint64_t to = region.resume == index.blocks.size() ? index.size : index.blocks[region.resume].uncompressed;
        ranges.add(from - std::min(from, kWindow), to);
    }
    return ranges;
}

// The index with every block start the regions of `edits` can restart or resume
// at: those `index` has (the first read may have recorded only one per window:
// ISA-L) and, from the window before each edit to the first start a window past
// it, all of them (zlib, SeekableMember::block_starts). restart_for and resume_for
// then pick the very boundaries a full index gives, so the stream is the same.
InflatedMember with_exact_blocks(const InflatedMember& index, const SeekableMember& source, const ByteEdits& edits) {
    InflatedMember exact;
    exact.member = index.member;
    exact.size = index.size;
    exact.crc32 = index.crc32;
    exact.blocks = index.blocks;
    ByteRanges around;
    for (const auto& edit : edits) around.add(edit.offset, edit.offset + edit.length + kWindow);
    for (const auto& [begin, until] : around.ranges()) {
        auto found = source.block_starts(begin, until);
        exact.blocks.insert(exact.blocks.end(), found.begin(), found.end());
    }
    auto by_bit = [](const AccessPoint& a, const AccessPoint& b) { return a.compressed_bit < b.compressed_bit; };
    std::sort(exact.blocks.begin(), exact.blocks.end(), by_bit);
    auto same_bit = [](const AccessPoint& a, const AccessPoint& b) { return a.compressed_bit == b.compressed_bit; };
    exact.blocks.erase(std::unique(exact.blocks.begin(), exact.blocks.end(), same_bit), exact.blocks.end());
    return exact;
}

// The new content streamed: the original read once more through `source`, each
// edit's bytes put in place of the original bytes it replaces as they pass.
class EditedStream {
public:
    EditedStream(const ByteEdits& edits, Sha256& hash) : edits_(edits), hash_(hash) {}

    void take(std::span<const std::uint8_t> chunk, std::uint64_t at) {
        if (at != position_) throw std::logic_error("plan_splice: the original was not read in order");
        const std::uint64_t end = at + chunk.size();
        while (position_ < end) {
            if (position_ >= skip_to_) insert_edits_at(position_);
            if (position_ < skip_to_) {
                position_ = std::min(end, skip_to_);
                continue;
            }
            const std::uint64_t stop = next_ < edits_.size() ? std::min(end, edits_[next_].offset) : end;
            if (stop <= position_) throw std::logic_error("plan_splice: edits out of order");
            hash_.update(chunk.subspan(static_cast<std::size_t>(position_ - at), static_cast<std::size_t>(stop - position_)));
            position_ = stop;
        }
    }

    // After the last byte: edits that append, then every edit must have been used.
    void finish(std::uint64_t size) {
        if (position_ != size) throw std::logic_error("plan_splice: the original read short");
        insert_edits_at(size);
        if (next_ != edits_.size()) throw std::logic_error("plan_splice: an edit lies past the original");
    }

private:
    void insert_edits_at(std::uint64_t at) {
        while (next_ < edits_.size() && edits_[next_].offset == at) {
            hash_.update(edits_[next_].bytes);
            skip_to_ = std::max(skip_to_, at + edits_[next_].length);
            ++next_;
        }
    }

    const ByteEdits& edits_;
    Sha256& hash_;
    std::size_t next_ = 0;
    std::uint64_t position_ = 0;
    std::uint64_t skip_to_ = 0;
};

// SHA-256 of the new content: the original inflated once more through `source`,
// the edits put in place as the bytes pass. The spans between the source's windows
// are inflated on several threads at once (SeekableMember::read_all), the hashing
// done in order by whichever of them finds the next span ready, so on two cores
// the inflate is split between them and the hash overlaps it.
std::array<std::uint8_t, 32> streamed_sha256(const SeekableMember& source, const ByteEdits& edits, std::uint64_t size) {
    Sha256 hash;
    EditedStream stream(edits, hash);
    source.read_all([&](std::span<const std::uint8_t> chunk, std::uint64_t at) { stream.take(chunk, at); });
    stream.finish(size);
    return hash.digest();
}

}  // namespace

PrecompressedMember plan_splice(const InflatedMember& index, const SeekableMember& source, const ByteEdits& edits,
                                int level) {
    if (!index.member) throw std::invalid_argument("plan_splice: the original has no member");
    if (source.size() != index.size) throw std::invalid_argument("plan_splice: the source is not the indexed member");
    if (auto problem = edits_problem(edits, index.size); !problem.empty())
        throw std::invalid_argument("plan_splice: " + problem);
    bool deflated = index.member->method == Method::deflated && !index.blocks.empty();
    const InflatedMember exact = deflated ? with_exact_blocks(index, source, edits) : InflatedMember{};
    const auto& blocks = exact.blocks;
    auto regions = deflated ? plan_regions(blocks, edits) : std::vector<Region>{};
    if (!deflated || edits.empty() || rewrites_everything(regions, blocks.size())) {
        // Nothing to reuse: the member is deflated whole anyway (not bounded; the
        // caller keeps stored members whole).
        InflatedMember whole;
        whole.member = index.member;
        whole.blocks = deflated ? exact.blocks : index.blocks;
        whole.size = index.size;
        whole.crc32 = index.crc32;
        whole.data.reserve(static_cast<std::size_t>(index.size));
        ByteRanges everything;
        everything.add(0, index.size);
        source.read(everything, [&](std::span<const std::uint8_t> chunk, std::uint64_t) {
            whole.data.insert(whole.data.end(), chunk.begin(), chunk.end());
        });
        return plan_splice(whole, edits, level);
    }
    SparseStream image(index.size);  // lazily backed: only the regions' bytes take memory
    source.read(region_bytes(exact, regions),
                [&](std::span<const std::uint8_t> chunk, std::uint64_t at) { image.fill(at, chunk); });
    auto out = Splicer(exact, image.image(), edits, level).run(regions);
    out.sha256 = streamed_sha256(source, edits, index.size);
    return out;
}

}  // namespace wheelfix::zip
