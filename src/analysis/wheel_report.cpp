// inspect_wheel / inspect_file: assemble reports from one read of the input.
#include "wheelfix/analysis/wheel_report.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/wheel/scan.hpp"
#include "wheelfix/wheel/version.hpp"
#include "wheelfix/wheel/wheel.hpp"

#include <algorithm>

namespace wheelfix::analysis {

namespace {

ElfReport analyze_or_throw(const std::string& file, std::string name, std::span<const std::uint8_t> bytes,
                           std::optional<int> depth) {
    try {
        return analyze_elf(std::move(name), bytes, depth);
    } catch (const elf::ElfError& error) {
        throw InputError(file, std::string("invalid ELF: ") + error.what());
    } catch (const cuda::FatbinError& error) {
        throw InputError(file, std::string("invalid CUDA fatbin: ") + error.what());
    }
}

std::string local_segment(const std::string& version_text) {
    auto plus = version_text.find('+');
    return plus == std::string::npos ? std::string() : version_text.substr(plus + 1);
}

// Lowest tag every member fits, for the wheel's architecture: the member needs
// combined, then one policy lookup.
void judge_platform(WheelReport& report, const std::vector<std::string>& platform_tags) {
    std::string arch;
    for (const auto& elf : report.elves) {
        report.needs = policy::newest(report.needs, elf.needs);
        if (arch.empty()) arch = elf.machine;
    }
    if (report.elves.empty()) return;
    report.honest_tag = policy::honest_tag(report.needs, arch);

    for (const auto& text : platform_tags) {
        auto tag = policy::parse_platform_tag(text);
        PlatformClaim claim{text, {}, false, {}};
        if (tag.kind == policy::PlatformTag::Kind::manylinux) {
            claim.glibc_floor = std::to_string(tag.major) + "." + std::to_string(tag.minor);
            for (const auto& row : policy::manylinux_policy()) {
                if (row.arch != tag.arch || row.glibc_floor != claim.glibc_floor) continue;
                claim.violation = policy::first_violation(report.needs, row);
                break;
            }
            if (claim.violation.empty() && !report.needs.glibc.empty() &&
                policy::compare_dotted(report.needs.glibc, claim.glibc_floor) > 0)
                claim.violation = "GLIBC_" + report.needs.glibc;
            if (report.needs.links_musl) claim.violation = "links musl libc";
        } else if (tag.kind == policy::PlatformTag::Kind::musllinux && !report.needs.glibc.empty()) {
            claim.violation = "links glibc (GLIBC_" + report.needs.glibc + ")";
        } else if (tag.kind == policy::PlatformTag::Kind::musllinux && !report.needs.musl.empty() &&
                   policy::compare_dotted(report.needs.musl, std::to_string(tag.major) + "." + std::to_string(tag.minor)) > 0) {
            claim.violation = "musl " + report.needs.musl + " (64-bit time_t)";
        }
        claim.lies = !claim.violation.empty();
        report.platform_claims.push_back(std::move(claim));
    }
}

}  // namespace

bool looks_like_shared_library(std::string_view name) {
    auto slash = name.rfind('/');
    std::string_view base = slash == std::string_view::npos ? name : name.substr(slash + 1);
    if (base.ends_with(".so")) return true;
    auto pos = base.find(".so.");
    if (pos == std::string_view::npos) return false;
    auto rest = base.substr(pos + 4);
    return !rest.empty() && std::all_of(rest.begin(), rest.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

WheelReport wheel_report(const wheel::Wheel& wheel, const std::vector<wheel::MemberDigest>& digests,
                         std::vector<ElfReport> elves) {
    const auto& name = wheel.filename();
    WheelReport report;
    report.path = wheel.archive().path().string();
    report.distribution = wheel.metadata_name();
    report.version = wheel.metadata_version();
    report.filename_version = name.version;
    report.local_version = local_segment(name.version);
    report.tags = name.tags();
    for (const auto& requirement : wheel.torch_requirements()) {
        std::string text = requirement.name + (requirement.specifier.empty() ? "" : " " + requirement.specifier);
        if (!requirement.marker.empty()) text += "; " + requirement.marker;
        report.torch_requirements.push_back(std::move(text));
    }
    report.elves = std::move(elves);
    report.member_count = digests.size();
    report.modules = group_cuda_modules(report.elves);
    for (const auto& digest : digests)
        if (!digest.is_elf && looks_like_shared_library(digest.member->name)) report.not_elf.push_back(digest.member->name);
    report.record_findings = wheel::verify_wheel(wheel, digests);
    judge_platform(report, name.platform_tags);
    return report;
}

ElfReport analyze_member(const wheel::Wheel& wheel, const std::string& member, std::span<const std::uint8_t> image) {
    return analyze_or_throw(wheel.archive().path().string() + ": " + member, member, image, wheel::directory_depth(member));
}

WheelReport inspect_wheel(const std::filesystem::path& path) {
    auto wheel = wheel::Wheel::open(path);
    std::vector<ElfReport> elves;
    auto digests = wheel::scan_members(wheel.archive(), [&](const zip::Member& member, std::span<const std::uint8_t> image) {
        elves.push_back(analyze_member(wheel, member.name, image));
    });
    return wheel_report(wheel, digests, std::move(elves));
}

ElfReport inspect_file(const std::filesystem::path& path) {
    MappedFile mapped(path);
    auto bytes = mapped.bytes();
    if (!elf::is_elf(bytes)) throw InputError(path.string(), "not an ELF file and not a wheel");
    return analyze_or_throw(path.string(), path.string(), bytes, std::nullopt);
}

}  // namespace wheelfix::analysis
