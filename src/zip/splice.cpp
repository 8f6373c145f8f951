// plan_splice (splice.hpp has the contract). A deflate block decodes from its own
// bits plus the 32 KiB of output before it, so for an edit [a, b) restarting at the
// block boundary p <= a and resuming at the boundary q >= b + 32 KiB gives
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
// (see RawDeflater::end_before). The bytes before p never include the final block
// (p is a block start). The new content is never materialized: its SHA-256 reads the
// original in order, each edit's bytes put in place as it passes (EditedStream).
// Its CRC-32 never reads the unchanged spans: they run between
// access points (or to the member's end), whose prefix CRCs inflate_indexed
// recorded, so with crc32_combine's linearity (zlib >= 1.2.12:
// combine(c1, c2, n) = shift(c1, n) ^ c2)
//   crc(span [s, e)) = prefix(e) ^ combine(prefix(s), 0, e - s)
// and the span is folded into the running CRC with crc32_combine; only the bytes
// fed to deflate are CRC'd directly.
#include "wheelfix/zip/splice.hpp"

#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/sparse_stream.hpp"
#include "wheelfix/util/thread_budget.hpp"
#include "wheelfix/util/timings.hpp"

#include "wheelfix/zip/codec.hpp"

#include "raw_deflate.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <functional>
#include <optional>
#include <stdexcept>
#include <thread>

namespace wheelfix::zip {
namespace {

constexpr std::uint64_t kWindow = std::uint64_t(32) << 10;
constexpr int kLevel = 6;  // zlib's, for the re-deflated regions (raw_deflate.hpp: why zlib)

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

// What the one pass over the new content computes: its SHA-256 and CRC-32, with
// each byte also handed to the caller's sink (plan_splice's `content`).
class ContentDigest {
public:
    explicit ContentDigest(const ContentSink& sink) : sink_(sink) {}
    void update(std::span<const std::uint8_t> bytes) {
        hash_.update(bytes);
        after_hash(bytes);
    }
    // The same, and `other` takes the bytes too, the two hashes paired.
    void update_beside(std::span<const std::uint8_t> bytes, Sha256& other) {
        Sha256::update_pair(other, bytes, hash_, bytes);
        after_hash(bytes);
    }
    std::array<std::uint8_t, 32> sha256() { return hash_.digest(); }
    std::uint32_t crc32_value() const { return crc_; }

private:
    void after_hash(std::span<const std::uint8_t> bytes) {
        crc_ = crc32(crc_, bytes);
        if (sink_) sink_(bytes);
    }

    const ContentSink& sink_;
    Sha256 hash_;
    std::uint32_t crc_ = 0;
};

// The new content streamed: the original read in order, each edit's bytes put in
// place of the original bytes it replaces as they pass.
class EditedStream {
public:
    EditedStream(const ByteEdits& edits, ContentDigest& digest) : edits_(edits), digest_(digest) {}

    // `original`, when given, takes the whole chunk as well (EditedDigest::take).
    void take(std::span<const std::uint8_t> chunk, std::uint64_t at, Sha256* original = nullptr) {
        if (at != position_) throw std::logic_error("plan_splice: the original was not read in order");
        const std::uint64_t end = at + chunk.size();
        std::size_t original_fed = 0;  // bytes of the chunk `original` has taken
        while (position_ < end) {
            if (position_ >= skip_to_) insert_edits_at(position_);
            if (position_ < skip_to_) {
                position_ = std::min(end, skip_to_);
                continue;
            }
            const std::uint64_t stop = next_ < edits_.size() ? std::min(end, edits_[next_].offset) : end;
            if (stop <= position_) throw std::logic_error("plan_splice: edits out of order");
            const auto from = static_cast<std::size_t>(position_ - at), until = static_cast<std::size_t>(stop - at);
            const auto same = chunk.subspan(from, until - from);
            if (original) {
                original->update(chunk.subspan(original_fed, from - original_fed));  // the bytes edits replace
                digest_.update_beside(same, *original);
                original_fed = until;
            } else {
                digest_.update(same);
            }
            position_ = stop;
        }
        if (original) original->update(chunk.subspan(original_fed));
    }

    std::uint64_t position() const { return position_; }  // original bytes taken so far

    // After the last byte: edits that append, then every edit must have been used.
    void finish(std::uint64_t size) {
        if (position_ != size) throw std::logic_error("plan_splice: the original read short");
        insert_edits_at(size);
        if (next_ != edits_.size()) throw std::logic_error("plan_splice: an edit lies past the original");
    }

private:
    void insert_edits_at(std::uint64_t at) {
        while (next_ < edits_.size() && edits_[next_].offset == at) {
            digest_.update(edits_[next_].bytes);
            skip_to_ = std::max(skip_to_, at + edits_[next_].length);
            ++next_;
        }
    }

    const ByteEdits& edits_;
    ContentDigest& digest_;
    std::size_t next_ = 0;
    std::uint64_t position_ = 0;
    std::uint64_t skip_to_ = 0;
};

// The splice's header CRC (from the index's prefix CRCs) against the CRC of the
// content its SHA-256 pass saw.
void require_same_crc(const PrecompressedMember& out, std::uint32_t content_crc32) {
    if (out.crc32 != content_crc32)
        throw std::logic_error("plan_splice: the new content's CRC-32 differs from the one its headers would carry");
}

// The digest of `original` with `edits` in place: on a thread of its own from
// construction when the thread budget spares one, else in finish(). finish() joins
// the thread (so does destruction, on an early exit).
class BackgroundDigest {
public:
    BackgroundDigest(std::span<const std::uint8_t> original, const ByteEdits& edits, const ContentSink& sink)
        : original_(original), edits_(edits), digest_(sink), claim_(try_claim_thread()) {
        if (claim_) thread_.emplace([this] { digest_all(); });
    }

    ContentDigest& finish() {
        if (thread_) thread_->join();
        else digest_all();
        if (failure_) std::rethrow_exception(failure_);
        return digest_;
    }

private:
    void digest_all() {
        try {
            EditedStream stream(edits_, digest_);
            stream.take(original_, 0);
            stream.finish(original_.size());
        } catch (...) {
            failure_ = std::current_exception();
        }
    }

    std::span<const std::uint8_t> original_;
    const ByteEdits& edits_;
    ContentDigest digest_;
    std::exception_ptr failure_;
    std::optional<ThreadClaim> claim_;    // the thread's share of the budget, returned after the join
    std::optional<std::jthread> thread_;  // last: starts once the members it uses exist, joins before they go
};

// Builds the pieces in stream order while CRC-ing the new content in content
// order (and hashing it on a second thread).
class Splicer {
public:
    // `data` holds the original's inflated bytes, at least those of every region
    // ([p - 32 KiB, q)); all of them for run() with a sink, which hashes the new content.
    Splicer(const InflatedMember& original, std::span<const std::uint8_t> data, const ByteEdits& edits)
        : original_(original), data_(data), edits_(edits), deflater_(kLevel) {}

    PrecompressedMember run(const std::vector<Region>& regions, const ContentSink& sink) {
        BackgroundDigest digest(data_, edits_, sink);
        auto out = run(regions);
        auto& content = digest.finish();
        out.sha256 = content.sha256();
        require_same_crc(out, content.crc32_value());
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
        PrecompressedMember::Region made;
        made.piece = out_.pieces.size();
        made.begin = p.uncompressed;
        made.end = stop;
        made.lead_bits = bits;
        made.final = to_end;
        made.first_edit = region.first_edit;
        made.end_edit = region.end_edit;
        if (to_end)
            finish(piece);
        else
            join_before(original_.blocks[region.resume], piece);
        if (!to_end) {
            made.tail_bits = static_cast<int>(original_.blocks[region.resume].compressed_bit % 8);
            made.resume_byte = original_.blocks[region.resume].partial_byte;
        }
        append(std::move(piece));
        out_.regions.push_back(made);
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
        crc_ = crc32(crc_, bytes);
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
            // crc(span [s, e)) = prefix(e) ^ combine(prefix(s), 0, e - s): see the top of this file.
            std::uint32_t span = prefix_crc_of(boundary) ^ crc32_combine(prefix_crc_of(unchanged_from_), 0, length);
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

// The new content a region should decode to: the original [p, q) with the
// region's edits in place.
std::vector<std::uint8_t> intended_bytes(const PrecompressedMember::Region& region, std::span<const std::uint8_t> original,
                                         const ByteEdits& edits) {
    std::vector<std::uint8_t> bytes;
    std::uint64_t cursor = region.begin;
    auto take = [&](std::uint64_t from, std::uint64_t to) {
        if (to < from || to > original.size()) throw std::logic_error("check_splice: a region outside the original");
        bytes.insert(bytes.end(), original.begin() + static_cast<std::ptrdiff_t>(from),
                     original.begin() + static_cast<std::ptrdiff_t>(to));
    };
    for (std::size_t i = region.first_edit; i < region.end_edit && i < edits.size(); ++i) {
        take(cursor, edits[i].offset);
        bytes.insert(bytes.end(), edits[i].bytes.begin(), edits[i].bytes.end());
        cursor = edits[i].offset + edits[i].length;
    }
    take(cursor, region.end);
    return bytes;
}

// Whether `chunk`, inflated after `produced` bytes, is what `expected` holds there.
bool continues(std::span<const std::uint8_t> expected, std::uint64_t produced, std::span<const std::uint8_t> chunk) {
    return produced + chunk.size() <= expected.size() &&
           std::equal(chunk.begin(), chunk.end(), expected.begin() + static_cast<std::ptrdiff_t>(produced));
}

[[noreturn]] void splice_fault(const PrecompressedMember::Region& region, const std::string& problem) {
    throw std::logic_error("plan_splice: the region re-deflated from inflated offset " + std::to_string(region.begin) +
                           " to " + std::to_string(region.end) + " " + problem);
}

// One region's piece inflated again (zlib: it stops at block starts) and compared
// (the contract in splice.hpp).
void check_region(const PrecompressedMember::Region& region, const CompressedPiece& piece,
                  std::span<const std::uint8_t> original, const ByteEdits& edits) {
    const auto intended = intended_bytes(region, original, edits);
    const std::span<const std::uint8_t> stream(piece.bytes);
    if (piece.from_original || stream.empty()) splice_fault(region, "has no bytes of its own");
    const std::uint64_t window = std::min(region.begin, kWindow);
    Inflater inflater(Backend::zlib);
    const auto window_bytes = original.subspan(region.begin - window, window);
    auto at = static_cast<std::size_t>(inflater.resume(static_cast<std::uint64_t>(region.lead_bits), stream[0], window_bytes));
    // Where q's block starts, in bits from the piece's first byte.
    const std::uint64_t target = stream.size() * 8 - (region.tail_bits != 0 ? 8 - region.tail_bits : 0);
    std::uint64_t produced = 0;
    std::vector<std::uint8_t> out(std::size_t(64) << 10);
    bool reached = false;
    std::optional<std::uint64_t> last_boundary;
    for (int idle = 0; idle < 2;) {
        Inflater::Step step;
        try {
            step = inflater.inflate(stream.subspan(at), out, !region.final);
        } catch (const CodecError& error) {
            splice_fault(region, std::string("does not inflate: ") + error.what());
        }
        if (!continues(intended, produced, std::span(out).first(step.produced)))
            splice_fault(region, "inflates to other bytes than the edited content");
        produced += step.produced;
        at += step.consumed;
        if (step.ended) {
            reached = region.final && at == stream.size();
            break;
        }
        std::optional<std::uint64_t> boundary;
        if (auto bits = inflater.block_start_bits(); bits && !region.final) boundary = std::uint64_t(at) * 8 - *bits;
        if (boundary && *boundary == target) {
            reached = true;
            break;
        }
        if (boundary && *boundary > target) break;
        const bool moved = step.consumed != 0 || step.produced != 0 || boundary != last_boundary;
        idle = moved ? 0 : idle + 1;
        last_boundary = boundary;
    }
    if (region.tail_bits != 0 && (stream.back() >> region.tail_bits) != (region.resume_byte >> region.tail_bits))
        splice_fault(region, "rebuilds the byte the original resumes in with other bits");
    if (!reached || produced != intended.size())
        splice_fault(region, region.final ? "does not end the stream where it should"
                                          : "does not end at the block the original resumes with");
}

// A member deflated whole: inflated whole (the default backend) and compared.
void check_whole(const PrecompressedMember& spliced, std::span<const std::uint8_t> content) {
    Inflater inflater;
    std::vector<std::uint8_t> out(std::size_t(256) << 10);
    std::uint64_t produced = 0;
    bool ended = false;
    for (std::size_t i = 0; i < spliced.pieces.size() && !ended; ++i) {
        std::span<const std::uint8_t> input(spliced.pieces[i].bytes);
        if (spliced.pieces[i].from_original) throw std::logic_error("plan_splice: a whole deflate that copies the original");
        while (!ended) {
            Inflater::Step step;
            try {
                step = inflater.inflate(input, out);
            } catch (const CodecError& error) {
                throw std::logic_error(std::string("plan_splice: the member deflated whole does not inflate: ") + error.what());
            }
            if (!continues(content, produced, std::span(out).first(step.produced)))
                throw std::logic_error("plan_splice: the member deflated whole inflates to other bytes than its content");
            produced += step.produced;
            input = input.subspan(step.consumed);
            ended = step.ended;
            if (input.empty() && step.produced == 0 && step.consumed == 0) break;
        }
    }
    if (!ended || produced != content.size())
        throw std::logic_error("plan_splice: the member deflated whole does not end where its content does");
}

// The fault the proof exists for, on request (tests/e2e/test_repair.py):
// WHEELFIX_TEST_CORRUPT_SPLICE=1 flips one bit in the middle of a splice's first
// re-deflated region (or of a whole deflate's first piece) before the proof runs,
// which must then refuse it.
void corrupt_when_asked(PrecompressedMember& out) {
    static const bool asked = [] {
        const char* value = std::getenv("WHEELFIX_TEST_CORRUPT_SPLICE");
        return value != nullptr && std::string_view(value) == "1";
    }();
    if (!asked) return;
    for (auto& piece : out.pieces)  // the first region's piece, or a whole deflate's first
        if (!piece.from_original && !piece.bytes.empty() && (out.regions.empty() || &piece == &out.pieces[out.regions.front().piece])) {
            piece.bytes[piece.bytes.size() / 2] ^= 0x10;
            return;
        }
}

// The fallback: the whole new content deflated, proved, and seen by the sink.
PrecompressedMember deflate_whole(std::span<const std::uint8_t> content, const ContentSink& sink) {
    auto out = parallel_deflate(content);
    out.whole = true;
    corrupt_when_asked(out);
    check_whole(out, content);
    if (out.crc32 != crc32(0, content)) throw std::logic_error("plan_splice: the whole deflate's CRC-32 is not its content's");
    if (sink) sink(content);
    return out;
}

}  // namespace

void check_splice(const PrecompressedMember& spliced, std::span<const std::uint8_t> original, const ByteEdits& edits) {
    for (const auto& region : spliced.regions) {
        if (region.piece >= spliced.pieces.size()) throw std::logic_error("check_splice: a region without its piece");
        check_region(region, spliced.pieces[region.piece], original, edits);
    }
}

PrecompressedMember plan_splice(const InflatedMember& original, const ByteEdits& edits, const ContentSink& content) {
    const timings::Scope timer(timings::Phase::deflate);
    check_arguments(original, edits);
    if (original.data.size() != original.size)
        throw std::invalid_argument("plan_splice: the original's inflated bytes were not kept");
    const auto& blocks = original.blocks;
    bool deflated = original.member->method == Method::deflated && !blocks.empty();
    if (deflated && edits.empty()) {
        if (content) content(original.data);
        return unchanged(original);
    }
    auto regions = deflated ? plan_regions(blocks, edits) : std::vector<Region>{};
    if (!deflated || rewrites_everything(regions, blocks.size())) return deflate_whole(apply_edits(original.data, edits), content);
    auto out = Splicer(original, original.data, edits).run(regions, content);
    corrupt_when_asked(out);
    check_splice(out, original.data, edits);
    return out;
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

// The bounded splice without its SHA-256 pass: the regions re-deflated and proved,
// the headers' CRC-32 from the index. nullopt when nothing of the original stream
// can be reused (plan_splice then reads the member whole, with `blocks`: the exact
// block starts around the edits when they were found, so its regions are a full
// index's).
std::optional<PrecompressedMember> splice_around_edits(const InflatedMember& index, const SeekableMember& source,
                                                       const ByteEdits& edits, std::vector<AccessPoint>& blocks) {
    blocks = index.blocks;
    check_arguments(index, edits);
    if (source.size() != index.size) throw std::invalid_argument("plan_splice: the source is not the indexed member");
    const bool deflated = index.member->method == Method::deflated && !index.blocks.empty();
    if (!deflated || edits.empty()) return std::nullopt;
    const InflatedMember exact = with_exact_blocks(index, source, edits);
    blocks = exact.blocks;
    const auto regions = plan_regions(exact.blocks, edits);
    if (rewrites_everything(regions, exact.blocks.size())) return std::nullopt;
    SparseStream image(index.size);  // lazily backed: only the regions' bytes take memory
    source.read(region_bytes(exact, regions),
                [&](std::span<const std::uint8_t> chunk, std::uint64_t at) { image.fill(at, chunk); });
    auto out = Splicer(exact, image.image(), edits).run(regions);
    corrupt_when_asked(out);
    check_splice(out, image.image(), edits);
    return out;
}

// Nothing to reuse: the member read whole and deflated whole (not bounded; the
// caller keeps stored members whole).
PrecompressedMember splice_read_whole(const InflatedMember& index, std::vector<AccessPoint> blocks,
                                      const SeekableMember& source, const ByteEdits& edits, const ContentSink& content) {
    InflatedMember whole;
    whole.member = index.member;
    whole.blocks = std::move(blocks);
    whole.size = index.size;
    whole.crc32 = index.crc32;
    whole.data.reserve(static_cast<std::size_t>(index.size));
    ByteRanges everything;
    everything.add(0, index.size);
    source.read(everything, [&](std::span<const std::uint8_t> chunk, std::uint64_t) {
        whole.data.insert(whole.data.end(), chunk.begin(), chunk.end());
    });
    return plan_splice(whole, edits, content);
}

const ContentSink kNoSink;

}  // namespace

PrecompressedMember plan_splice(const InflatedMember& index, const SeekableMember& source, const ByteEdits& edits,
                                const ContentSink& content) {
    std::vector<AccessPoint> blocks;
    auto out = splice_around_edits(index, source, edits, blocks);
    if (!out) return splice_read_whole(index, std::move(blocks), source, edits, content);
    // The new content's digests: the original once more, the edits in place (the header).
    ContentDigest digest(content);
    EditedStream stream(edits, digest);
    source.read_all([&](std::span<const std::uint8_t> chunk, std::uint64_t at) { stream.take(chunk, at); });
    stream.finish(index.size);
    out->sha256 = digest.sha256();
    require_same_crc(*out, digest.crc32_value());
    return std::move(*out);
}

PrecompressedMember plan_splice(const InflatedMember& index, const SeekableMember& source, const ByteEdits& edits,
                                const ContentDigests& known) {
    std::vector<AccessPoint> blocks;
    auto out = splice_around_edits(index, source, edits, blocks);
    if (!out) {
        auto whole = splice_read_whole(index, std::move(blocks), source, edits, kNoSink);
        if (whole.sha256 != known.sha256 || whole.crc32 != known.crc32)
            throw std::logic_error("plan_splice: the new content's digests differ from the ones the caller computed");
        return whole;
    }
    out->sha256 = known.sha256;
    require_same_crc(*out, known.crc32);
    return std::move(*out);
}

struct EditedDigest::State {
    State(const ByteEdits& edits, ContentSink sink) : content(std::move(sink)), digest(content), stream(edits, digest) {}
    const ContentSink content;  // before digest, which keeps a reference to it
    ContentDigest digest;
    EditedStream stream;
};

EditedDigest::EditedDigest(const ByteEdits& edits, ContentSink content)
    : state_(std::make_unique<State>(edits, std::move(content))) {}
EditedDigest::~EditedDigest() = default;

void EditedDigest::take(std::span<const std::uint8_t> chunk) {
    state_->stream.take(chunk, state_->stream.position());
}

void EditedDigest::take(std::span<const std::uint8_t> chunk, Sha256& original) {
    state_->stream.take(chunk, state_->stream.position(), &original);
}

ContentDigests EditedDigest::finish(std::uint64_t size) {
    state_->stream.finish(size);
    return {state_->digest.sha256(), state_->digest.crc32_value()};
}

}  // namespace wheelfix::zip
