// The release matrix of a wheel (torch_releases.hpp has the contract).
#include "wheelfix/analysis/torch_releases.hpp"

#include "wheelfix/abi/atlas.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/wheel/filename.hpp"
#include "wheelfix/wheel/version.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>

namespace wheelfix::analysis {

namespace {

std::string machine_arch() {
#if defined(__aarch64__)
    return "aarch64";
#else
    return "x86_64";
#endif
}

}  // namespace

WheelFacts wheel_facts(const std::string& input) {
    WheelFacts facts;
    const std::string name = std::filesystem::path(input).filename().string();
    if (!name.ends_with(".whl")) {
        facts.arch = machine_arch();
        return facts;
    }
    const wheel::WheelFilename parsed = wheel::parse_filename(name);
    std::string tag;
    abi::tags_from_wheel_name(name, facts.arch, tag);
    if (facts.arch.empty()) facts.arch = machine_arch();
    for (const std::string& abi_tag : parsed.abi_tags)
        if (abi_tag.starts_with("cp")) facts.python_tag = abi_tag;
    if (const auto version = wheel::Version::try_parse(parsed.version))
        for (const std::string& segment : version->local_segments())
            if (segment.size() > 2 && segment.starts_with("cu") &&
                segment.find_first_not_of("0123456789", 2) == std::string::npos)
                facts.cuda = segment;
    return facts;
}

ReleaseRequest release_request(const std::string& spec, const std::vector<std::string>& torch_paths) {
    ReleaseRequest request;
    request.spec = spec.empty() ? "all" : spec;
    for (const std::string& path : torch_paths) {
        std::error_code error;
        const bool atlas = !std::filesystem::is_directory(path, error) && abi::Atlas::is_atlas_file(path);
        (atlas ? request.atlases : request.torches).push_back(path);
    }
    request.with_bundled = !spec.empty() || request.atlases.empty();
    return request;
}

std::string torch_range_of(const WheelReport& report, const std::string& input) {
    const bool references_torch = std::any_of(report.elves.begin(), report.elves.end(),
                                              [](const ElfReport& elf) { return !elf.torch_imports.empty(); });
    if (!references_torch) return {};  // the atlas is not even loaded
    const abi::Atlas& atlas = abi::Atlas::bundled();
    if (atlas.empty()) return {};
    std::vector<TorchRangeInput> members;
    std::vector<abi::ElfImports> imports;
    for (const ElfReport& elf : report.elves) {
        TorchRangeInput member{elf.name, elf.needed, {}};
        abi::ElfImports used{elf.needed, {}};
        for (const TorchImport& import : elf.torch_imports) {
            member.torch_symbols.push_back(import.mangled);
            used.symbols.push_back({import.mangled, "", "", false});
        }
        members.push_back(std::move(member));
        imports.push_back(std::move(used));
    }
    const WheelFacts facts = wheel_facts(input);
    const TorchMatrix matrix = quick_matrix(atlas, members, facts.arch, facts.python_tag);
    if (matrix.members.empty() || matrix.columns.empty()) return {};
    std::vector<const abi::ElfImports*> pointers;
    for (const abi::ElfImports& one : imports) pointers.push_back(&one);
    const StableAbiUse stable = stable_abi_use(pointers);
    const TorchRequirement requirement = requirement_from(matrix, stable.stable_only());
    const auto first = matrix.columns.front().torch_version, last = matrix.columns.back().torch_version;
    const std::string atlas_span = std::to_string(matrix.columns.size()) + " releases " +
                                   first.substr(0, first.find('+')) + " … " + last.substr(0, last.find('+')) + " " +
                                   facts.arch;
    std::string text = requirement.any ? requirement.specifier + " (loads on " + requirement.lowest +
                                             (requirement.lowest == requirement.highest ? "" : " … " + requirement.highest) +
                                             " of " + atlas_span + (requirement.later_unproven ? "; later unproven" : "") +
                                             (requirement.contiguous ? "" : "; not contiguous") + ")"
                                       : "loads on none of " + atlas_span + " (wheelfix check --torch-release all)";
    if (stable.stable_only()) text += "; stable C ABI only";
    else if (stable.uses_stable()) text += "; stable C ABI and C++ symbols: judged by the C++ ones";
    return text;
}

ReleaseMatrix check_releases(const Targets& targets, const std::string& input, const ReleaseRequest& request,
                             const TorchLoader& load, bool keep_newest) {
    std::vector<std::unique_ptr<abi::Atlas>> owned;
    std::vector<const abi::Atlas*> atlases;
    for (const std::string& path : request.atlases) {
        owned.push_back(std::make_unique<abi::Atlas>(abi::Atlas::load(path)));
        atlases.push_back(owned.back().get());
    }
    if (request.with_bundled && !abi::Atlas::bundled().empty()) atlases.push_back(&abi::Atlas::bundled());
    if (atlases.empty()) throw InputError("--torch-release", "no torch atlas: none is bundled with this build; give one (or torch indexes) "
                                                  "with --torch (check) or --torch-from (retag)");

    std::vector<abi::AtlasRelease> available;
    std::vector<const abi::Atlas*> owner;
    for (const abi::Atlas* atlas : atlases)
        for (abi::AtlasRelease& release : atlas->releases()) {
            bool shadowed = false;  // a user atlas's entry of the same release wins
            const auto public_part = [](const std::string& v) { return v.substr(0, v.find('+')); };
            for (const abi::AtlasRelease& seen : available)
                shadowed = shadowed || (public_part(seen.torch_version) == public_part(release.torch_version) &&
                                        (seen.arch == release.arch || seen.arch.empty() || release.arch.empty()));
            if (shadowed) continue;
            available.push_back(std::move(release));
            owner.push_back(atlas);
        }
    std::vector<std::size_t> order(available.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return abi::torch_version_less(available[a].torch_version, available[b].torch_version);
    });
    std::vector<abi::AtlasRelease> sorted;
    std::vector<const abi::Atlas*> sorted_owner;
    for (std::size_t i : order) {
        sorted.push_back(available[i]);
        sorted_owner.push_back(owner[i]);
    }

    const WheelFacts facts = wheel_facts(input);
    const std::vector<abi::AtlasRelease> selected = select_releases(sorted, request.spec, facts.arch);
    abi::IndexOptions options;
    options.roots = needed_roots(targets);
    ReleaseMatrix result;
    result.report.input = input;
    std::vector<MatrixColumn> columns;
    std::vector<std::vector<abi::ElfCheck>> checks;
    std::vector<std::size_t> sorted_at;  // per release column: its place in `sorted`
    for (const abi::AtlasRelease& release : selected) {
        std::size_t at = 0;
        while (sorted[at].torch_version != release.torch_version || sorted[at].arch != release.arch) ++at;
        sorted_at.push_back(at);
        const abi::SymbolIndex index = sorted_owner[at]->index_for(release, facts.python_tag, options);
        TorchResult torch = check_against(targets, index);
        const std::string tag = facts.python_tag.empty() && !release.python_tags.empty()
                                    ? sorted_owner[at]->entries()[release.primary_entry].python_tag
                                    : facts.python_tag;
        columns.push_back({release.torch_version, release.cuda_version, release.arch, tag, index.source,
                           cuda_note(facts.cuda, release.cuda_version)});
        checks.push_back(torch.members);
        result.report.torches.push_back(std::move(torch));
    }
    for (const std::string& path : request.torches) {
        const abi::SymbolIndex index = load(path, options);
        TorchResult torch = check_against(targets, index);
        columns.push_back({index.torch_version.empty() ? index.source : index.torch_version, index.cuda_version, "", "",
                           index.source, cuda_note(facts.cuda, index.cuda_version)});
        checks.push_back(torch.members);
        result.report.torches.push_back(std::move(torch));
    }
    result.matrix = build_matrix(std::move(columns), checks);
    std::vector<const abi::ElfImports*> imports;
    for (const Target& target : targets.elves) imports.push_back(&target.imports);
    result.stable = stable_abi_use(imports);
    result.requirement = requirement_from(result.matrix, result.stable.stable_only());
    if (keep_newest && result.requirement.any && result.requirement.highest_column < sorted_at.size()) {
        const std::size_t at = sorted_at[result.requirement.highest_column];
        result.newest = sorted_owner[at]->index_for(sorted[at], facts.python_tag, options);
    }
    return result;
}

std::optional<ReleaseTorch> release_torch(const std::vector<std::string>& paths, const std::string& release,
                                          const abi::IndexOptions& options, const TorchLoader& load) {
    for (const std::string& path : paths) {
        abi::SymbolIndex index = load(path, options);
        const std::string version = index.torch_version.substr(0, index.torch_version.find('+'));
        if (!version.empty() && wheel::Version::try_parse(version) && wheel::Version::try_parse(release) &&
            *wheel::Version::try_parse(version) == *wheel::Version::try_parse(release))
            return ReleaseTorch{path, std::move(index)};
    }
    return std::nullopt;
}

}  // namespace wheelfix::analysis
