// inspect_wheel / inspect_file: reports from one read of the input (wheel_report.hpp).
#include "wheelfix/analysis/wheel_report.hpp"

#include "wheelfix/analysis/variant.hpp"

#include "wheelfix/cuda/fatbin_scan.hpp"
#include "wheelfix/wheel/member_reader.hpp"
#include "wheelfix/policy/library_classes.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/wheel/scan.hpp"
#include "wheelfix/wheel/version.hpp"
#include "wheelfix/wheel/wheel.hpp"
#include "wheelfix/zip/archive.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace wheelfix::analysis {

namespace {

// Whether a member name looks like a shared library: "x.so", "x.so.13", "x.abi3.so".
bool looks_like_shared_library(std::string_view name) {
    auto slash = name.rfind('/');
    std::string_view base = slash == std::string_view::npos ? name : name.substr(slash + 1);
    if (base.ends_with(".so")) return true;
    auto pos = base.find(".so.");
    if (pos == std::string_view::npos) return false;
    auto rest = base.substr(pos + 4);
    return !rest.empty() && std::all_of(rest.begin(), rest.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

// `analyze()`'s report; its ELF and fatbin errors as InputErrors naming `file`.
template <typename Analyze>
ElfReport analyze_or_throw(const std::string& file, Analyze&& analyze) {
    try {
        return analyze();
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

// Whether a host binary (a library or executable of a known machine: cubins and
// other device code are "EM_<n>" and object files are not loaded) can be loaded on
// a platform tag's architecture: same machine and the class the architecture's
// Python runs (an i686 or x32 library in an x86_64 wheel cannot be).
bool loadable_on(const ElfReport& elf, const std::string& arch) {
    if (elf.type == "REL" || elf.machine.starts_with("EM_")) return true;  // not ours to judge
    const bool arm32 = arch.starts_with("armv");
    const bool wants64 = !(arm32 || arch == "i686" || arch == "i386" || arch == "ppc" || arch == "s390" ||
                           arch == "riscv32" || arch == "mips" || arch == "mipsel");
    return (arm32 ? elf.machine == "arm" : elf.machine == arch) && (elf.elf_class == "ELF64") == wants64;
}

// The first member the architecture cannot load, or nullptr.
const ElfReport* foreign_binary(const WheelReport& report, const std::string& arch) {
    for (const auto& elf : report.elves)
        if (!loadable_on(elf, arch)) return &elf;
    return nullptr;
}

// Lowest tag every member fits, for the wheel's architecture: the member needs
// combined, then one policy lookup. A claim whose architecture cannot load one of
// the binaries lies whatever the symbol versions say.
void judge_platform(WheelReport& report, const std::vector<std::string>& platform_tags) {
    std::string arch;
    for (const auto& elf : report.elves) {
        report.needs = policy::newest(report.needs, elf.needs);
        if (arch.empty()) arch = elf.machine;
    }
    if (report.elves.empty()) return;
    report.honest_tag = policy::honest_tag(report.needs, arch);
    report.symbol_tag = report.honest_tag;

    for (const auto& text : platform_tags) {
        auto tag = policy::parse_platform_tag(text);
        PlatformClaim claim{text, {}, false, {}, {}};
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
        } else if (tag.kind == policy::PlatformTag::Kind::musllinux) {
            const auto number = std::to_string(tag.major) + "_" + std::to_string(tag.minor);
            policy::MusllinuxTag row{"musllinux_" + number, tag.arch, std::to_string(tag.major) + "." + std::to_string(tag.minor)};
            claim.violation = policy::first_musl_violation(report.needs, row);
        }
        if (const ElfReport* foreign = tag.arch.empty() ? nullptr : foreign_binary(report, tag.arch)) {
            claim.foreign_binary = foreign->name;  // "i686 (pkg/lib32.so is ELF32 i686)"
            claim.violation = foreign->machine + " (" + foreign->name + " is " + foreign->elf_class + " " + foreign->machine + ")";
        }
        claim.lies = !claim.violation.empty();
        report.platform_claims.push_back(std::move(claim));
    }
}

}  // namespace

std::vector<const zip::Member*> library_members(const zip::Archive& archive) {
    std::vector<const zip::Member*> libraries;
    for (const zip::Member& member : archive.members())
        if (!member.is_directory && !member.is_symlink && looks_like_shared_library(member.name)) libraries.push_back(&member);
    return libraries;
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
    report.torch_requirements = wheel.torch_requirements();
    report.elves = std::move(elves);
    report.member_count = digests.size();
    report.modules = group_cuda_modules(report.elves);
    for (const auto& digest : digests)
        if (!digest.is_elf && looks_like_shared_library(digest.member->name)) report.not_elf.push_back(digest.member->name);
    report.record_findings = wheel::verify_wheel(wheel, digests);
    judge_platform(report, name.platform_tags);
    attach_variant(report, wheel);
    return report;
}

ElfReport analyze_member(const wheel::Wheel& wheel, const std::string& member, const elf::ElfFile& elf) {
    return analyze_or_throw(wheel.archive().path().string() + ": " + member,
                            [&] { return analyze_elf(member, elf, wheel::directory_depth(member)); });
}

ElfReport analyze_image(wheel::MemberImage& image, const std::string& label, const std::string& member) {
    return image.read([&](std::span<const std::uint8_t> bytes, const ByteRanges* present) {
        return analyze_or_throw(label, [&] { return analyze_elf(member, bytes, wheel::directory_depth(member), present); });
    });
}

WheelReport inspect_wheel(const std::filesystem::path& path) {
    return inspect_wheel(path, [](const zip::Member&) { return std::optional<KnownMember>(); });
}

WheelReport inspect_wheel(const std::filesystem::path& path, const KnownMembers& known) {
    auto wheel = wheel::Wheel::open(path, wheel::WheelVersion::report);
    std::map<const zip::Member*, KnownMember> known_members;
    for (const auto& member : wheel.archive().members())
        if (!member.is_directory)
            if (auto knowledge = known(member)) known_members.emplace(&member, std::move(*knowledge));
    const auto& members = wheel.archive().members();
    std::vector<std::optional<ElfReport>> read_elves(members.size());  // by member position
    // Each ELF member's report to its own slot (members are read on several threads).
    auto read = wheel::scan_members_streaming(
        wheel.archive(), wheel::Keeps::analysis,
        [&](const zip::Member& member, wheel::MemberImage& image) {
            read_elves[static_cast<std::size_t>(&member - members.data())].emplace(
                analyze_image(image, wheel.archive().path().string() + ": " + member.name, member.name));
        },
        [&](const zip::Member& member) { return !known_members.contains(&member); });
    // Both in member order again.
    std::vector<wheel::MemberDigest> digests;
    std::vector<ElfReport> elves;
    auto next_read = read.begin();
    for (const auto& member : wheel.archive().members()) {
        if (member.is_directory) continue;
        if (auto it = known_members.find(&member); it != known_members.end()) {
            digests.push_back(it->second.digest);
            digests.back().member = &member;
            if (digests.back().is_elf && it->second.elf != nullptr) elves.push_back(*it->second.elf);
            continue;
        }
        digests.push_back(*next_read++);
        if (auto& report = read_elves[static_cast<std::size_t>(&member - members.data())]) elves.push_back(std::move(*report));
    }
    return wheel_report(wheel, digests, std::move(elves));
}

namespace {

// What a claim of the file name owes the libraries: the first outside library
// (no manylinux/musllinux tag holds while one is needed), else the first system
// library the claimed tag's policy does not allow yet; "" when it owes nothing.
std::string library_violation(const WheelReport& report, const policy::PlatformTag& claimed,
                              const std::vector<std::string>& system_names) {
    if (!report.outside_libraries.empty()) {
        const auto& first = report.outside_libraries.front();
        return first.name + " from outside the wheel (" + library_class_name(first.library_class) + ")";
    }
    const std::string family = claimed.kind == policy::PlatformTag::Kind::musllinux ? "musllinux_" : "manylinux_";
    const std::string base = family + std::to_string(claimed.major) + "_" + std::to_string(claimed.minor);
    for (const auto& name : system_names)
        if (auto allowed_from = policy::tag_allowing(base, {name}, claimed.arch, report.needs.links_musl); allowed_from != base)
            return name + " (allowed from " + allowed_from + ")";
    return {};
}

// The tag judged by the resolved libraries (attach_libraries' contract).
void judge_libraries(WheelReport& report) {
    if (report.elves.empty()) return;
    const auto system_names = report.libraries->names_of(LibraryClass::system);
    report.outside_libraries = report.libraries->outside_wheel();
    report.honest_tag = report.outside_libraries.empty()
                            ? policy::tag_allowing(report.honest_tag, system_names, report.elves.front().machine,
                                                   report.needs.links_musl)
                            : std::string();
    for (auto& claim : report.platform_claims) {
        auto tag = policy::parse_platform_tag(claim.tag);
        if (claim.lies || (tag.kind != policy::PlatformTag::Kind::manylinux && tag.kind != policy::PlatformTag::Kind::musllinux))
            continue;
        claim.violation = library_violation(report, tag, system_names);
        claim.lies = !claim.violation.empty();
    }
}

}  // namespace

void attach_libraries(WheelReport& report, const SearchContext& context) {
    std::vector<WheelElf> view;
    std::set<std::string> elf_members;
    for (const auto& elf : report.elves) {
        view.push_back({elf.name, installed_path(elf.name).value_or(""), &elf});
        elf_members.insert(elf.name);
    }
    std::vector<std::string> others;
    auto archive = zip::Archive::open(report.path);
    for (const auto& member : archive.members())
        if (!elf_members.contains(member.name) && member.name.find(".dist-info/") == std::string::npos)
            if (auto installed = installed_path(member.name)) others.push_back(*installed);
    SearchContext wheel_context = context;
    for (const auto& elf : report.elves) {
        wheel_context.musl = wheel_context.musl || elf.needs.links_musl;
        if (!wheel_context.cuda_major && elf.cudart_major) wheel_context.cuda_major = elf.cudart_major;
    }
    report.libraries = resolve_needed(view, others, wheel_context);
    judge_libraries(report);
}

ElfReport inspect_file(const std::filesystem::path& path) {
    MappedFile mapped(path);
    auto bytes = mapped.bytes();
    if (!elf::is_elf(bytes)) throw InputError(path.string(), "not an ELF file and not a wheel");
    return analyze_or_throw(path.string(), [&] { return analyze_elf(path.string(), bytes, std::nullopt); });
}

}  // namespace wheelfix::analysis
