// profile_findings: a wheel report against a target profile, one small rule a concern.
#include "wheelfix/analysis/profile_findings.hpp"

#include "wheelfix/analysis/abi_rules.hpp"

#include "wheelfix/wheel/wheel.hpp"
#include "wheelfix/util/text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace wheelfix::analysis {

namespace {

using policy::Family;
using policy::NeededReplacement;
using policy::PlatformTag;
using policy::Profile;
using policy::parse_platform_tag;

std::string cudart(int major) { return fmt::format("libcudart.so.{}", major); }

std::optional<Finding> runtime_finding(const Profile& profile, const ElfReport& elf) {
    if (!profile.cuda_runtime_major || !elf.cudart_major || *elf.cudart_major == *profile.cuda_runtime_major)
        return std::nullopt;
    int wanted = *profile.cuda_runtime_major;
    std::string linked = cudart(*elf.cudart_major);
    bool mapped = std::any_of(profile.replace_needed.begin(), profile.replace_needed.end(),
                              [&](const NeededReplacement& r) { return r.from == linked && r.to == cudart(wanted); });
    return Finding{Finding::Kind::cuda_runtime, elf.name,
                   fmt::format("{} needs {}; {} needs CUDA runtime {} ({})", elf.name, linked, profile.name, wanted,
                               cudart(wanted)),
                   mapped};
}

std::string sm_list(const std::vector<std::uint32_t>& sms) {
    std::vector<std::string> names;
    for (auto sm : sms) names.push_back(fmt::format("sm_{}", sm));
    return join(names, ", ");
}

std::optional<Finding> coverage_finding(const Profile& profile, const CudaModule& module,
                                        const std::vector<ElfReport>& elves) {
    std::vector<std::uint32_t> missing;
    for (const auto& row : module_support(module, elves, profile.sms))
        if (!row.runs) missing.push_back(row.sm);
    if (missing.empty()) return std::nullopt;
    std::string has = module_code_summary(module, elves);
    return Finding{Finding::Kind::sm, module.name,
                   fmt::format("{} has no code for {} that {} needs (has: {})", module.name, sm_list(missing),
                               profile.name, has.empty() ? "nothing" : has),
                   false};
}

bool links_cuda_or_torch(const ElfReport& elf) {
    return elf.cudart_major || !elf.cuda_libraries.empty() || links_torch_library(elf);
}

// "${ORIGIN}/../x/" and "$ORIGIN/./../x" name the same directory as "$ORIGIN/../x".
std::string normalized(std::string path) {
    if (const auto rest = after_origin(path)) path = "$ORIGIN" + std::string(*rest);
    std::string out;
    std::size_t start = 0;
    for (bool first = true; start <= path.size(); first = false) {
        auto end = std::min(path.find('/', start), path.size());
        std::string_view part(path.data() + start, end - start);
        if (first) out = std::string(part);  // "" for an absolute path
        else if (!part.empty() && part != ".") out += "/" + std::string(part);
        start = end + 1;
    }
    return out;
}

std::optional<Finding> runpath_finding(const Profile& profile, const ElfReport& elf, int depth) {
    if (profile.rpaths.empty() || !links_cuda_or_torch(elf)) return std::nullopt;
    auto missing = missing_search_path(profile, elf, depth);
    if (missing.empty()) return std::nullopt;
    return Finding{Finding::Kind::runpath, elf.name,
                   fmt::format("{}: {} does not reach {}, where {} installs its libraries", elf.name,
                               elf.runpath ? "RUNPATH" : (elf.rpath ? "RPATH" : "no RUNPATH, so it"), join(missing, ", "),
                               profile.name),
                   true};
}

// The tag of the file name judged against the profile's floor and the binaries' needs.
std::optional<Finding> platform_finding(const Profile& profile, const WheelReport& report,
                                        const PlatformClaim& claim, const std::string& target) {
    auto tag = parse_platform_tag(claim.tag);
    if (tag.kind == PlatformTag::Kind::other) return std::nullopt;
    std::vector<std::string> reasons;
    const auto& floor = profile.min_platform;
    if (tag.kind == PlatformTag::Kind::linux)
        reasons.push_back("a plain linux tag, which PyPI and pip's manylinux checks do not accept");
    else if (floor && tag.kind != floor->kind)
        reasons.push_back(fmt::format("{} needs {} or newer", profile.name, profile.min_platform_name()));
    else if (floor && std::pair(tag.major, tag.minor) < std::pair(floor->major, floor->minor))
        reasons.push_back(fmt::format("older than {}, the oldest {} allows", profile.min_platform_name(), profile.name));
    if (claim.lies) reasons.push_back("the binaries need " + claim.violation);
    if (reasons.empty()) return std::nullopt;
    bool fixable = !target.empty() && claim.foreign_binary.empty() &&  // no tag makes a foreign binary load
                   (report.needs.links_musl == (parse_platform_tag(target).kind == PlatformTag::Kind::musllinux));
    std::string message = fmt::format("tag {}: {}", claim.tag, join(reasons, "; "));
    if (fixable) message += fmt::format("; repair sets {}", target);
    return Finding{Finding::Kind::platform, claim.tag, std::move(message), fixable};
}

void add(std::vector<Finding>& findings, std::optional<Finding> finding) {
    if (finding) findings.push_back(std::move(*finding));
}

Finding::Kind finding_kind(AbiConcern::Kind kind) {
    switch (kind) {
        case AbiConcern::Kind::blacklist: return Finding::Kind::blacklist;
        case AbiConcern::Kind::pyfpe: return Finding::Kind::pyfpe;
        case AbiConcern::Kind::ucs2: return Finding::Kind::ucs2;
        case AbiConcern::Kind::isa: return Finding::Kind::isa;
    }
    return Finding::Kind::blacklist;
}

// Whether a platform tag of the file name is older than `lowest` (same family): the
// wheel promises what the fact does not allow.
bool claims_older_than(const std::vector<analysis::PlatformClaim>& claims, const std::string& lowest) {
    auto floor = parse_platform_tag(lowest + "_any");
    return std::any_of(claims.begin(), claims.end(), [&](const analysis::PlatformClaim& claim) {
        auto tag = parse_platform_tag(claim.tag);
        return tag.kind == floor.kind && std::pair(tag.major, tag.minor) < std::pair(floor.major, floor.minor);
    });
}

// What the file's imports and ISA note cost it, judged in its own libc family. In a
// wheel (`claims` set) a fact some tag allows is a finding only while a tag of the
// file name is older than that; one no tag allows always is.
void add_abi_findings(std::vector<Finding>& findings, const ElfReport& elf,
                      const std::vector<analysis::PlatformClaim>* claims) {
    const auto family = elf.needs.links_musl ? Family::musllinux : Family::manylinux;
    for (const auto& concern : abi_concerns(elf.needs.abi, family, elf.machine)) {
        if (claims && !concern.lowest_tag.empty() && !claims_older_than(*claims, concern.lowest_tag)) continue;
        findings.push_back({finding_kind(concern.kind), elf.name, elf.name + " " + concern.message,
                            !concern.lowest_tag.empty()});  // repair's tag is the honest one, which allows it
    }
}

}  // namespace

const char* kind_name(Finding::Kind kind) {
    switch (kind) {
        case Finding::Kind::cuda_runtime: return "cudart";
        case Finding::Kind::sm: return "sm";
        case Finding::Kind::platform: return "platform";
        case Finding::Kind::runpath: return "runpath";
        case Finding::Kind::blacklist: return "blacklist";
        case Finding::Kind::pyfpe: return "pyfpe";
        case Finding::Kind::ucs2: return "ucs2";
        case Finding::Kind::isa: return "isa";
    }
    return "unknown";
}

std::vector<std::string> missing_search_path(const Profile& profile, const ElfReport& elf, int depth) {
    if (!links_cuda_or_torch(elf)) return {};
    std::vector<std::string> present;
    for (const auto& entry : elf.search_path) present.push_back(normalized(entry.path));
    std::vector<std::string> missing;
    for (const auto& rpath : profile.rpaths) {
        auto wanted = wheel::expand_root(rpath, depth);
        if (std::find(present.begin(), present.end(), normalized(wanted)) == present.end()) missing.push_back(wanted);
    }
    return missing;
}

std::string target_platform_tag(const Profile& profile, const WheelReport& report) {
    if (report.honest_tag.empty() || report.elves.empty()) return {};
    auto honest = parse_platform_tag(report.honest_tag + "_" + report.elves.front().machine);
    const auto& floor = profile.min_platform;
    if (floor && floor->kind == honest.kind && std::pair(honest.major, honest.minor) < std::pair(floor->major, floor->minor))
        return profile.min_platform_name() + "_" + honest.arch;
    return honest.text;
}

std::vector<Finding> evaluate(const Profile& profile, const WheelReport& report) {
    std::vector<Finding> findings;
    for (const auto& elf : report.elves) add(findings, runtime_finding(profile, elf));
    for (const auto& module : report.modules) add(findings, coverage_finding(profile, module, report.elves));
    for (const auto& elf : report.elves) add_abi_findings(findings, elf, &report.platform_claims);
    auto target = target_platform_tag(profile, report);
    for (const auto& claim : report.platform_claims) add(findings, platform_finding(profile, report, claim, target));
    for (const auto& elf : report.elves)
        add(findings, runpath_finding(profile, elf, wheel::directory_depth(elf.name)));
    return findings;
}

std::vector<Finding> evaluate(const Profile& profile, const ElfReport& report) {
    std::vector<Finding> findings;
    add(findings, runtime_finding(profile, report));
    std::vector<ElfReport> alone{report};
    for (const auto& module : group_cuda_modules(alone)) add(findings, coverage_finding(profile, module, alone));
    add_abi_findings(findings, report, nullptr);
    add(findings, runpath_finding(profile, report, 0));
    return findings;
}

}  // namespace wheelfix::analysis
