// speculate_edits: a big member's edits planned from its start and the ranges far
// from it (speculation.hpp has the contract and why it cannot make a wrong byte).
#include "wheelfix/repair/speculation.hpp"

#include "wheelfix/elf/streamed_elf.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/zip/codec.hpp"
#include "wheelfix/zip/far_read.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace wheelfix::repair {

namespace {

struct Abandon {};  // the speculation gives up: nullopt

// ---- where PT_DYNAMIC lies in bytes inflated far from the member's start ----------

constexpr std::uint32_t kLoadSegment = 1, kDynamicSegment = 2;   // PT_LOAD, PT_DYNAMIC
constexpr std::int64_t kStrtab = 5, kSymtab = 6, kSyment = 11;   // DT_STRTAB, DT_SYMTAB, DT_SYMENT
constexpr std::uint64_t kMaxDynamicSize = std::uint64_t(16) << 10; // what FarReader's locator overlap can hold

std::uint64_t little_endian(std::span<const std::uint8_t> bytes, std::size_t at, int width) {
    std::uint64_t value = 0;
    for (int i = width - 1; i >= 0; --i) value = (value << 8) | bytes[at + static_cast<std::size_t>(i)];
    return value;
}

// PT_DYNAMIC's file offset and size, and the PT_LOAD address ranges, from the
// program headers of a 64-bit little-endian ELF file's head (nullopt otherwise).
struct DynamicAnchor {
    std::uint64_t offset = 0, size = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> loads;  // [vaddr, vaddr + memsz)

    bool maps(std::uint64_t address) const {
        return std::any_of(loads.begin(), loads.end(), [&](const auto& load) { return address >= load.first && address < load.second; });
    }
};

std::optional<DynamicAnchor> dynamic_anchor(std::span<const std::uint8_t> image, const ByteRanges& kept) {
    constexpr std::size_t kHeader = 64, kEntry = 56;
    if (image.size() < kHeader || !kept.covers(0, kHeader) || image[4] != 2 || image[5] != 1) return std::nullopt;
    const std::uint64_t table = little_endian(image, 32, 8), entry = little_endian(image, 54, 2), count = little_endian(image, 56, 2);
    if (entry != kEntry || table > image.size() || count > (image.size() - table) / kEntry || !kept.covers(table, table + count * kEntry))
        return std::nullopt;
    DynamicAnchor anchor;
    bool dynamic = false;
    for (std::uint64_t i = 0; i < count; ++i) {
        const auto at = static_cast<std::size_t>(table + i * kEntry);
        const auto type = static_cast<std::uint32_t>(little_endian(image, at, 4));
        const std::uint64_t vaddr = little_endian(image, at + 16, 8), memsz = little_endian(image, at + 40, 8);
        if (type == kLoadSegment && vaddr <= UINT64_MAX - memsz) anchor.loads.emplace_back(vaddr, vaddr + memsz);
        if (type == kDynamicSegment) {
            dynamic = true;
            anchor.offset = little_endian(image, at + 8, 8);
            anchor.size = little_endian(image, at + 32, 8);
        }
    }
    if (!dynamic || anchor.size < 64 || anchor.size > kMaxDynamicSize) return std::nullopt;
    return anchor;
}

bool known_dynamic_tag(std::uint64_t tag) {
    return (tag >= 1 && tag <= 37) || (tag >= 0x6ffffd00 && tag <= 0x6fffffff) || (tag >= 0x7ffffffd && tag <= 0x7fffffff);
}

// Whether `bytes` (anchor.size of them) read as a dynamic array: known tags up to
// a DT_NULL, at least four of them, DT_STRTAB and DT_SYMTAB at mapped addresses,
// DT_SYMENT (when there) 24, and a small first tag (linkers put DT_NEEDED first).
bool looks_dynamic(std::span<const std::uint8_t> bytes, const DynamicAnchor& anchor) {
    if (little_endian(bytes, 0, 8) > 37) return false;
    bool strtab = false, symtab = false;
    for (std::size_t entry = 0; entry + 16 <= bytes.size(); entry += 16) {
        const std::uint64_t tag = little_endian(bytes, entry, 8), value = little_endian(bytes, entry + 8, 8);
        if (tag == 0) return strtab && symtab && entry >= 4 * 16;
        if (!known_dynamic_tag(tag)) return false;
        if (tag == kStrtab || tag == kSymtab) {
            if (!anchor.maps(value)) return false;
            (tag == kStrtab ? strtab : symtab) = true;
        }
        if (tag == kSyment && value != 24) return false;
    }
    return false;
}

// FarReader's locator for PT_DYNAMIC: the first place the inflated bytes read as
// its dynamic array gives the entry's offset. A wrong answer costs only the second
// read the speculation saves (speculation.hpp): nothing here is trusted.
zip::FarReader::Locator dynamic_locator(const DynamicAnchor& anchor) {
    return [anchor](std::span<const std::uint8_t> bytes, std::uint64_t count) -> std::optional<std::uint64_t> {
        const auto size = static_cast<std::size_t>(anchor.size);
        for (std::size_t at = 0; at + size <= bytes.size(); ++at) {
            if (bytes[at + 7] != 0 || bytes[at + 1] != 0 || bytes[at] == 0) continue;  // a small first tag, fast
            if (!looks_dynamic(bytes.subspan(at, size), anchor)) continue;
            if (count + at > anchor.offset) return std::nullopt;
            return anchor.offset - (count + at);
        }
        return std::nullopt;
    };
}

// The member's first `count` inflated bytes streamed into `view` (the inflate stops there).
void read_head(const zip::Archive& archive, const zip::Member& member, std::uint64_t count, elf::StreamedElf& view) {
    struct Enough {};
    std::uint64_t seen = 0;
    try {
        archive.stream(member, [&](std::span<const std::uint8_t> chunk) {
            view.consume(chunk);
            seen += chunk.size();
            if (seen >= count) throw Enough{};
        });
    } catch (const Enough&) {
    }
}

// The partial image with the ranges past the head that its readers want.
class SpeculativeView {
public:
    SpeculativeView(const zip::Archive& archive, const zip::Member& member)
        : archive_(archive), member_(member), view_(member.size, elf::StreamedElf::Needs::dynamic_linking),
          head_end_(std::min(kSpeculativeHead, member.size)) {
        read_head(archive, member, head_end_, view_);
    }

    bool is_elf() const { return view_.is_elf(); }
    elf::ElfFile parse() const { return view_.parse(); }

    // What a reader found missing (with all that is wanted and not kept), from
    // past the head; a range the head should have held was learned too late. Each
    // range is read by a FarReader that holds it in memory already, or by a new one
    // entered near it: within PT_DYNAMIC, placed by its locator (its decode stops
    // there); elsewhere (the section headers, at the end), decoding to the end.
    void fetch(const BytesNotKept& missing) {
        const ByteRanges ranges = view_.to_fetch(missing);
        if (ranges.empty() || ranges.ranges().front().first < head_end_) throw Abandon{};
        const auto anchor = dynamic_anchor(view_.image(), view_.kept());
        for (const auto& [begin, end] : ranges.ranges()) {
            ByteRanges range;
            range.add(begin, end);
            reader_for(begin, end, anchor).read(range, [&](std::span<const std::uint8_t> chunk, std::uint64_t at) {
                view_.fill(at, chunk);
            });
        }
    }

private:
    zip::FarReader& reader_for(std::uint64_t begin, std::uint64_t end, const std::optional<DynamicAnchor>& anchor) {
        for (auto& far : far_)
            if (far.known_from() <= begin && far.in_memory(begin, end)) return far;
        const bool dynamic = anchor && begin >= anchor->offset && end <= anchor->offset + anchor->size;
        auto opened = zip::FarReader::open(archive_, member_, begin, dynamic ? dynamic_locator(*anchor) : zip::FarReader::Locator{});
        if (!opened || begin < opened->known_from()) throw Abandon{};
        far_.push_back(std::move(*opened));
        return far_.back();
    }

    const zip::Archive& archive_;
    const zip::Member& member_;
    elf::StreamedElf view_;
    std::uint64_t head_end_;
    std::vector<zip::FarReader> far_;
};

std::optional<ByteEdits> plan_on(SpeculativeView& view, const RequestFor& request_for) {
    for (int round = 1; round <= elf::StreamedElf::kMaxRounds; ++round) {
        try {
            const elf::ElfFile elf = view.parse();
            const auto request = request_for(elf);
            if (!request) return std::nullopt;
            auto plan = elf::plan_edits(elf, *request);
            if (plan.edits.empty()) return std::nullopt;
            return std::move(plan.edits);
        } catch (const BytesNotKept& missing) {
            view.fetch(missing);
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<ByteEdits> speculate_edits(const zip::Archive& archive, const zip::Member& member,
                                         const RequestFor& request_for) {
    if (member.method != zip::Method::deflated) return std::nullopt;
    try {
        SpeculativeView view(archive, member);
        if (!view.is_elf()) return std::nullopt;
        return plan_on(view, request_for);
    } catch (const Abandon&) {
    } catch (const elf::ElfError&) {
    } catch (const elf::EditError&) {
    } catch (const InputError&) {
    } catch (const zip::CodecError&) {
    }
    return std::nullopt;
}

}  // namespace wheelfix::repair
