// Byte edits: how an edited file differs from its original.
//
// Contract: an edit replaces original bytes [offset, offset + length) with `bytes`
// (length 0 inserts; an edit at offset == original size appends). A list of edits
// is valid when sorted by offset, non-overlapping and inside the original
// (offset + length <= original size). Editors (elf/editor.hpp) produce edit lists
// instead of whole new images so that writers can re-deflate only around the
// changed bytes (zip/splice.hpp) and keep everything else as it was stored.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace wheelfix {

struct ByteEdit {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;  // original bytes replaced
    std::vector<std::uint8_t> bytes;

    bool operator==(const ByteEdit&) const = default;
};

using ByteEdits = std::vector<ByteEdit>;

// Empty when `edits` is valid for an original of `original_size` bytes, otherwise
// why not ("edits overlap at offset 4096").
std::string edits_problem(const ByteEdits& edits, std::uint64_t original_size);
// Size of the edited file.
std::uint64_t edited_size(const ByteEdits& edits, std::uint64_t original_size);
// The edited file as one buffer (for bare files and tests). Edits must be valid.
std::vector<std::uint8_t> apply_edits(std::span<const std::uint8_t> original, const ByteEdits& edits);
// Sorts and merges adjacent/overlapping-free edits into the canonical form.
void normalize_edits(ByteEdits& edits);

}  // namespace wheelfix
