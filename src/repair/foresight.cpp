// foresee_shim_links: the shim repair's pass will decide, decided before it from
// what each library member imports (foresight.hpp has the contract).
#include "wheelfix/repair/foresight.hpp"

#include "wheelfix/analysis/loader_view.hpp"
#include "wheelfix/repair/plan.hpp"
#include "wheelfix/repair/speculation.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/parallel_tasks.hpp"
#include "wheelfix/zip/codec.hpp"

#include <atomic>
#include <vector>

namespace wheelfix::repair {

namespace {

// One member examined for the shim on a partial read of it: a big deflated one
// (the pass will read it with bounded memory and speculate on it) on the reads its
// speculation makes, which find the dynamic tables far from the start whatever the
// bytes before them; others on the loader's view (what check reads). nullopt when
// a big one cannot be read so, or it is not ELF.
std::optional<ShimExamination> examine(const ShimPlanner& planner, const zip::Archive& archive,
                                       const zip::Member& member, std::atomic<int>& tail_reads_left) {
    if (member.method == zip::Method::deflated && member.size >= kBoundedFrom) {
        std::optional<ShimExamination> examined;
        if (!read_far_view(archive, member, [&](const elf::ElfFile& elf) { examined = planner.examine(member.name, elf); }))
            return std::nullopt;
        return examined;
    }
    const auto view = analysis::read_loader_view(archive, member, archive.path().string(), tail_reads_left);
    if (!view.bytes) return std::nullopt;
    return planner.examine(member.name, view.parse());
}

}  // namespace

std::optional<RelinkOptions> foresee_shim_links(const wheel::Wheel& wheel, const abi::SymbolIndex& index,
                                                const SymbolMap& maps, const std::string& runpath) {
    const zip::Archive& archive = wheel.archive();
    try {
        const auto libraries = analysis::library_members(archive);
        std::vector<std::uint64_t> sizes;
        for (const zip::Member* member : libraries) sizes.push_back(member->size);
        ShimPlanner planner(index, archive.path().string(), maps);
        std::vector<std::optional<ShimExamination>> examined(libraries.size());
        std::atomic<int> tail_reads_left{analysis::kMaxTailReads};
        run_tasks(sizes, [&](std::size_t i) { examined[i] = examine(planner, archive, *libraries[i], tail_reads_left); });
        for (auto& one : examined)
            if (one) planner.take(std::move(*one));
        ShimResult ignored;
        const auto library = planner.finish(ignored, runpath);
        if (!library) return std::nullopt;
        return shim_link_options(wheel, *library);
    } catch (const InputError&) {
    } catch (const elf::ElfError&) {
    } catch (const BytesNotKept&) {
    } catch (const zip::CodecError&) {
    }
    return std::nullopt;
}

}  // namespace wheelfix::repair
