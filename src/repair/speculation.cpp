// speculate_edits: a big member's edits planned on its far view (speculation.hpp has
// the contract and why it cannot make a wrong byte).
#include "wheelfix/repair/speculation.hpp"

#include "wheelfix/wheel/member_reader.hpp"

#include <optional>
#include <utility>

namespace wheelfix::repair {

std::optional<ByteEdits> speculate_edits(const zip::Archive& archive, const zip::Member& member,
                                         const RequestFor& request_for) {
    std::optional<ByteEdits> edits;
    const bool read = wheel::read_far_view(archive, member, [&](const elf::ElfFile& elf) {
        edits.reset();
        const auto request = request_for(elf);
        if (!request) return;
        auto plan = elf::plan_edits(elf, *request);
        if (!plan.edits.empty()) edits = std::move(plan.edits);
    });
    return read ? std::move(edits) : std::nullopt;
}

}  // namespace wheelfix::repair
