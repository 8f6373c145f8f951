// foresee: the shim and grafts the pass will decide, decided before it from each
// library member's linkage and imports (foresight.hpp has the contract).
#include "wheelfix/repair/foresight.hpp"

#include "wheelfix/analysis/elf_report.hpp"
#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/repair/plan.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/parallel_tasks.hpp"
#include "wheelfix/wheel/member_reader.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace wheelfix::repair {

namespace {

// What the foresight learns of one member.
struct Seen {
    std::optional<analysis::ElfReport> linkage;
    std::optional<ShimExamination> shim;
};

// One member read as foresight.hpp says: a big deflated one on its speculation's
// reads, others on the loader's view; nothing when it cannot be read so.
Seen look(const ShimPlanner* planner, const zip::Archive& archive, const zip::Member& member,
          std::atomic<int>& tail_reads_left) {
    Seen seen;
    auto learn = [&](const elf::ElfFile& elf) {
        seen.linkage = analysis::analyze_linking(member.name, elf, wheel::directory_depth(member.name));
        if (planner) seen.shim = planner->examine(member.name, elf);
    };
    try {
        if (member.method == zip::Method::deflated && member.size >= kBoundedFrom) {
            if (!wheel::read_far_view(archive, member, learn)) return {};
            return seen;
        }
        const auto view = wheel::read_loader_view(archive, member, archive.path().string(), tail_reads_left);
        if (view.is_elf()) learn(view.parse());
    } catch (const std::runtime_error&) {  // an input, ELF, codec or reading error: the pass reports it
        return {};
    }
    return seen;
}

std::optional<Links> foreseen_shim_links(const wheel::Wheel& wheel, ShimPlanner& planner, std::vector<Seen>& seen,
                                         const std::string& runpath) {
    try {
        for (auto& one : seen)
            if (one.shim) planner.take(std::move(*one.shim));
        ShimResult ignored;
        const auto library = planner.finish(ignored, runpath);
        if (library) return shim_links(wheel, *library);
    } catch (const InputError&) {
    }
    return std::nullopt;
}

std::optional<GraftPlan> grafts(const wheel::Wheel& wheel, std::vector<Seen>& seen, GraftOptions options) {
    std::vector<analysis::ElfReport> reports;
    for (auto& one : seen)
        if (one.linkage) reports.push_back(std::move(*one.linkage));
    options.ask_owner = false;  // the SBOM is the pass's; links need no owner
    try {
        auto plan = plan_grafts(wheel, reports, options, shim_directory(wheel));
        plan.added.clear();
        return plan;
    } catch (const InputError&) {
    }
    return std::nullopt;
}

}  // namespace

bool grafts_worth_foreseeing(const wheel::Wheel& wheel) {
    const auto libraries = analysis::library_members(wheel.archive());
    return libraries.size() > 1 && std::any_of(libraries.begin(), libraries.end(), [](const zip::Member* member) {
               return member->method == zip::Method::deflated && member->size >= kBoundedFrom;
           });
}

Foresight foresee(const wheel::Wheel& wheel, const ForesightRequest& request) {
    static const bool unsighted = [] {  // the paths that wait, on request (foresight.hpp)
        const char* value = std::getenv("WHEELFIX_TEST_NO_FORESIGHT");
        return value != nullptr && std::string_view(value) == "1";
    }();
    if (unsighted) return {};
    const zip::Archive& archive = wheel.archive();
    const auto libraries = analysis::library_members(archive);
    std::vector<std::uint64_t> sizes;
    for (const zip::Member* member : libraries) sizes.push_back(member->size);
    std::optional<ShimPlanner> planner;
    if (request.index) planner.emplace(*request.index, archive.path().string(), request.maps);
    std::vector<Seen> seen(libraries.size());
    std::atomic<int> tail_reads_left{wheel::kMaxTailReads};
    run_tasks(sizes, [&](std::size_t i) { seen[i] = look(planner ? &*planner : nullptr, archive, *libraries[i], tail_reads_left); });
    Foresight foresight;
    if (planner) foresight.shim_links = foreseen_shim_links(wheel, *planner, seen, request.runpath);
    if (request.graft) foresight.grafts = grafts(wheel, seen, *request.graft);
    return foresight;
}

}  // namespace wheelfix::repair
