// shim_wheel: the shim foreseen, every extension taken by the ShimPlanner during the
// one read of the wheel, then the NEEDED/RUNPATH edits of the extensions that need
// the shim planned and the wheel written once.
#include "wheelfix/repair/shim_wheel.hpp"
#include "wheelfix/repair/retag.hpp"

#include "wheelfix/repair/foresight.hpp"
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
    // The shim foreseen before the read (foresight.hpp): the extensions that need it
    // are edited as they are read (a big one in its one pass), checked afterwards.
    ForesightRequest request;
    request.index = &index;
    request.maps = maps;
    const auto foreseen = foresee(wheel, request).shim_links;
    std::vector<std::string> pending;  // the extensions that need the shim, kept until its name is known
    std::vector<std::string> early;    // the ones edited with the foreseen shim's links, kept in case it differs
    PlanHooks hooks;
    hooks.on_elf = [&](const std::string& member, const elf::ElfFile& elf, WheelPlan& steps) {
        ++result.elf_members;
        if (!planner.take(member, elf)) return false;
        if (!foreseen) {
            pending.push_back(member);
            return true;
        }
        steps.edit_elf.push_back({member, request_for(with_links({}, *foreseen), wheel::directory_depth(member))});
        early.push_back(member);
        return true;
    };
    hooks.speculate = [&](const std::string& member, const elf::ElfFile& elf) -> std::optional<elf::EditRequest> {
        if (!foreseen || !planner.examine(member, elf).needs_shim()) return std::nullopt;
        return request_for(with_links({}, *foreseen), wheel::directory_depth(member));
    };
    hooks.after_read = [&](WheelPlan& steps) {
        auto library = planner.finish(result);
        const auto links = library ? std::optional(shim_links(wheel, *library)) : std::nullopt;
        const bool as_foreseen = links && links == foreseen;
        for (const auto& member : early) {
            if (as_foreseen) continue;
            std::erase_if(steps.edit_elf, [&](const ElfEditStep& step) { return step.member == member; });
            steps.edit_elf.push_back({member, links ? request_for(with_links({}, *links), wheel::directory_depth(member)) : elf::EditRequest{},
                                      true});  // edited again, with the shim written (none: its edits undone)
        }
        if (!library) return;
        result.shim_member = shim_directory(wheel) + "/" + library->file_name;
        for (const auto& member : pending)
            steps.edit_elf.push_back({member, request_for(with_links({}, *links), wheel::directory_depth(member))});
        steps.add.push_back({result.shim_member, std::move(library->bytes), 0100755});
        library->bytes.clear();
        result.shim = std::move(library);
        auto pinned = pin_for_torch(wheel, wheel::Version::parse(index.torch_version));
        steps.dist_info.replaced["METADATA"] = std::move(pinned.text);
        result.requirements = std::move(pinned.changes);
    };
    ExecuteOptions execute;
    execute.dry_run = dry_run;
    auto executed = execute_plan(wheel, plan, hooks, execute);
    if (dry_run) result.plan = describe_plan(wheel, plan, executed);
    result.output = executed.output;
    result.changed = std::move(executed.changed);
    return result;
}

}  // namespace wheelfix::repair
