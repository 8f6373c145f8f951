// Re-deflating only around changed bytes (docs/decisions.md, "Big members: the splice").
//
// Contract: plan_splice(original, edits) returns the new member's compressed stream
// as pieces: byte ranges of the ORIGINAL compressed stream (copied as stored, never
// recompressed) and freshly deflated bytes covering each changed region. A region
// runs from the last block boundary p at or before its first edit to the first
// boundary q a full 32 KiB window past its last (from q on the window holds the
// original's bytes again, so the original blocks decode the same), or to the
// stream's end; regions that meet are merged. The original is copied on from q
// without bit shifting, whether or not q is byte aligned (the layout: splice.cpp).
// A stored original, or one without usable boundaries, gets the whole new content
// deflated (parallel_deflate). `original.data` must hold the inflated original
// (else, or for invalid edits, std::invalid_argument). The result carries the new
// content's size, CRC-32 (unchanged spans' from the access points' prefix CRCs,
// without re-reading them) and SHA-256 (on a second thread, when the thread budget
// spares one, while the regions are deflated); `recompressed_bytes` counts what went
// through deflate (typically the edit plus 32 KiB plus one or two 10-100 KB blocks).
// The stream inflates to apply_edits(original.data, edits).
//
// The splice proves its own output, so that a writer need not read the member back
// (a failure is std::logic_error: a fault of ours, not of the input):
// - each re-deflated region is inflated again (zlib, primed at p with the window
//   before it: check_splice) and compared with the intended new content [p, q);
//   where the original resumes at q, the inflater must stand at a block start
//   exactly at q's bit, with its last 32 KiB equal to the original's before q, so
//   the original blocks copied on decode exactly as in the input's own read, which
//   checked them against the member's CRC-32. A region that ends the stream must end
//   it, on its last byte. A member deflated whole is inflated whole and compared.
//   Costs: the regions' bytes, not the member.
// - the pass that computes the new content's SHA-256 also computes its CRC-32, which
//   must equal the headers' (from the prefix CRCs): header and content agree.
// `content`, when given, sees every byte of the new content in order, once, as that
// pass reads it (a caller's analysis of the edited member, with no read of its own),
// possibly on another thread, one call at a time, before plan_splice returns.
#pragma once

#include "wheelfix/util/byte_edit.hpp"
#include "wheelfix/zip/codec.hpp"
#include "wheelfix/zip/inflate_index.hpp"
#include "wheelfix/zip/seekable_member.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace wheelfix::zip {

struct CompressedPiece {
    bool from_original = false;
    std::uint64_t original_offset = 0;  // byte offset in the original compressed stream
    std::uint64_t length = 0;           // bytes
    std::vector<std::uint8_t> bytes;    // when !from_original
};

struct PrecompressedMember {
    std::vector<CompressedPiece> pieces;  // concatenated: a complete raw deflate stream
    std::uint64_t compressed_size = 0;
    std::uint64_t size = 0;
    std::uint32_t crc32 = 0;
    std::array<std::uint8_t, 32> sha256{};
    std::uint64_t recompressed_bytes = 0;  // uncompressed bytes that went through deflate
    // How the pieces were made, for check_splice: one region per re-deflated piece;
    // none (and `whole`) when the member was deflated whole.
    struct Region {
        std::size_t piece = 0;           // index into pieces
        std::uint64_t begin = 0;         // p: original inflated offset the piece restarts at
        std::uint64_t end = 0;           // q (or the original's size when `final`)
        int lead_bits = 0;               // bits of the piece's first byte that end the block before p
        int tail_bits = 0;               // bits of its last byte before q's block starts (0: aligned)
        std::uint8_t resume_byte = 0;    // the original's byte q starts in (its high 8 - tail_bits are q's)
        bool final = false;              // the piece ends the stream
        std::size_t first_edit = 0, end_edit = 0;  // the edits it holds
    };
    std::vector<Region> regions;
    bool whole = false;
};

using ContentSink = std::function<void(std::span<const std::uint8_t>)>;

PrecompressedMember plan_splice(const InflatedMember& original, const ByteEdits& edits, const ContentSink& content = {});

// The same for an original whose inflated bytes were not kept (bounded memory for big
// members): `index` is inflate_indexed's result without InflateOptions::keep, `source`
// reads the member again from its windows. Block starts the index lacks (ISA-L
// records one per window) are found again around each edit from the window before it
// (SeekableMember::block_starts, zlib), so the regions, and the stream, are a full
// index's. Each region's bytes ([p - 32 KiB, q)) are inflated again into a lazily
// backed image (util/sparse_stream.hpp), then the SHA-256 pass streams the whole
// member once more through `source` (SeekableMember::read_all) with the edits put in
// place. Memory: the regions' bytes and a few spans' buffers, not the member. The
// result is plan_splice(original with its bytes, edits)'s. Where nothing of the
// original stream can be reused (a stored member, or a splice that would re-deflate
// everything) the member is read whole and deflated as above: not bounded.
PrecompressedMember plan_splice(const InflatedMember& index, const SeekableMember& source, const ByteEdits& edits,
                                const ContentSink& content = {});

// The new content's SHA-256 and CRC-32 (the size is edited_size's).
struct ContentDigests {
    std::array<std::uint8_t, 32> sha256{};
    std::uint32_t crc32 = 0;
};

// The same, when the caller has the new content's digests already: they came from
// the read that made `index` (EditedDigest below, fed as the member passed), so
// `source` is read only around the edits, never whole again. The headers' CRC-32
// (from the index's prefix CRCs) must equal `known.crc32`: the proof above, with
// the caller's pass as the one that saw the content. No `content` sink: nothing
// streams the new content here.
PrecompressedMember plan_splice(const InflatedMember& index, const SeekableMember& source, const ByteEdits& edits,
                                const ContentDigests& known);

// The new content's digests, computed while the ORIGINAL streams past: take() gets
// the original's inflated bytes in order, from its first; the edits' bytes are put
// in place of those they replace as they pass (apply_edits' layout, never
// materialized). take(chunk, original) also feeds the chunk, all of it, to
// `original` (the original's own SHA-256), the two hashes paired where the bytes
// are the same (Sha256::update_pair). finish(size) after the original's last
// byte: std::logic_error when the bytes taken are not `size` or an edit lies past
// them. `edits` must outlive this and be valid for `size` (edits_problem).
// `content`, when given, gets the new content's bytes in order as they are hashed
// (a caller that analyses the edited member as it passes, instead of reading it back).
class EditedDigest {
public:
    explicit EditedDigest(const ByteEdits& edits, ContentSink content = {});
    explicit EditedDigest(ByteEdits&&, ContentSink = {}) = delete;  // it keeps a reference: no temporaries
    ~EditedDigest();
    EditedDigest(const EditedDigest&) = delete;
    EditedDigest& operator=(const EditedDigest&) = delete;
    void take(std::span<const std::uint8_t> chunk);
    void take(std::span<const std::uint8_t> chunk, Sha256& original);
    ContentDigests finish(std::uint64_t size);

private:
    struct State;
    std::unique_ptr<State> state_;
};

// The region proof above, on its own (plan_splice runs it; tests corrupt a splice and
// run it): `original` holds at least the original's inflated bytes [p - 32 KiB, q)
// of every region (a lazily backed image will do). A spliced member that does not
// decode to apply_edits(original, edits) there is std::logic_error naming the region.
void check_splice(const PrecompressedMember& spliced, std::span<const std::uint8_t> original, const ByteEdits& edits);

// Deflates `data` as independent chunks on `threads` threads (each chunk primed with
// the previous 32 KiB as dictionary, joined by Z_SYNC_FLUSH, the last Z_FINISH),
// giving one valid raw deflate stream; used for new content and as the splice
// fallback. threads = 0: the calling thread plus as many helpers as the thread
// budget spares (util/thread_budget.hpp); else exactly that many threads in all.
// The backend and level: member_deflate() (zip/codec.hpp) unless a test asks otherwise.
PrecompressedMember parallel_deflate(std::span<const std::uint8_t> data, DeflateChoice choice = member_deflate(),
                                     unsigned threads = 0);

}  // namespace wheelfix::zip
