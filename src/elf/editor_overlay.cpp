// Editor stage 5: new bytes laid over the original, as ByteEdits.
//
// Contract: writes must not overlap one another: the tables an edit rewrites (program
// and section headers, .dynamic, .dynstr, verneed fields) overlap only in a broken
// or hostile file, which is an EditError rather than a guess at what wins. The
// edited file is the original with every write applied, cut to new_size or
// extended with zero bytes up to it. edits() emits, for the part inside the
// original, only the runs of bytes that really change (runs closer than kJoinGap
// bytes are joined into one edit), then one edit for the tail: the appended bytes,
// or the cut. The result is normalized (sorted, adjacent edits merged), so it is a
// valid edit list for the original (util/byte_edit.hpp).
#include "editor_internal.hpp"

#include <algorithm>
#include <string>

namespace wheelfix::elf::editor {

namespace {

constexpr std::uint64_t kJoinGap = 8;

}  // namespace

void Overlay::write(std::uint64_t offset, std::vector<std::uint8_t> bytes) {
    if (bytes.empty()) return;
    for (const Write& other : writes_)
        if (offset < other.offset + other.bytes.size() && other.offset < offset + bytes.size())
            throw EditError("tables the edit rewrites overlap at offset " + std::to_string(offset) +
                            ": the file cannot be edited safely");
    writes_.push_back({offset, std::move(bytes)});
}

// Edits for the bytes of `write` that lie below `limit` and differ from the original.
void Overlay::diff_into(ByteEdits& edits, const Write& write, std::uint64_t limit) const {
    if (write.offset >= limit) return;
    const std::uint64_t count = std::min<std::uint64_t>(write.bytes.size(), limit - write.offset);
    std::uint64_t i = 0;
    while (i < count) {
        if (write.bytes[i] == original_[write.offset + i]) {
            ++i;
            continue;
        }
        const std::uint64_t start = i;
        std::uint64_t last_changed = i;
        for (; i < count && i - last_changed <= kJoinGap; ++i)
            if (write.bytes[i] != original_[write.offset + i]) last_changed = i;
        const auto first = write.bytes.begin() + static_cast<std::ptrdiff_t>(start);
        const auto end = write.bytes.begin() + static_cast<std::ptrdiff_t>(last_changed + 1);
        edits.push_back({write.offset + start, last_changed + 1 - start, {first, end}});
        i = last_changed + 1;
    }
}

ByteEdits Overlay::edits(std::uint64_t new_size) const {
    const std::uint64_t original_size = original_.size();
    const std::uint64_t limit = std::min(original_size, new_size);
    ByteEdits edits;
    for (const Write& write : writes_) diff_into(edits, write, limit);
    if (new_size > original_size) {
        std::vector<std::uint8_t> tail(new_size - original_size, 0);
        for (const Write& write : writes_) {
            const std::uint64_t end = std::min(write.offset + write.bytes.size(), new_size);
            for (std::uint64_t at = std::max(write.offset, original_size); at < end; ++at)
                tail[at - original_size] = write.bytes[at - write.offset];
        }
        edits.push_back({original_size, 0, std::move(tail)});
    } else if (new_size < original_size) {
        edits.push_back({new_size, original_size - new_size, {}});
    }
    normalize_edits(edits);
    return edits;
}

}  // namespace wheelfix::elf::editor
