// The end of a member's content without inflating what comes before it.
//
// Why: a loader's view of an ELF library (elf/streamed_elf.hpp) needs PT_DYNAMIC and
// the section header table, and linkers put both at the end of the file: the
// read-write segment follows .text, .rodata and .nv_fatbin. In sgl-kernel 0.3.21's
// 852 MB flash_ops.abi3.so they lie in its last MB, yet streaming from byte 0 to
// reach them is a full inflate (1.1 s with ISA-L). This reads them for a few MiB of
// inflate.
//
// Contract: inflate_tail(archive, member, from) returns the member's content from
// some offset `begin` <= `from` to its end, or nullopt when that cannot be had for
// little: the caller then streams the member from its start, as it would have
// without this. A stored member's bytes are read in place. For a deflated member:
//   - the last K compressed bytes are read (K from kFirstBack, doubling up to
//     kMaxBack, and below half the member's compressed size);
//   - bit offsets from their start are tried in order as the start of a deflate
//     block (src/zip/block_header's test, shared with zip/far_read.hpp): a
//     dynamic Huffman block header must be one zlib accepts (code lengths
//     forming prefix codes as zlib's inflate_table demands: none over-subscribed,
//     none incomplete but a single code, an end-of-block code), a stored block's LEN
//     the complement of its NLEN; fixed Huffman blocks, which any bits can start,
//     are never tried;
//   - a candidate is inflated (zlib, the first byte's remaining bits primed) to
//     the end of the stream, which must come exactly at the member's last
//     compressed byte, and no more than the member's size or kMaxTailInflated;
//     twice: with a window of 0x00 bytes before it, and with one of 0xff bytes. A
//     back-reference copies bytes verbatim, so a byte that derives from the unknown
//     window differs between the two: the bytes after the last one that differs do
//     not depend on it. Their offsets count back from the member's end (the size is
//     the central directory's), so they hold wherever the candidate began;
//   - the answer must reach back to `from`, and is confirmed by a second decode
//     from twice as far back (a different start, found the same way): the two must
//     agree on every byte both give. Bits that only look like a block header almost
//     never inflate to the stream's exact end; if they did and then fell into step
//     with the real blocks, the bytes before that point would be wrong, and the
//     decode from the real block boundary further back disagrees with them.
// Bounded work and memory whatever the bytes: one call scans the bit offsets of at
// most kScanBytes compressed bytes, inflates at most kMaxCandidates candidates and
// kInflateBudget bytes in all (a few tenths of a second), and holds K plus three
// decodes of at most kMaxTailInflated bytes. The bytes are not CRC-checked (only a whole read can be): use it
// where a partial read already was the contract (check's early stop), not where
// the member's integrity is the question.
#pragma once

#include "wheelfix/zip/archive.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace wheelfix::zip {

struct MemberTail {
    std::uint64_t begin = 0;          // offset of bytes.front() in the member's content
    std::vector<std::uint8_t> bytes;  // the content from `begin` to the member's end
};

constexpr std::uint64_t kFirstBack = 256u << 10;
constexpr std::uint64_t kMaxBack = 8u << 20;
constexpr std::uint64_t kMaxTailInflated = 16u << 20;  // one decode's bytes
constexpr std::uint64_t kScanBytes = 512u << 10;       // compressed bytes scanned, one call
constexpr std::uint64_t kInflateBudget = 48u << 20;    // bytes inflated, one call
constexpr int kMaxCandidates = 64;                     // candidate starts inflated, one call

std::optional<MemberTail> inflate_tail(const Archive& archive, const Member& member, std::uint64_t from);

}  // namespace wheelfix::zip
