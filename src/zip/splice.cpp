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
// block start). CRC-32 and SHA-256 of the new content are computed in one ordered
// walk over it (unchanged spans read from the inflated original, edited spans as
// fed to deflate), without materializing it. A stored original, or a splice that
// would re-deflate everything, goes to parallel_deflate.
#include "wheelfix/zip/splice.hpp"

#include "wheelfix/util/sha256.hpp"

#include "raw_deflate.hpp"

#include <algorithm>
#include <stdexcept>

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

// Builds the pieces in stream order while hashing the new content in content order.
class Splicer {
public:
    Splicer(const InflatedMember& original, const ByteEdits& edits, int level)
        : original_(original), data_(original.data), edits_(edits), deflater_(level) {}

    PrecompressedMember run(const std::vector<Region>& regions) {
        for (const auto& region : regions) redeflate(region);
        keep_unchanged_until(original_.size);
        copy_original_until(original_.member->compressed_size);
        out_.size = edited_size(edits_, original_.size);
        out_.crc32 = crc_;
        out_.sha256 = hash_.digest();
        return std::move(out_);
    }

private:
    void redeflate(const Region& region) {
        const AccessPoint& p = original_.blocks[region.restart];
        copy_original_until(p.compressed_bit / 8);
        keep_unchanged_until(p.uncompressed);

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
        uncompressed_cursor_ = stop;
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

    void keep_unchanged_until(std::uint64_t offset) {
        account(data_.subspan(uncompressed_cursor_, offset - uncompressed_cursor_));
        uncompressed_cursor_ = offset;
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
        if (bytes.empty()) return;  // crc32 of a null buffer is not a no-op: it restarts at 0
        crc_ = static_cast<std::uint32_t>(crc32_z(crc_, bytes.data(), bytes.size()));
        hash_.update(bytes);
    }

    const InflatedMember& original_;
    std::span<const std::uint8_t> data_;
    const ByteEdits& edits_;
    RawDeflater deflater_;
    PrecompressedMember out_;
    Sha256 hash_;
    std::uint32_t crc_ = 0;
    std::uint64_t uncompressed_cursor_ = 0;  // original content accounted up to here
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
    check_arguments(original, edits);
    const auto& blocks = original.blocks;
    bool deflated = original.member->method == Method::deflated && !blocks.empty();
    if (deflated && edits.empty()) return unchanged(original);
    auto regions = deflated ? plan_regions(blocks, edits) : std::vector<Region>{};
    if (!deflated || rewrites_everything(regions, blocks.size()))
        return parallel_deflate(apply_edits(original.data, edits), level);
    return Splicer(original, edits, level).run(regions);
}

}  // namespace wheelfix::zip
