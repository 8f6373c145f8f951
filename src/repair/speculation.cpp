// speculate_edits: a big member's edits planned from its start and the ranges far
// from it (speculation.hpp has the contract and why it cannot make a wrong byte).
#include "wheelfix/repair/speculation.hpp"

#include "wheelfix/elf/dynamic_array.hpp"
#include "wheelfix/elf/streamed_elf.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/zip/codec.hpp"
#include "wheelfix/zip/far_read.hpp"

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace wheelfix::repair {

namespace {

struct Abandon {};  // the speculation gives up: nullopt

// The program headers of the member's head, for recognising PT_DYNAMIC far from
// it (elf/dynamic_array.hpp); nullopt when the head does not hold them.
std::optional<elf::ElfFile> head_headers(const elf::StreamedElf& view) {
    try {
        return elf::ElfFile::parse_headers(view.image(), &view.kept());
    } catch (const elf::ElfError&) {
    } catch (const BytesNotKept&) {
    }
    return std::nullopt;
}

// PT_DYNAMIC's segment, when `headers` has one that holds [begin, end).
const elf::ProgramHeader* dynamic_holding(const elf::ElfFile& headers, std::uint64_t begin, std::uint64_t end) {
    for (const auto& ph : headers.program_headers())
        if (ph.type == PT_DYNAMIC && begin >= ph.offset && end - ph.offset <= ph.filesz) return &ph;
    return nullptr;
}

// FarReader's locator for PT_DYNAMIC: the first place the inflated bytes read as
// its dynamic array gives the entry's offset. A wrong answer costs only the second
// read the speculation saves (speculation.hpp): nothing here is trusted.
zip::FarReader::Locator dynamic_locator(elf::ElfFile headers, std::uint64_t dynamic_offset) {
    return [headers = std::move(headers), dynamic_offset](std::span<const std::uint8_t> bytes,
                                                          std::uint64_t count) -> std::optional<std::uint64_t> {
        const auto found = elf::find_dynamic_array(headers, bytes);
        if (!found || count + *found > dynamic_offset) return std::nullopt;
        return dynamic_offset - (count + *found);
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
        const auto headers = head_headers(view_);
        for (const auto& [begin, end] : ranges.ranges()) {
            ByteRanges range;
            range.add(begin, end);
            reader_for(begin, end, headers).read(range, [&](std::span<const std::uint8_t> chunk, std::uint64_t at) {
                view_.fill(at, chunk);
            });
        }
    }

private:
    zip::FarReader& reader_for(std::uint64_t begin, std::uint64_t end, const std::optional<elf::ElfFile>& headers) {
        for (auto& far : far_)
            if (far.known_from() <= begin && far.in_memory(begin, end)) return far;
        const elf::ProgramHeader* dynamic = headers ? dynamic_holding(*headers, begin, end) : nullptr;
        auto opened = zip::FarReader::open(archive_, member_, begin,
                                           dynamic ? dynamic_locator(*headers, dynamic->offset) : zip::FarReader::Locator{});
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

// use(parse) until nothing it reads is missing; false when that takes more rounds
// than read_streamed would.
bool use_on(SpeculativeView& view, const FarViewUse& use) {
    for (int round = 1; round <= elf::StreamedElf::kMaxRounds; ++round) {
        try {
            use(view.parse());
            return true;
        } catch (const BytesNotKept& missing) {
            view.fetch(missing);
        }
    }
    return false;
}

}  // namespace

bool read_far_view(const zip::Archive& archive, const zip::Member& member, const FarViewUse& use) {
    if (member.method != zip::Method::deflated) return false;
    try {
        SpeculativeView view(archive, member);
        return view.is_elf() && use_on(view, use);
    } catch (const Abandon&) {
    } catch (const elf::ElfError&) {
    } catch (const elf::EditError&) {
    } catch (const InputError&) {
    } catch (const zip::CodecError&) {
    }
    return false;
}

std::optional<ByteEdits> speculate_edits(const zip::Archive& archive, const zip::Member& member,
                                         const RequestFor& request_for) {
    std::optional<ByteEdits> edits;
    const bool read = read_far_view(archive, member, [&](const elf::ElfFile& elf) {
        edits.reset();
        const auto request = request_for(elf);
        if (!request) return;
        auto plan = elf::plan_edits(elf, *request);
        if (!plan.edits.empty()) edits = std::move(plan.edits);
    });
    return read ? std::move(edits) : std::nullopt;
}

}  // namespace wheelfix::repair
