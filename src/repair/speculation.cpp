// speculate_edits: a big member's edits planned from its start and the ranges far
// from it (speculation.hpp has the contract and why it cannot make a wrong byte).
#include "wheelfix/repair/speculation.hpp"

#include "wheelfix/elf/streamed_elf.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/zip/codec.hpp"
#include "wheelfix/zip/far_read.hpp"

#include <algorithm>

namespace wheelfix::repair {

namespace {

struct Abandon {};  // the speculation gives up: nullopt

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
    // past the head; a range the head should have held was learned too late.
    void fetch(const BytesNotKept& missing) {
        const ByteRanges ranges = view_.to_fetch(missing);
        if (ranges.empty()) throw Abandon{};
        const std::uint64_t lowest = ranges.ranges().front().first;
        if (lowest < head_end_) throw Abandon{};
        if (!far_) far_ = zip::FarReader::open(archive_, member_, lowest);
        if (!far_ || lowest < far_->known_from()) throw Abandon{};
        far_->read(ranges, [&](std::span<const std::uint8_t> chunk, std::uint64_t at) { view_.fill(at, chunk); });
    }

private:
    const zip::Archive& archive_;
    const zip::Member& member_;
    elf::StreamedElf view_;
    std::uint64_t head_end_;
    std::optional<zip::FarReader> far_;
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
