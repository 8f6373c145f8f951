// The torch verdict (torch_verdict.hpp has the contract).
#include "wheelfix/analysis/torch_verdict.hpp"

#include "wheelfix/abi/stable_versions.hpp"
#include "wheelfix/policy/library_classes.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/text.hpp"
#include "wheelfix/wheel/metadata.hpp"
#include "wheelfix/wheel/filename.hpp"
#include "wheelfix/wheel/wheel.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace wheelfix::analysis {

namespace {

std::optional<wheel::Version> column_version(const MatrixColumn& column) {
    return wheel::Version::try_parse(public_version(column.torch_version));
}

bool same_minor(const wheel::Version& a, const wheel::Version& b) {
    return a.release().size() >= 2 && b.release().size() >= 2 && a.release()[0] == b.release()[0] &&
           a.release()[1] == b.release()[1];
}

// "2.9" for 2.9.1; with `later` 1, the next minor: "2.10".
std::string minor_text(const wheel::Version& version, std::uint64_t later = 0) {
    return std::to_string(version.release()[0]) + "." +
           std::to_string((version.release().size() > 1 ? version.release()[1] : 0) + later);
}

// "2.10.0" -> "2.10"; "2.9.1" stays: the bound written for the first release after a run.
std::string bound_text(const wheel::Version& version) {
    const auto& release = version.release();
    if (release.size() == 3 && release[2] == 0) return minor_text(version);
    return version.public_part();
}

// The one minor a specifier set names, when its clauses pin one ("==2.9.1", "==2.9.*", "~=2.9.0").
std::optional<wheel::Version> one_minor(const wheel::SpecifierSet& set) {
    for (const wheel::SpecifierClause& clause : set.clauses()) {
        if (clause.version.release().size() < 2) continue;
        if (clause.op == "==") return clause.version;
        if (clause.op == "~=" && clause.version.release().size() >= 3) return clause.version;
    }
    return std::nullopt;
}

}  // namespace

std::optional<wheel::Version> torch_from_local(const std::vector<std::string>& segments) {
    for (std::size_t i = 0; i < segments.size(); ++i) {
        std::string_view segment = segments[i];
        // "cu128torch2" carries both: the torch part is what follows "torch".
        std::size_t at = segment.find("torch");
        std::string_view digits;
        if (at != std::string_view::npos) {
            digits = segment.substr(at + 5);
        } else if (segment.starts_with("pt") && segment.size() > 2) {
            digits = segment.substr(2);
        } else {
            continue;
        }
        // "pt29cu128": the digits up to the CUDA part.
        const std::size_t end = std::min(digits.size(), digits.find_first_not_of("0123456789"));
        if (end == 0 || (end < digits.size() && !digits.substr(end).starts_with("cu"))) continue;
        const bool joined = end < digits.size();
        digits = digits.substr(0, end);
        std::vector<std::string> parts{std::string(digits)};
        for (std::size_t j = i + 1; !joined && j < segments.size() && all_digits(segments[j]) && parts.size() < 3; ++j)
            parts.push_back(segments[j]);
        std::string text;
        if (parts.size() == 1 && parts[0].size() >= 2) {
            text = parts[0].substr(0, 1) + "." + parts[0].substr(1);  // "29" -> 2.9, "210" -> 2.10
        } else if (parts.size() >= 2) {
            text = join(parts, ".");
        } else {
            continue;
        }
        if (auto version = wheel::Version::try_parse(text)) return version;
    }
    return std::nullopt;
}

bool TorchClaims::names(std::string_view distribution) const {
    const std::string name = wheel::normalize_project_name(distribution);
    return std::any_of(requires_dist.begin(), requires_dist.end(), [&](const wheel::Requirement& requirement) {
        return wheel::normalize_project_name(requirement.name) == name;
    });
}

TorchClaims torch_claims(const wheel::Wheel& wheel) {
    TorchClaims claims;
    for (const std::string& value : wheel.metadata().all("Requires-Dist")) {
        const wheel::Requirement requirement = wheel::parse_requirement(value);
        claims.requires_dist.push_back(requirement);
        if (wheel::normalize_project_name(requirement.name) != "torch" || !requirement.marker.empty() ||
            !requirement.url.empty())
            continue;
        const auto set = wheel::SpecifierSet::try_parse(requirement.specifier);
        if (!set) continue;  // unreadable: it stays as the author wrote it, and bounds nothing we write
        const auto meet = claims.author.intersect(*set);
        if (meet) claims.author = *meet;
        else claims.author_meets = false;
    }
    if (const auto version = wheel::Version::try_parse(wheel.metadata_version()))
        if (auto local = torch_from_local(version->local_segments())) {
            claims.built_for = local;
            claims.built_for_source = "local version +" + version->local();
        }
    if (!claims.built_for)
        if (auto named = one_minor(claims.author)) {
            claims.built_for = named;
            claims.built_for_source = "METADATA torch" + claims.author.text();
        }
    return claims;
}

TorchClaims torch_claims_of(const std::string& path) {
    if (!path.ends_with(".whl")) return {};
    return torch_claims(wheel::Wheel::open(path));
}

std::vector<CudaRuntimeNeed> cuda_runtime_needs(const std::vector<std::string>& needed) {
    static constexpr std::pair<std::string_view, std::string_view> kRuntimes[] = {
        {"libcudart.so.", "nvidia-cuda-runtime-cu"}, {"libnvrtc.so.", "nvidia-cuda-nvrtc-cu"},
        {"libcublas.so.", "nvidia-cublas-cu"},       {"libcublasLt.so.", "nvidia-cublas-cu"},
        {"libnvJitLink.so.", "nvidia-nvjitlink-cu"},
    };
    std::vector<CudaRuntimeNeed> needs;
    for (const std::string& library : needed)
        for (const auto& [prefix, distribution] : kRuntimes) {
            if (!library.starts_with(prefix)) continue;
            const std::string_view rest = std::string_view(library).substr(prefix.size());
            const std::string_view major = rest.substr(0, rest.find('.'));
            if (!all_digits(major) || major.size() > 3) continue;
            const int number = std::stoi(std::string(major));
            // The distribution NVIDIA ships it in for that major (policy data: CUDA 13's drop "-cu13").
            std::string ships = std::string(distribution) + std::to_string(number);
            const auto named = policy::classify_name(policy::library_classes(), library, false);
            if (named.named == policy::NamedClass::nvidia && named.rule) ships = policy::distribution(*named.rule, number);
            needs.push_back({library, number, ships});
        }
    return needs;
}

std::vector<RuntimeRequirement> runtime_requirements(const std::vector<std::string>& needed,
                                                     const std::vector<std::string>& shipped,
                                                     const std::string& torch_cuda_version, const TorchClaims& claims) {
    const int torch_major = torch_cuda_version.empty() ? 0 : std::atoi(torch_cuda_version.c_str());
    std::vector<RuntimeRequirement> lines;
    for (const CudaRuntimeNeed& need : cuda_runtime_needs(needed)) {
        if (need.major == torch_major) continue;
        if (std::find(shipped.begin(), shipped.end(), need.library) != shipped.end()) continue;
        if (claims.names(need.distribution)) continue;
        if (std::any_of(lines.begin(), lines.end(),
                        [&](const RuntimeRequirement& line) { return line.requirement.name == need.distribution; }))
            continue;
        const auto bound = wheel::SpecifierSet::range(std::to_string(need.major), std::to_string(need.major + 1));
        lines.push_back({wheel::parse_requirement(need.distribution + bound.text()), need.library});
    }
    return lines;
}

TorchRequirement torch_verdict(const TorchMatrix& matrix, const StableAbiUse& stable, const TorchClaims& claims,
                               PinMode mode) {
    TorchRequirement verdict;
    verdict.kind = stable.stable_only() ? "stable" : (stable.cpp.empty() ? "none" : "c++");
    verdict.author = claims.author.text();
    verdict.symbol_level_only = mode == PinMode::range;
    const std::size_t count = matrix.columns.size();
    std::vector<std::optional<wheel::Version>> versions;
    for (const MatrixColumn& column : matrix.columns) versions.push_back(column_version(column));
    std::vector<bool> resolves(count);
    for (std::size_t i = 0; i < count; ++i) resolves[i] = matrix.column_verdict(i) == Verdict::ok && versions[i];
    if (std::none_of(resolves.begin(), resolves.end(), [](bool ok) { return ok; })) {
        verdict.finding = "no release of the matrix loads it";
        return verdict;
    }
    if (!claims.author_meets) {
        verdict.finding = "the author's own Requires-Dist on torch cannot all hold";
        return verdict;
    }
    // torch's own version list states from which release each stable function may be
    // used; where it states a later release than the atlas exports it from, the later one
    // bounds the floor (narrower, never wider).
    std::optional<wheel::Version> stated_floor;
    for (const std::string& function : stable.stable) {
        const auto since = abi::stable_abi_since(function);
        const auto version = since ? wheel::Version::try_parse(*since) : std::nullopt;
        if (version && (!stated_floor || *stated_floor < *version)) {
            stated_floor = version;
            verdict.stable_floor = *since;
            verdict.stable_floor_function = function;
        }
    }
    // A C++-ABI extension is pinned to the minor it was built for.
    std::optional<wheel::Version> built_for;
    if (verdict.kind == "c++" && mode == PinMode::truth) {
        if (claims.built_for) {
            built_for = claims.built_for;
            verdict.built_for_source = claims.built_for_source;
        } else {
            for (std::size_t i = 0; i < count && !built_for; ++i)
                if (resolves[i]) built_for = versions[i];
            verdict.built_for_source = "the lowest release where all its symbols resolve";
        }
        verdict.built_for = built_for->public_part();
    }
    std::vector<bool> admitted(count);
    bool any_in_minor = false;
    bool any_by_author = false;
    bool any_above_stated = false;
    for (std::size_t i = 0; i < count; ++i) {
        if (!resolves[i]) continue;
        const bool in_minor = !built_for || same_minor(*versions[i], *built_for);
        any_in_minor = any_in_minor || in_minor;
        const bool by_author = claims.author.contains(*versions[i]);
        any_by_author = any_by_author || by_author;
        const bool above_stated = !stated_floor || !(*versions[i] < *stated_floor);
        any_above_stated = any_above_stated || above_stated;
        admitted[i] = in_minor && by_author && above_stated;
    }
    std::optional<std::size_t> run_end;
    for (std::size_t i = count; i-- > 0;)
        if (admitted[i]) {
            run_end = i;
            break;
        }
    if (!run_end) {
        if (!any_in_minor)
            verdict.finding = "built for torch " + minor_text(*built_for) + " (" + verdict.built_for_source +
                              "), but its symbols resolve on no " + minor_text(*built_for) + ".x release of the matrix";
        else if (!any_above_stated)
            verdict.finding = verdict.stable_floor_function + " is stable from torch " + verdict.stable_floor +
                              " (torch's stable ABI version list), but its symbols resolve on no release from it";
        else if (!any_by_author)
            verdict.finding = "the author's range torch" + claims.author.text() +
                              " and the releases whose symbols resolve do not meet";
        else
            verdict.finding = "the author's range torch" + claims.author.text() + " and torch " +
                              minor_text(*built_for) + " (" + verdict.built_for_source + ") do not meet";
        return verdict;
    }
    std::size_t run_start = *run_end;
    while (run_start > 0 && admitted[run_start - 1]) --run_start;
    for (std::size_t i = 0; i < run_start; ++i)
        if (admitted[i]) verdict.contiguous = false;
    verdict.any = true;
    verdict.lowest = versions[run_start]->public_part();
    verdict.highest = versions[*run_end]->public_part();
    verdict.highest_column = *run_end;
    if (*run_end + 1 < count) {
        verdict.upper = bound_text(*versions[*run_end + 1]);
        if (built_for && !same_minor(*versions[*run_end + 1], *built_for)) verdict.upper = minor_text(*built_for, 1);
    } else {
        verdict.later_unproven = true;
        if (verdict.kind != "stable") verdict.upper = minor_text(*versions[*run_end], 1);
    }
    const auto pin = wheel::SpecifierSet::range(verdict.lowest, verdict.upper).intersect(claims.author);
    if (!pin) {  // cannot happen: the run's releases are in the author's range
        verdict.any = false;
        verdict.finding = "the author's range torch" + claims.author.text() + " and torch>=" + verdict.lowest +
                          " do not meet";
        return verdict;
    }
    verdict.pin = pin;
    verdict.specifier = "torch" + pin->text();
    return verdict;
}

std::optional<NotAdmitted> why_not_admitted(const TorchRequirement& verdict, const std::string& torch_version) {
    const auto version = wheel::Version::try_parse(public_version(torch_version));
    if (verdict.any && verdict.pin && version && verdict.pin->contains(*version)) return std::nullopt;
    if (!verdict.any) return NotAdmitted{"no pin", "symbols resolve, but the torch verdict admits no release: " + verdict.finding};
    if (version && !verdict.built_for.empty())
        if (const auto built_for = wheel::Version::try_parse(verdict.built_for); built_for && !same_minor(*version, *built_for))
            return NotAdmitted{"built for " + minor_text(*built_for),
                               "symbols resolve, but built for torch " + minor_text(*built_for) + " (C++ ABI, " +
                                   verdict.built_for_source + "): not ok on " + minor_text(*version) +
                                   ", where class layouts and inline code may differ"};
    if (version && !verdict.stable_floor.empty())
        if (const auto floor = wheel::Version::try_parse(verdict.stable_floor); floor && *version < *floor)
            return NotAdmitted{"stable floor " + verdict.stable_floor,
                               "symbols resolve, but torch's stable ABI version list states " +
                                   verdict.stable_floor_function + " from " + verdict.stable_floor};
    if (version && !verdict.author.empty())
        if (const auto author = wheel::SpecifierSet::try_parse(verdict.author); author && !author->contains(*version))
            return NotAdmitted{"author excludes", "symbols resolve, but the author's Requires-Dist torch" + verdict.author +
                                                      " excludes it"};
    return NotAdmitted{"outside the pin", "symbols resolve, but the verdict's pin " + verdict.specifier + " does not admit it"};
}

}  // namespace wheelfix::analysis
