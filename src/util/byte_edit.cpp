// ByteEdit lists: validation, size, application.
#include "wheelfix/util/byte_edit.hpp"

#include <algorithm>

namespace wheelfix {

std::string edits_problem(const ByteEdits& edits, std::uint64_t original_size) {
    std::uint64_t end_of_previous = 0;
    for (std::size_t i = 0; i < edits.size(); ++i) {
        const auto& edit = edits[i];
        if (edit.offset > original_size || edit.length > original_size - edit.offset)
            return "edit at offset " + std::to_string(edit.offset) + " runs past the end of the original";
        if (i > 0 && edit.offset < end_of_previous)
            return "edits overlap or are out of order at offset " + std::to_string(edit.offset);
        end_of_previous = edit.offset + edit.length;
    }
    return {};
}

std::uint64_t edited_size(const ByteEdits& edits, std::uint64_t original_size) {
    std::uint64_t size = original_size;
    for (const auto& edit : edits) size = size - edit.length + edit.bytes.size();
    return size;
}

std::vector<std::uint8_t> apply_edits(std::span<const std::uint8_t> original, const ByteEdits& edits) {
    std::vector<std::uint8_t> out;
    out.reserve(edited_size(edits, original.size()));
    std::uint64_t cursor = 0;
    for (const auto& edit : edits) {
        out.insert(out.end(), original.begin() + cursor, original.begin() + edit.offset);
        out.insert(out.end(), edit.bytes.begin(), edit.bytes.end());
        cursor = edit.offset + edit.length;
    }
    out.insert(out.end(), original.begin() + cursor, original.end());
    return out;
}

void normalize_edits(ByteEdits& edits) {
    std::stable_sort(edits.begin(), edits.end(), [](const ByteEdit& a, const ByteEdit& b) { return a.offset < b.offset; });
    ByteEdits merged;
    for (auto& edit : edits) {
        if (edit.length == 0 && edit.bytes.empty()) continue;
        if (!merged.empty() && merged.back().offset + merged.back().length == edit.offset) {
            auto& last = merged.back();
            last.length += edit.length;
            last.bytes.insert(last.bytes.end(), edit.bytes.begin(), edit.bytes.end());
            continue;
        }
        merged.push_back(std::move(edit));
    }
    edits = std::move(merged);
}

}  // namespace wheelfix
