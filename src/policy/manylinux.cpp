// manylinux policy: the embedded table, version comparison and tag selection.
#include "wheelfix/policy/manylinux.hpp"

#include "data_lines.hpp"

#include <elf.h>

#include <charconv>
#include <map>
#include <optional>
#include <set>

extern const char wheelfix_manylinux_policy[];
extern const unsigned long wheelfix_manylinux_policy_size;
extern const char wheelfix_musllinux_policy[];
extern const unsigned long wheelfix_musllinux_policy_size;
extern const char wheelfix_musl_functions[];
extern const unsigned long wheelfix_musl_functions_size;

namespace wheelfix::policy {

namespace {

std::vector<std::uint64_t> dotted_parts(std::string_view text) {
    std::vector<std::uint64_t> parts;
    while (!text.empty()) {
        auto dot = text.find('.');
        std::string_view piece = text.substr(0, dot);
        std::uint64_t number = 0;
        std::from_chars(piece.data(), piece.data() + piece.size(), number);
        parts.push_back(number);
        if (dot == std::string_view::npos) break;
        text.remove_prefix(dot + 1);
    }
    return parts;
}

void keep_newest(std::string& current, std::string_view candidate) {
    if (current.empty() || compare_dotted(candidate, current) > 0) current = std::string(candidate);
}

bool starts_with_digit(std::string_view text) { return !text.empty() && text[0] >= '0' && text[0] <= '9'; }

// "GLIBC_2.17" -> family "GLIBC", version "2.17"; "GLIBC_PRIVATE" is not a version.
void record_version_need(NeededVersions& needs, std::string_view name) {
    auto underscore = name.rfind('_');
    if (underscore == std::string_view::npos) return;
    std::string_view version = name.substr(underscore + 1);
    if (!starts_with_digit(version)) return;
    for (const VersionFamily& family : kVersionFamilies)
        if (name.substr(0, underscore) == family.prefix) keep_newest(needs.*family.need, version);
}

std::string dash_to_empty(const std::string& field) { return field == "-" ? std::string() : field; }

std::vector<ManylinuxTag> parse_policy(std::string_view text) {
    std::vector<ManylinuxTag> table;
    for_each_data_line(text, [&](const DataLine& line) {
        if (line.fields.size() != 9)
            throw std::logic_error("manylinux.policy:" + std::to_string(line.number) + ": expected 9 fields");
        ManylinuxTag row;
        row.tag = line.fields[0];
        row.alias = dash_to_empty(line.fields[1]);
        row.arch = line.fields[2];
        for (std::size_t i = 1; i < std::size(kVersionFamilies); ++i)  // column 3 + i: family i (glibc: the tag number)
            row.*kVersionFamilies[i].allowed = dash_to_empty(line.fields[3 + i]);
        auto parsed = parse_platform_tag(row.tag + "_" + row.arch);
        row.glibc_floor = std::to_string(parsed.major) + "." + std::to_string(parsed.minor);
        table.push_back(std::move(row));
    });
    return table;
}

std::vector<MusllinuxTag> parse_musl_policy(std::string_view text) {
    std::vector<MusllinuxTag> table;
    for_each_data_line(text, [&](const DataLine& line) {
        if (line.fields.size() != 2)
            throw std::logic_error("musllinux.policy:" + std::to_string(line.number) + ": expected 2 fields");
        MusllinuxTag row{line.fields[0], line.fields[1], {}};
        auto parsed = parse_platform_tag(row.tag + "_" + row.arch);
        row.musl_floor = std::to_string(parsed.major) + "." + std::to_string(parsed.minor);
        table.push_back(std::move(row));
    });
    return table;
}

// musl 1.2 made time_t 64-bit on 32-bit targets; code compiled against its headers
// calls the new entry points (__clock_gettime64, __stat_time64, __time64, ...),
// which musl 1.1 does not have. On 64-bit targets nothing changed.
bool calls_musl_time64(const elf::ElfFile& elf) {
    if (elf.elf_class() != elf::Class::elf32) return false;
    for (const auto& symbol : elf.dynamic_symbols())
        if (!symbol.defined() && symbol.name.starts_with("__") && symbol.name.find("time64") != std::string_view::npos)
            return true;
    return false;
}

// src/policy/data/musl-functions.policy: function -> the musl release that added it.
const std::map<std::string, std::string, std::less<>>& musl_functions() {
    static const auto table = [] {
        std::map<std::string, std::string, std::less<>> functions;
        for_each_data_line(std::string_view(wheelfix_musl_functions, wheelfix_musl_functions_size),
                           [&](const DataLine& line) {
                               if (line.fields.size() != 2)
                                   throw std::logic_error("musl-functions.policy:" + std::to_string(line.number) +
                                                          ": expected 2 fields");
                               functions.emplace(line.fields[0], line.fields[1]);
                           });
        return functions;
    }();
    return table;
}

// The newest musl 1.2.x function `elf` imports, as {release, name}; nullopt for none.
std::optional<std::pair<std::string, std::string>> newest_musl_function(const elf::ElfFile& elf) {
    std::optional<std::pair<std::string, std::string>> newest;
    const auto& functions = musl_functions();
    for (const auto& symbol : elf.dynamic_symbols()) {
        if (symbol.defined()) continue;
        auto found = functions.find(symbol.name);
        if (found == functions.end()) continue;
        if (!newest || compare_dotted(found->second, newest->first) > 0) newest.emplace(found->second, found->first);
    }
    return newest;
}

// "1.2.2" -> "1.2": the series a musllinux tag names.
std::string musl_series(const std::string& version) {
    const auto first = version.find('.');
    return first == std::string::npos ? version : version.substr(0, version.find('.', first + 1));
}

// A shared object built on Alpine often has no NEEDED libc at all (the toolchain
// links --as-needed and CPython 3.10 names extensions *-linux-gnu.so even on musl):
// then the compiler's .comment ("GCC: (Alpine 14.2.0) 14.2.0") is the only trace.
// Trusted only when nothing in the file speaks for glibc.
bool built_by_musl_toolchain(const elf::ElfFile& elf, const NeededVersions& needs) {
    if (!needs.glibc.empty()) return false;
    for (auto library : elf.needed())
        if (library == "libc.so.6") return false;
    for (const auto& section : elf.sections()) {
        if (section.name != ".comment" || section.type == SHT_NOBITS) continue;
        auto bytes = elf.section_bytes(section);
        std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        if (text.find("(Alpine ") != std::string_view::npos) return true;
    }
    return false;
}

bool allows(const std::string& allowed_newest, const std::string& needed) {
    if (needed.empty()) return true;
    return !allowed_newest.empty() && compare_dotted(needed, allowed_newest) <= 0;
}

bool parse_int(std::string_view text, int& out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

int compare_dotted(std::string_view a, std::string_view b) {
    auto left = dotted_parts(a);
    auto right = dotted_parts(b);
    for (std::size_t i = 0; i < std::max(left.size(), right.size()); ++i) {
        std::uint64_t l = i < left.size() ? left[i] : 0;
        std::uint64_t r = i < right.size() ? right[i] : 0;
        if (l != r) return l < r ? -1 : 1;
    }
    return 0;
}

NeededVersions needed_versions(const elf::ElfFile& elf) {
    NeededVersions needs;
    for (const auto& need : elf.version_needs())
        for (const auto& version : need.versions) record_version_need(needs, version.name);
    for (auto library : elf.needed())
        if (library.starts_with("libc.musl-") || library == "libc.so") needs.links_musl = true;  // libc.so: musl's own SONAME
    for (const auto& header : elf.program_headers()) {
        if (header.type != PT_INTERP) continue;
        auto bytes = elf.bytes_at(header.offset, header.filesz);
        std::string_view interp(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        if (interp.find("ld-musl-") != std::string_view::npos) needs.links_musl = true;
    }
    if (!needs.links_musl) needs.links_musl = built_by_musl_toolchain(elf, needs);
    if (calls_musl_time64(elf)) {
        needs.musl = "1.2";
        needs.musl_reason = "64-bit time_t";
    }
    if (needs.links_musl)
        if (auto function = newest_musl_function(elf); function && compare_dotted(function->first, needs.musl) > 0) {
            needs.musl = function->first;
            needs.musl_reason = function->second;
        }
    return needs;
}

NeededVersions newest(const NeededVersions& a, const NeededVersions& b) {
    NeededVersions out = a;
    for (const VersionFamily& family : kVersionFamilies)
        if (!(b.*family.need).empty()) keep_newest(out.*family.need, b.*family.need);
    if (!b.musl.empty() && compare_dotted(b.musl, out.musl) > 0) {
        out.musl = b.musl;
        out.musl_reason = b.musl_reason;
    }
    out.links_musl = a.links_musl || b.links_musl;
    out.abi = merged(a.abi, b.abi);
    return out;
}

const std::vector<ManylinuxTag>& manylinux_policy() {
    static const std::vector<ManylinuxTag> table =
        parse_policy(std::string_view(wheelfix_manylinux_policy, wheelfix_manylinux_policy_size));
    return table;
}

std::string first_violation(const NeededVersions& needs, const ManylinuxTag& tag) {
    for (const VersionFamily& family : kVersionFamilies) {
        const std::string& need = needs.*family.need;
        const bool allowed = family.allowed ? allows(tag.*family.allowed, need)
                                            : need.empty() || compare_dotted(need, tag.glibc_floor) <= 0;
        if (!allowed) return std::string(family.prefix) + "_" + need;
    }
    auto number = parse_platform_tag(tag.tag + "_" + tag.arch);
    return abi_violation(needs.abi, Family::manylinux, number.major, number.minor, tag.arch);
}

const ManylinuxTag* lowest_manylinux_tag(const NeededVersions& needs, std::string_view arch) {
    for (const auto& row : manylinux_policy())
        if (row.arch == arch && first_violation(needs, row).empty()) return &row;
    return nullptr;
}

const std::vector<MusllinuxTag>& musllinux_policy() {
    static const std::vector<MusllinuxTag> table =
        parse_musl_policy(std::string_view(wheelfix_musllinux_policy, wheelfix_musllinux_policy_size));
    return table;
}

const MusllinuxTag* lowest_musllinux_tag(const NeededVersions& needs, std::string_view arch) {
    for (const auto& row : musllinux_policy())
        if (row.arch == arch && first_musl_violation(needs, row).empty()) return &row;
    return nullptr;
}

std::string first_musl_violation(const NeededVersions& needs, const MusllinuxTag& tag) {
    if (!needs.musl.empty() && compare_dotted(musl_series(needs.musl), tag.musl_floor) > 0)
        return "musl " + needs.musl + " (" + needs.musl_reason + ")";
    auto number = parse_platform_tag(tag.tag + "_" + tag.arch);
    return abi_violation(needs.abi, Family::musllinux, number.major, number.minor, tag.arch);
}

std::string honest_tag(const NeededVersions& needs, std::string_view arch) {
    if (needs.links_musl) {
        const auto* tag = lowest_musllinux_tag(needs, arch);
        return tag ? tag->tag : std::string();
    }
    const auto* tag = lowest_manylinux_tag(needs, arch);
    return tag ? tag->tag : std::string();
}

std::string platform_arch(const elf::ElfFile& elf) {
    // Platform tags name every 32-bit hard-float ARM level in use for wheels
    // "armv7l" (the policy has no armv6l rows). A soft-float binary (EABI without
    // EF_ARM_ABI_FLOAT_HARD: armel, "armv5l") cannot load in a hard-float process,
    // so it is "armv5l", which no manylinux tag covers (auditwheel refuses it too).
    constexpr std::uint32_t kArmAbiFloatHard = 0x400;
    if (elf.machine() == EM_ARM) return (elf.flags() & kArmAbiFloatHard) != 0 ? "armv7l" : "armv5l";
    return elf.machine_name();
}

PlatformTag parse_platform_tag(std::string_view tag) {
    PlatformTag out;
    out.text = std::string(tag);
    auto legacy = [&](std::string_view prefix, int minor) {
        if (!tag.starts_with(prefix)) return false;
        out.kind = PlatformTag::Kind::manylinux;
        out.major = 2;
        out.minor = minor;
        out.arch = std::string(tag.substr(prefix.size()));
        return true;
    };
    if (legacy("manylinux1_", 5) || legacy("manylinux2010_", 12) || legacy("manylinux2014_", 17)) return out;
    auto versioned = [&](std::string_view prefix, PlatformTag::Kind kind) {
        if (!tag.starts_with(prefix)) return false;
        std::string_view rest = tag.substr(prefix.size());
        auto first = rest.find('_');
        if (first == std::string_view::npos) return false;
        auto second = rest.find('_', first + 1);
        if (second == std::string_view::npos) return false;
        int major = 0, minor = 0;
        if (!parse_int(rest.substr(0, first), major) ||
            !parse_int(rest.substr(first + 1, second - first - 1), minor))
            return false;
        out.kind = kind;
        out.major = major;
        out.minor = minor;
        out.arch = std::string(rest.substr(second + 1));
        return true;
    };
    if (versioned("manylinux_", PlatformTag::Kind::manylinux) || versioned("musllinux_", PlatformTag::Kind::musllinux))
        return out;
    if (tag.starts_with("linux_")) {
        out.kind = PlatformTag::Kind::linux;
        out.arch = std::string(tag.substr(6));
    }
    return out;
}

std::string platform_change_problem(const std::vector<std::string>& before, const std::vector<std::string>& after) {
    std::set<std::string> arches;
    bool was_any = false, was_glibc = false, was_musl = false;
    for (const auto& text : before) {
        auto tag = parse_platform_tag(text);
        was_any |= text == "any";
        was_glibc |= tag.kind == PlatformTag::Kind::manylinux;
        was_musl |= tag.kind == PlatformTag::Kind::musllinux;
        if (!tag.arch.empty()) arches.insert(tag.arch);
    }
    for (const auto& text : after) {
        if (text == "any") {
            if (was_any) continue;
            return "'any' for a wheel tagged for a platform: only repair, which reads the binaries, may judge that";
        }
        auto tag = parse_platform_tag(text);
        if (tag.kind == PlatformTag::Kind::other || tag.arch.empty())
            return "'" + text + "' is not a Linux platform tag (manylinux_X_Y_ARCH, musllinux_X_Y_ARCH, linux_ARCH)";
        if (!arches.empty() && !arches.contains(tag.arch))
            return "'" + text + "' is for " + tag.arch + ", the wheel is for " + *arches.begin() +
                   (arches.size() > 1 ? " and more" : "") + ": retagging does not change what its binaries run on";
        if (was_glibc && tag.kind == PlatformTag::Kind::musllinux)
            return "'" + text + "' is musl, the wheel is tagged for glibc (manylinux)";
        if (was_musl && tag.kind == PlatformTag::Kind::manylinux)
            return "'" + text + "' is glibc, the wheel is tagged for musl (musllinux)";
    }
    return "";
}

}  // namespace wheelfix::policy
