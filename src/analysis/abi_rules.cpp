// Reading and reporting the blacklist, PyFPE, UCS2 and x86-64 ISA-level facts (abi_rules.hpp).
#include "wheelfix/analysis/abi_rules.hpp"

#include "wheelfix/elf/gnu_property.hpp"

#include <elf.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace wheelfix::analysis {

namespace {

using policy::Family;
using policy::ImportedSymbol;

bool imported(const elf::Symbol& symbol) { return !symbol.defined() && symbol.binding != STB_WEAK; }

std::vector<ImportedSymbol> blacklisted_imports(const elf::ElfFile& elf) {
    const auto needed = elf.needed();
    std::vector<ImportedSymbol> found;
    for (const auto& symbol : elf.dynamic_symbols()) {
        if (!imported(symbol)) continue;
        for (const auto& entry : policy::blacklist_entries())
            if (entry.symbol == symbol.name && std::find(needed.begin(), needed.end(), entry.library) != needed.end())
                found.push_back(entry);
    }
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    return found;
}

std::string pyfpe_import(const elf::ElfFile& elf) {
    static constexpr std::array<std::string_view, 3> kNames{"PyFPE_jbuf", "PyFPE_dummy", "PyFPE_counter"};
    for (const auto& symbol : elf.dynamic_symbols())
        if (!symbol.defined() && (symbol.type == STT_FUNC || symbol.type == STT_NOTYPE) &&
            std::find(kNames.begin(), kNames.end(), symbol.name) != kNames.end())
            return std::string(symbol.name);
    return {};
}

std::string ucs2_import(const elf::ElfFile& elf) {
    for (const auto& symbol : elf.dynamic_symbols())
        if (!symbol.defined() && symbol.type == STT_FUNC && symbol.name.find("PyUnicodeUCS2_") != std::string_view::npos)
            return std::string(symbol.name);
    return {};
}

int x86_64_isa_level(const elf::ElfFile& elf) {
    if (elf.machine() != EM_X86_64) return 0;
    int level = elf::x86_64_level(elf::x86_isa_needed(elf));
    return level >= 2 ? level : 0;
}

// The tag names of the family on the architecture, oldest first.
std::vector<policy::PlatformTag> tags_of(Family family, std::string_view arch) {
    std::vector<policy::PlatformTag> tags;
    const auto add = [&](const auto& table) {
        for (const auto& row : table)
            if (row.arch == arch) tags.push_back(policy::parse_platform_tag(row.tag + "_" + row.arch));
    };
    if (family == Family::manylinux) add(policy::manylinux_policy());
    else add(policy::musllinux_policy());
    return tags;
}

std::string costs_text(Family family, const std::string& lowest) {
    return lowest.empty() ? fmt::format("no {} tag fits", policy::family_name(family)) : "needs " + lowest + " or newer";
}

}  // namespace

policy::NeededVersions needs_of(const elf::ElfFile& elf) {
    policy::NeededVersions needs = policy::needed_versions(elf);
    needs.abi.blacklisted_imports = blacklisted_imports(elf);
    needs.abi.pyfpe = pyfpe_import(elf);
    needs.abi.ucs2 = ucs2_import(elf);
    needs.abi.x86_64_level = x86_64_isa_level(elf);
    return needs;
}

const char* kind_name(AbiConcern::Kind kind) {
    switch (kind) {
        case AbiConcern::Kind::blacklist: return "blacklist";
        case AbiConcern::Kind::pyfpe: return "pyfpe";
        case AbiConcern::Kind::ucs2: return "ucs2";
        case AbiConcern::Kind::isa: return "isa";
    }
    return "unknown";
}

std::vector<AbiConcern> abi_concerns(const policy::AbiFacts& facts, Family family, std::string_view arch) {
    std::vector<AbiConcern> concerns;
    const std::string none = costs_text(family, "");
    const char* family_text = policy::family_name(family);
    if (!facts.pyfpe.empty())
        concerns.push_back({AbiConcern::Kind::pyfpe, facts.pyfpe,
                            fmt::format("imports {}, which only a Python built --with-fpectl has (PEP 513): {}",
                                        facts.pyfpe, none),
                            ""});
    if (!facts.ucs2.empty())
        concerns.push_back({AbiConcern::Kind::ucs2, facts.ucs2,
                            fmt::format("imports {}: built for a narrow-unicode (UCS2) Python 2: {}", facts.ucs2, none),
                            ""});
    if (facts.x86_64_level >= 2 && arch == "x86_64")
        concerns.push_back({AbiConcern::Kind::isa, policy::isa_name(facts.x86_64_level),
                            fmt::format("needs {} instructions (GNU_PROPERTY_X86_ISA_1_NEEDED), above the x86-64 "
                                        "baseline every {} tag promises: {}",
                                        policy::isa_name(facts.x86_64_level), family_text, none),
                            ""});
    const auto tags = tags_of(family, arch);
    for (const auto& import : facts.blacklisted_imports) {
        policy::AbiFacts alone;
        alone.blacklisted_imports = {import};
        auto costs = [&](const policy::PlatformTag& tag) {
            return !policy::abi_violation(alone, family, tag.major, tag.minor, arch).empty();
        };
        if (std::none_of(tags.begin(), tags.end(), costs)) continue;  // blacklisted only for the other family
        std::string lowest;
        if (auto allowed = std::find_if_not(tags.begin(), tags.end(), costs); allowed != tags.end())
            lowest = fmt::format("{}_{}_{}", family_text, allowed->major, allowed->minor);
        const std::string message =
            lowest.empty() ? fmt::format("imports {} from {}, which every {} tag blacklists: {}", import.symbol,
                                         import.library, family_text, none)
                           : fmt::format("imports {} from {}, which the policy blacklists for older tags: {}",
                                         import.symbol, import.library, costs_text(family, lowest));
        concerns.push_back({AbiConcern::Kind::blacklist, import.library + ": " + import.symbol, message, lowest});
    }
    return concerns;
}

std::vector<AbiConcern> abi_concerns(const ElfReport& report) {
    const auto family = report.needs.links_musl ? Family::musllinux : Family::manylinux;
    return abi_concerns(report.needs.abi, family, report.machine);
}

}  // namespace wheelfix::analysis
