// The release matrix of a wheel (torch_releases.hpp has the contract).
#include "wheelfix/analysis/torch_releases.hpp"

#include "wheelfix/abi/atlas.hpp"
#include "wheelfix/analysis/needed_resolution.hpp"
#include "wheelfix/analysis/torch_verdict.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/text.hpp"
#include "wheelfix/wheel/filename.hpp"
#include "wheelfix/wheel/version.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
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

namespace {

// What each member's own search path reaches inside the wheel (the wheel's members
// only; torch_releases.hpp says why no other copy counts).
NeededResolution wheel_reach(const Targets& targets, bool wheel) {
    std::vector<WheelElf> view;
    for (const Target& target : targets.elves)
        view.push_back({target.member, wheel ? installed_path(target.member).value_or("") : "", &target.linkage});
    SearchContext context;
    context.wheel_only = true;
    return resolve_needed(view, {}, context);
}

// The member's own search path reaches the library in the wheel, or the wheel declares
// the distribution that ships it. What that distribution's own dependencies bring is
// not known here, so it does not count.
bool runtime_provided(const CudaRuntimeNeed& need, const ElfNeeds& reach, const TorchClaims& claims) {
    for (const ResolvedNeed& found : reach.needs)
        if (found.name == need.library && found.library_class == LibraryClass::in_wheel) return true;
    return claims.names(need.distribution);
}

int cuda_major(const std::string& cuda_version) {
    if (cuda_version.empty()) return 0;
    return std::atoi(cuda_version.c_str());
}

// What the loader needs beside the symbols: the CUDA runtime majors the member NEEDs
// against the release build's, and a CPython build of the release for the wheel's tag.
// The bundled atlas holds every CPython tag each release ships (data/README.md), so a tag
// it lacks is one the release does not ship; a user atlas may be partial ("not covered").
void judge_install(MatrixCell& cell, const Target& target, const abi::AtlasRelease& release, const ElfNeeds& reach,
                   const TorchClaims& claims, const std::string& python_tag, bool every_tag) {
    if (cell.verdict == Verdict::no) return;
    if (every_tag && !python_tag.empty() &&
        std::find(release.python_tags.begin(), release.python_tags.end(), python_tag) == release.python_tags.end()) {
        cell.verdict = Verdict::runtime;
        cell.first_missing = "no " + python_tag;
        cell.runtime_note = "the release ships no " + python_tag + " build";
        return;
    }
    const int major = cuda_major(release.cuda_version);
    for (const CudaRuntimeNeed& need : cuda_runtime_needs(target.imports.needed)) {
        if (need.major == major || runtime_provided(need, reach, claims)) continue;
        cell.verdict = Verdict::runtime;
        cell.first_missing = "cu" + std::to_string(need.major) + " runtime";
        cell.runtime_note = "needs " + need.distribution + " beside torch (" +
                            (major == 0 ? std::string("a CPU build") : "a CUDA " + release.cuda_version + " build") +
                            ": no " + need.library + "; symbols resolve)";
        return;
    }
}

// The matrix of `columns` and the checks in result.report.torches (one each), judged:
// judge_install() on every cell, each column against its release, each member by its
// own search path (a runtime cell's note goes to its torch's install_notes), then the
// stable ABI use and the torch verdict.
void judge_matrix(ReleaseMatrix& result, std::vector<MatrixColumn> columns, const Targets& targets,
                  const std::string& input, const std::vector<abi::AtlasRelease>& releases,
                  const std::vector<bool>& every_tag, const TorchClaims& claims, const std::string& python_tag,
                  PinMode mode) {
    std::vector<std::vector<abi::ElfCheck>> checks;
    for (const TorchResult& torch : result.report.torches) checks.push_back(torch.members);
    result.matrix = build_matrix(std::move(columns), checks);
    for (const TorchResult& torch : result.report.torches) result.matrix.wheel_missing.push_back(torch.missing());
    const NeededResolution reach = wheel_reach(targets, input.ends_with(".whl"));
    for (std::size_t column = 0; column < releases.size(); ++column)
        for (std::size_t row = 0; row < result.matrix.members.size() && row < targets.elves.size(); ++row) {
            MatrixCell& cell = result.matrix.cells[row][column];
            judge_install(cell, targets.elves[row], releases[column], reach.members[row], claims, python_tag,
                          every_tag[column]);
            if (cell.verdict == Verdict::runtime)
                result.report.torches[column].install_notes.push_back(targets.elves[row].member + ": " + cell.runtime_note);
        }
    std::vector<const abi::ElfImports*> imports;
    for (const Target& target : targets.elves) imports.push_back(&target.imports);
    result.stable = stable_abi_use(imports);
    result.requirement = torch_verdict(result.matrix, result.stable, claims, mode);
}

// "cu126" from "2.6.0+cu126"; without a local label, from the CUDA version ("cpu" without one).
std::string build_of(const std::string& torch_version, const std::string& cuda_version) {
    const auto plus = torch_version.find('+');
    if (plus != std::string::npos) return torch_version.substr(plus + 1);
    if (cuda_version.empty()) return "cpu";
    std::string build = "cu";
    for (char c : cuda_version)
        if (c != '.') build += c;
    return build;
}

std::string build_of(const abi::AtlasRelease& release) { return build_of(release.torch_version, release.cuda_version); }

// The CUDA major the wheel was built for: its +cuXYZ label's ("cu126" -> 12), else the
// highest CUDA runtime major its members NEED (libcudart.so.13 -> 13); 0 when neither says.
int wheel_cuda_major(const WheelFacts& facts, const Targets& targets) {
    if (facts.cuda.size() > 3) return std::atoi(facts.cuda.c_str() + 2) / 10;
    int major = 0;
    for (const Target& target : targets.elves)
        for (const CudaRuntimeNeed& need : cuda_runtime_needs(target.imports.needed)) major = std::max(major, need.major);
    return major;
}

struct BuildChoice {
    abi::AtlasRelease release;
    const abi::Atlas* atlas = nullptr;
    std::vector<std::string> builds;  // every build of the release the atlases hold, in their order
    std::string note;                 // why this build, when it is not the one the wheel names
};

// Per release and arch, the build a verdict is taken from, in the order
// torch_releases.hpp gives (check_releases), with the note a build other than the
// wheel's own carries.
std::vector<BuildChoice> choose_builds(const std::vector<const abi::Atlas*>& atlases, const WheelFacts& facts,
                                       int wheel_major, const std::string& spec) {
    std::vector<std::string> asked;  // builds --torch-release names exactly
    for (std::string item : split_nonempty(spec, ',')) {
        std::erase(item, ' ');
        if (item.find('+') != std::string::npos && item.find_first_of("<>=!~") == std::string::npos) asked.push_back(item);
    }
    std::vector<std::vector<std::pair<abi::AtlasRelease, const abi::Atlas*>>> groups;
    for (const abi::Atlas* atlas : atlases)
        for (abi::AtlasRelease& release : atlas->releases()) {
            auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& builds) {
                const abi::AtlasRelease& seen = builds.front().first;
                return public_version(seen.torch_version) == public_version(release.torch_version) &&
                       (seen.arch == release.arch || seen.arch.empty() || release.arch.empty());
            });
            if (group == groups.end()) group = groups.emplace(groups.end());
            // The same build in a later atlas is shadowed by the earlier (the user's).
            if (std::none_of(group->begin(), group->end(), [&](const auto& seen) {
                    return seen.first.torch_version == release.torch_version &&
                           seen.first.cuda_version == release.cuda_version && seen.first.arch == release.arch;
                }))
                group->emplace_back(std::move(release), atlas);
        }
    std::vector<BuildChoice> choices;
    for (const auto& builds : groups) {
        const auto rank = [&](const abi::AtlasRelease& release) {
            if (std::find(asked.begin(), asked.end(), release.torch_version) != asked.end()) return 3;
            if (!facts.cuda.empty() && build_of(release) == facts.cuda) return 2;
            if (wheel_major > 0 && cuda_major(release.cuda_version) == wheel_major) return 1;
            return 0;
        };
        std::size_t best = 0;
        for (std::size_t i = 1; i < builds.size(); ++i)
            if (rank(builds[i].first) > rank(builds[best].first)) best = i;
        BuildChoice choice{builds[best].first, builds[best].second, {}, {}};
        for (const auto& [release, atlas] : builds) choice.builds.push_back(build_of(release));
        const std::string build = build_of(choice.release);
        if (!facts.cuda.empty() && build != facts.cuda) {
            choice.note = cuda_note(facts.cuda, choice.release.cuda_version);
            if (choice.note.empty())  // the label differs, the CUDA version does not tell them apart
                choice.note = "wheel +" + facts.cuda + ": verdict from the " + build +
                              " build; builds of one release can export different symbols";
        } else if (facts.cuda.empty() && builds.size() > 1) {
            const int how = rank(choice.release);
            choice.note = "wheel names no build: verdict from the " + build + " build" +
                          (how == 3 ? " (asked by --torch-release)"
                           : how == 1 ? " (CUDA " + std::to_string(wheel_major) + ", as it NEEDs)"
                                      : "") +
                          " of " + join(choice.builds, ", ") + "; builds of one release can export different symbols";
        }
        choices.push_back(std::move(choice));
    }
    return choices;
}

}  // namespace

std::optional<ReleaseMatrix> bundled_releases(const WheelReport& report, const std::string& input) {
    const bool references_torch = std::any_of(report.elves.begin(), report.elves.end(),
                                              [](const ElfReport& elf) { return !elf.torch_imports.empty(); });
    if (!references_torch) return std::nullopt;  // the atlas is not even loaded
    if (abi::Atlas::bundled().empty()) return std::nullopt;
    // The members as check reads them (their loader views: the dynamic tables alone), so
    // the range is check's, to the symbol.
    return check_releases(read_targets(input), input, ReleaseRequest{}, {});
}

std::string torch_range_of(const std::optional<ReleaseMatrix>& releases, const std::string& input) {
    if (!releases) return {};
    const ReleaseMatrix& run = *releases;
    const TorchRequirement& requirement = run.requirement;
    const TorchMatrix& matrix = run.matrix;
    if (matrix.members.empty() || matrix.columns.empty()) return {};
    const auto first = matrix.columns.front().torch_version, last = matrix.columns.back().torch_version;
    const std::string atlas_span = std::to_string(matrix.columns.size()) + " releases " + public_version(first) + " … " +
                                   public_version(last) + " " + matrix.columns.front().arch;
    std::string text = requirement.any
                           ? requirement.specifier + " (symbols resolve on " + requirement.lowest +
                                 (requirement.lowest == requirement.highest ? "" : " … " + requirement.highest) +
                                 " of " + atlas_span + (requirement.later_unproven ? "; later unproven" : "") +
                                 (requirement.contiguous ? "" : "; not contiguous") + ")"
                           : "none: " + requirement.finding + " (" + atlas_span + "; wheelfix check --torch-release all)";
    if (requirement.kind == "stable") text += "; stable C ABI only";
    else if (!requirement.built_for.empty())
        text += "; C++ ABI: built for torch " + requirement.built_for + " (" + requirement.built_for_source + ")";
    // The builds the pinned releases' verdicts come from, when they are not the wheel's own.
    std::vector<std::string> other_builds;
    if (requirement.any)
        for (const MatrixColumn& column : matrix.columns) {
            const auto version = wheel::Version::try_parse(public_version(column.torch_version));
            if (column.cuda_note.empty() || !version || !requirement.pin || !requirement.pin->contains(*version)) continue;
            if (std::find(other_builds.begin(), other_builds.end(), column.build) == other_builds.end())
                other_builds.push_back(column.build);
        }
    if (!other_builds.empty())
        text += "; verdict from the " + join(other_builds, ", ") + " build" + (other_builds.size() > 1 ? "s" : "") +
                (wheel_facts(input).cuda.empty() ? "" : ", not the wheel's +" + wheel_facts(input).cuda) +
                " (builds of one release can export different symbols)";
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
    const WheelFacts facts = wheel_facts(input);
    const TorchClaims claims = torch_claims_of(input);

    // One build per release and arch (the atlases may hold several: 2.6.0+cu124 and
    // +cu126), chosen by choose_builds().
    std::vector<BuildChoice> choices = choose_builds(atlases, facts, wheel_cuda_major(facts, targets), request.spec);
    std::stable_sort(choices.begin(), choices.end(), [](const BuildChoice& a, const BuildChoice& b) {
        return abi::torch_version_less(a.release.torch_version, b.release.torch_version);
    });
    std::vector<abi::AtlasRelease> sorted;
    for (const BuildChoice& choice : choices) sorted.push_back(choice.release);

    const std::vector<abi::AtlasRelease> selected = select_releases(sorted, request.spec, facts.arch);
    abi::IndexOptions options;
    options.roots = needed_roots(targets);
    ReleaseMatrix result;
    result.report.input = input;
    result.roots = options.roots;
    std::vector<MatrixColumn> columns;
    std::vector<std::size_t> sorted_at;  // per release column: its place in `sorted`
    std::vector<const abi::ElfImports*> imports;
    for (const Target& target : targets.elves) imports.push_back(&target.imports);
    // Each release's index holds only what checking these imports can consult (the same
    // verdicts and explanations as the whole index), picked once per atlas.
    const abi::SymbolSelection consulted = abi::consulted_by(imports);
    std::map<const abi::Atlas*, abi::Atlas::Subset> subsets;
    abi::SignatureMemo memo;
    for (const abi::AtlasRelease& release : selected) {
        std::size_t at = 0;
        while (sorted[at].torch_version != release.torch_version || sorted[at].arch != release.arch) ++at;
        sorted_at.push_back(at);
        const BuildChoice& choice = choices[at];
        const abi::Atlas* atlas = choice.atlas;
        auto subset = subsets.find(atlas);
        if (subset == subsets.end()) subset = subsets.emplace(atlas, atlas->select(consulted)).first;
        const abi::SymbolIndex index = atlas->index_for(release, facts.python_tag, options, &subset->second);
        TorchResult torch = check_against(targets, index, &memo);
        const std::string tag = facts.python_tag.empty() && !release.python_tags.empty()
                                    ? choice.atlas->entries()[release.primary_entry].python_tag
                                    : facts.python_tag;
        columns.push_back({release.torch_version, release.cuda_version, release.arch, tag, index.source, choice.note,
                           build_of(release), choice.builds});
        result.report.torches.push_back(std::move(torch));
    }
    for (const std::string& path : request.torches) {
        const abi::SymbolIndex index = load(path, options);
        TorchResult torch = check_against(targets, index, &memo);
        columns.push_back({index.torch_version.empty() ? index.source : index.torch_version, index.cuda_version, "", "",
                           index.source, cuda_note(facts.cuda, index.cuda_version),
                           build_of(index.torch_version, index.cuda_version), {}});
        result.report.torches.push_back(std::move(torch));
    }
    std::vector<bool> every_tag;  // a bundled release's CPython tags are all it ships
    for (std::size_t at : sorted_at) every_tag.push_back(choices[at].atlas == &abi::Atlas::bundled());
    judge_matrix(result, std::move(columns), targets, input, selected, every_tag, claims, facts.python_tag, request.pin_mode);
    // One verdict: a release the pin does not admit is not "ok" in the matrix, nor "loads".
    for (std::size_t column = 0; column < result.matrix.columns.size(); ++column) {
        if (result.matrix.column_verdict(column) != Verdict::ok) continue;
        const auto reason = why_not_admitted(result.requirement, result.matrix.columns[column].torch_version);
        if (!reason) continue;
        for (std::size_t row = 0; row < result.matrix.members.size() && row < targets.elves.size(); ++row) {
            MatrixCell& cell = result.matrix.cells[row][column];
            if (cell.verdict != Verdict::ok || !links_torch(targets.elves[row].imports)) continue;
            cell.verdict = Verdict::not_admitted;
            cell.first_missing = reason->brief;
            cell.runtime_note = reason->why;
        }
        if (result.matrix.column_verdict(column) == Verdict::not_admitted)
            result.report.torches[column].not_admitted = reason->why;
    }
    if (keep_newest && result.requirement.any && result.requirement.highest_column < sorted_at.size()) {
        const std::size_t at = sorted_at[result.requirement.highest_column];
        result.newest = choices[at].atlas->index_for(sorted[at], facts.python_tag, options);
    }
    return result;
}

std::optional<ReleaseTorch> release_torch(const std::vector<std::string>& paths, const std::string& release,
                                          const abi::IndexOptions& options, const TorchLoader& load) {
    for (const std::string& path : paths) {
        abi::SymbolIndex index = load(path, options);
        const auto version = wheel::Version::try_parse(public_version(index.torch_version));
        if (version && version == wheel::Version::try_parse(release))
            return ReleaseTorch{path, std::move(index)};
    }
    return std::nullopt;
}

ReleaseMatrix check_torches(const Targets& targets, const std::string& input, const std::vector<std::string>& paths,
                            PinMode mode, const TorchLoader& load) {
    const WheelFacts facts = wheel_facts(input);
    const TorchClaims claims = torch_claims_of(input);
    abi::IndexOptions options;
    options.roots = needed_roots(targets);
    struct Column {
        abi::AtlasRelease release;  // what judge_install reads: the version and the CUDA build
        MatrixColumn column;
        TorchResult torch;
    };
    std::vector<Column> loaded;
    for (const std::string& path : paths) {
        const abi::SymbolIndex index = load(path, options);
        if (!wheel::Version::try_parse(public_version(index.torch_version)))
            throw InputError(path, "torch version unknown (no torch/version.py): the torch verdict needs each torch's version");
        loaded.push_back({{index.torch_version, index.cuda_version, "", {}, 0},
                          {index.torch_version, index.cuda_version, "", "", index.source, cuda_note(facts.cuda, index.cuda_version),
                           build_of(index.torch_version, index.cuda_version), {}},
                          check_against(targets, index)});
    }
    std::stable_sort(loaded.begin(), loaded.end(), [](const Column& a, const Column& b) {
        return abi::torch_version_less(a.release.torch_version, b.release.torch_version);
    });
    ReleaseMatrix result;
    result.report.input = input;
    result.roots = options.roots;
    std::vector<MatrixColumn> columns;
    std::vector<abi::AtlasRelease> releases;
    for (Column& one : loaded) {
        columns.push_back(one.column);
        releases.push_back(one.release);
        result.report.torches.push_back(std::move(one.torch));
    }
    judge_matrix(result, std::move(columns), targets, input, releases, std::vector<bool>(releases.size(), false), claims,
                 facts.python_tag, mode);
    return result;
}

bool CheckRun::loads_everywhere() const {
    if (!matrices.empty())
        return std::all_of(matrices.begin(), matrices.end(),
                           [](const ReleaseMatrix& run) { return run.matrix.loads_everywhere(); });
    return std::all_of(reports.begin(), reports.end(), [](const CheckReport& report) { return report.loads_everywhere(); });
}

CheckRun check_inputs(const std::vector<std::string>& inputs, const std::vector<std::string>& torches,
                      const std::string& release_spec, const TorchLoader& load) {
    for (const std::string& torch : torches) abi::require_index_source(torch);
    std::vector<Targets> targets;
    for (const std::string& input : inputs) targets.push_back(read_targets(input, inputs.size() == 1));
    CheckRun run;
    for (const Targets& input : targets) run.nothing_to_check.push_back(input.elves.empty());
    const ReleaseRequest request = release_request(release_spec, torches);
    if (!release_spec.empty() || !request.atlases.empty()) {
        for (std::size_t i = 0; i < targets.size(); ++i) {
            run.matrices.push_back(check_releases(targets[i], inputs[i], request, load));
            run.reports.push_back(run.matrices.back().report);
        }
        return run;
    }
    abi::IndexOptions options;
    options.roots = needed_roots(targets);
    run.reports.resize(targets.size());
    for (std::size_t i = 0; i < targets.size(); ++i) run.reports[i].input = inputs[i];
    for (const std::string& torch : torches) {
        const abi::SymbolIndex index = load(torch, options);
        for (std::size_t i = 0; i < targets.size(); ++i) run.reports[i].torches.push_back(check_against(targets[i], index));
    }
    return run;
}

}  // namespace wheelfix::analysis
