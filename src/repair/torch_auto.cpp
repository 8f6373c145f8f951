// repair --torch auto: the matrix, the range, the torch to repair against
// (torch_auto.hpp has the contract).
#include "wheelfix/repair/torch_auto.hpp"

#include <filesystem>
#include <memory>
#include <string_view>

namespace wheelfix::repair {

namespace {

analysis::ReleaseMatrix auto_releases(const std::string& wheel, const std::vector<std::string>& atlases,
                                      analysis::PinMode mode, bool keep_newest, const analysis::TorchLoader& load) {
    const analysis::Targets targets = analysis::read_targets(wheel);
    analysis::ReleaseRequest request = analysis::release_request("", atlases);
    request.torches.clear();  // real torches are what the range's newest release is tested on, not columns
    request.pin_mode = mode;
    return analysis::check_releases(targets, wheel, request, load, keep_newest);
}

TorchAutoPlan plan_torch_auto(const std::string& wheel, const std::vector<std::string>& atlases,
                              const std::vector<std::string>& real_torches, analysis::PinMode mode, bool write_pin,
                              const RepairOptions& base, const analysis::TorchLoader& load) {
    TorchAutoPlan plan;
    plan.input = wheel;
    plan.options = base;
    plan.releases = auto_releases(wheel, atlases, mode, true, load);
    const analysis::TorchRequirement& requirement = plan.releases.requirement;
    if (!requirement.any) return plan;
    plan.options.label_torch = wheel::Version::parse(requirement.lowest);
    if (write_pin) plan.options.pin_specifier = requirement.pin;
    abi::IndexOptions roots;
    roots.roots = plan.releases.roots;
    auto real = analysis::release_torch(real_torches, requirement.highest, roots, load);
    std::error_code ignored;
    if (real) {
        plan.against = real->path;
        plan.index = std::move(real->index);
        plan.installed = std::filesystem::is_directory(real->path, ignored);
        if (plan.installed) plan.options.torch_dir = real->path;
        else plan.options.load_test_unavailable = "torch " + requirement.highest + " is given as " + real->path +
                                                  ", not an installed torch directory (--torch-from DIR to load-test)";
    } else {
        plan.against = "the atlas's " + plan.releases.newest->torch_version + " (indexed from " +
                       plan.releases.newest->source + ")";
        plan.options.load_test_unavailable = "no installed torch " + requirement.highest +
                                             " given: the atlas holds symbols, not libraries (shimmed from its "
                                             "symbols; --torch-from DIR or WHEELFIX_TORCH=DIR to load-test)";
        plan.index = std::move(*plan.releases.newest);
    }
    return plan;
}

// repair_wheels' WheelSetup for `repair --torch auto`: plan_torch_auto for wheel i on
// the worker, kept in plans[i] without its torch.
WheelSetup auto_setup(const std::vector<std::string>& wheels, const std::vector<std::string>& atlases,
                      const std::vector<std::string>& real_torches, analysis::PinMode mode, bool write_pin,
                      const RepairOptions& base, const analysis::TorchLoader& load,
                      std::vector<std::optional<TorchAutoPlan>>& plans) {
    return [&wheels, &atlases, real_torches, mode, write_pin, &base, load,
            &plans](std::size_t i) -> std::variant<WheelJob, NotRepaired> {
        TorchAutoPlan plan = plan_torch_auto(wheels[i], atlases, real_torches, mode, write_pin, base, load);
        if (plan.unloadable()) {
            const std::string why = plan.releases.requirement.finding;
            plans[i] = std::move(plan);
            return NotRepaired{wheels[i], why};
        }
        auto index = std::make_shared<const abi::SymbolIndex>(std::move(plan.index));
        RepairOptions options = plan.options;
        plan.index = abi::SymbolIndex{};  // the report keeps the matrix, not the torch
        plans[i] = std::move(plan);
        return WheelJob{std::move(index), std::move(options)};
    };
}

}  // namespace

std::vector<std::string> real_torches(const std::vector<std::string>& torch_from, const std::string& environment) {
    std::vector<std::string> torches = analysis::release_request("", torch_from).torches;
    if (!environment.empty() && environment != "auto") torches.push_back(environment);
    return torches;
}

RetagPick pick_retag_torch(const std::string& wheel, const std::vector<std::string>& torches, analysis::PinMode mode,
                           const analysis::TorchLoader& load) {
    RetagPick pick;
    if (torches.empty() || !analysis::release_request("all", torches).atlases.empty())
        pick.releases = auto_releases(wheel, analysis::release_request("", torches).atlases, mode, false, load);
    else  // torch directories, wheels or indexes alone: their matrix, and the same verdict
        pick.releases = analysis::check_torches(analysis::read_targets(wheel), wheel, torches, mode, load);
    pick.report = pick.releases->report;
    pick.requirement = pick.releases->requirement;
    if (pick.requirement.any) pick.torch = wheel::Version::parse(pick.requirement.lowest);
    return pick;
}

RepairBatch repair_batch(const std::vector<std::string>& wheels, const RepairTorch& torch, const RepairOptions& options,
                         const analysis::TorchLoader& load,
                         const std::function<abi::SymbolIndex(const std::string&)>& load_index,
                         const std::filesystem::path& out_dir, unsigned jobs) {
    RepairBatch batch;
    batch.plans.resize(wheels.size());
    batch.automatic = torch.torch == "auto";
    WheelSetup setup;
    if (batch.automatic) {
        setup = auto_setup(wheels, torch.torch_from, torch.real_torches, torch.pin.mode(),
                           torch.pin.kind != PinRequest::Kind::none, options, load, batch.plans);
    } else {
        auto index = std::make_shared<const abi::SymbolIndex>(torch.torch.empty() ? abi::SymbolIndex{} : load_index(torch.torch));
        setup = [index, &options](std::size_t) -> std::variant<WheelJob, NotRepaired> { return WheelJob{index, options}; };
    }
    batch.outcomes = repair_wheels(wheels, setup, options, out_dir, jobs);
    return batch;
}

}  // namespace wheelfix::repair
