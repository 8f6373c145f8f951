// shim_wheel: shim's decision about each extension (shim_edits: the shim's links
// when it needs the shim) and the whole-wheel step (the shim built from every
// extension the ShimPlanner took, METADATA's pin), run by the one executor.
#include "wheelfix/repair/shim_wheel.hpp"
#include "wheelfix/repair/retag.hpp"

#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/repair/foresight.hpp"
#include "wheelfix/repair/variant.hpp"
#include "wheelfix/wheel/variant.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/wheel/rewrite.hpp"

namespace wheelfix::repair {

std::string shim_directory(const wheel::Wheel& wheel) { return wheel.filename().distribution + ".libs"; }

Links shim_links(const wheel::Wheel& wheel, const abi::ShimLibrary& library) {
    Links options;
    options.add_needed = {library.soname};
    options.add_rpath = {"{root}/" + shim_directory(wheel)};
    return options;
}

Links add_shim(const wheel::Wheel& wheel, abi::ShimLibrary library, WheelPlan& plan, ShimResult& result) {
    Links links = shim_links(wheel, library);
    result.shim_member = shim_directory(wheel) + "/" + library.file_name;
    plan.add.push_back({result.shim_member, std::move(library.bytes), 0100755});
    library.bytes.clear();
    result.shim = std::move(library);
    return links;
}

namespace {

// What shim's decision reads of an extension: where it sits and whether it imports
// torch functions the target torch lacks.
struct ShimView : MemberView {
    int depth = 0;
    bool needs_shim = false;
};

std::shared_ptr<const MemberView> shim_view(const std::string& member, bool needs_shim) {
    auto view = std::make_shared<ShimView>();
    view->depth = wheel::directory_depth(member);
    view->needs_shim = needs_shim;
    view->reads_wheel = needs_shim;
    return view;
}

// The shim's links: before the whole read (whole false) the foreseen shim's,
// nullopt when none was foreseen; after it, the shim written (nullopt: none).
struct ShimFacts : WheelFacts {
    ShimFacts(bool whole_wheel, std::optional<Links> links) : whole(whole_wheel), shim(std::move(links)) {}
    bool whole = false;
    std::optional<Links> shim;
};

// shim's decision about one extension: the shim's SONAME as NEEDED and its
// directory on the search path when it needs the shim and one is written.
MemberEdits shim_edits(const ShimView& view, const ShimFacts* facts) {
    if (!view.needs_shim) return {};
    if (!facts || (!facts->whole && !facts->shim)) return {std::nullopt, true};
    if (!facts->shim) return {};
    return {request_for(with_links({}, *facts->shim), view.depth)};
}

}  // namespace

ShimResult shim_wheel(const std::filesystem::path& wheel_path, const std::filesystem::path& torch,
                      const std::filesystem::path& out_dir, const SymbolMap& maps, bool overwrite, bool dry_run) {
    auto index = abi::load_index(torch);
    if (index.torch_version.empty())
        throw InputError(torch.string(), "torch version unknown (no torch/version.py); a shim is made for one version");
    auto wheel = wheel::Wheel::open(wheel_path);
    ShimResult result;
    WheelPlan plan;
    plan.output = out_dir / wheel_path.filename();
    plan.overwrite = overwrite;

    ShimPlanner planner(index, wheel_path.string(), maps);
    // A variant wheel's variant is derived again for the output (repair/variant.hpp
    // label_output): every ELF member analysed on its one parse, as repair does.
    const bool variant = wheel::is_variant_wheel(wheel);
    std::vector<analysis::ElfReport> elves;
    PlanHooks hooks;
    MemberDecision& decision = hooks.decision;
    if (variant) decision.view_reads = wheel::Keeps::analysis;
    decision.view = [&](const std::string& member, const elf::ElfFile& elf) {
        return shim_view(member, planner.examine(member, elf).needs_shim());
    };
    decision.observe = [&](const std::string& member, const elf::ElfFile& elf) {
        if (variant) {
            auto report = analysis::analyze_member(wheel, member, elf);
            std::erase_if(elves, [&](const analysis::ElfReport& seen) { return seen.name == member; });
            elves.push_back(std::move(report));
        }
        ++result.elf_members;
        return shim_view(member, planner.take(member, elf));
    };
    decision.edits_for = [](const MemberView& view, const WheelFacts* facts) {
        return shim_edits(static_cast<const ShimView&>(view), static_cast<const ShimFacts*>(facts));
    };
    decision.foresee = [&]() -> std::shared_ptr<const WheelFacts> {
        ForesightRequest request;
        request.index = &index;
        request.maps = maps;
        return std::make_shared<ShimFacts>(false, foresee(wheel, request).shim_links);
    };
    decision.decide = [&](WheelPlan& steps, const PlanResult& read) -> std::shared_ptr<const WheelFacts> {
        std::optional<Links> links;
        if (auto library = planner.finish(result)) {
            links = add_shim(wheel, std::move(*library), steps, result);
            auto pinned = pin_for_torch(wheel, wheel::Version::parse(index.torch_version));
            steps.dist_info.replaced["METADATA"] = std::move(pinned.text);
            result.requirements = std::move(pinned.changes);
        }
        if (variant)
            result.variant = label_output(wheel, analysis::wheel_report(wheel, read.digests, std::move(elves)), steps, std::nullopt);
        return std::make_shared<ShimFacts>(true, std::move(links));
    };
    ExecuteOptions execute;
    execute.dry_run = dry_run;
    auto executed = execute_plan(wheel, plan, hooks, execute);
    if (dry_run) result.plan = describe_plan(wheel, plan, executed);
    result.output = executed.output;
    if (result.variant) result.variant->output = executed.output;
    result.changed = std::move(executed.changed);
    return result;
}

}  // namespace wheelfix::repair
