// abi_rules: the blacklist, PyFPE, UCS2 and x86-64 ISA-level checks (abi_rules.hpp).
#include "wheelfix/policy/abi_rules.hpp"

#include "data_lines.hpp"
#include "wheelfix/elf/gnu_property.hpp"
#include "wheelfix/policy/manylinux.hpp"

#include <elf.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

extern const char wheelfix_blacklist_policy[];
extern const unsigned long wheelfix_blacklist_policy_size;

namespace wheelfix::policy {

namespace {

using TagNumber = std::pair<int, int>;  // (2, 17) for manylinux_2_17

struct BlacklistRow {
    Family family = Family::manylinux;
    std::string library;
    std::string symbol;
    TagNumber from, through;
};

const char* family_name(Family family) { return family == Family::manylinux ? "manylinux" : "musllinux"; }

TagNumber parse_tag_number(const std::string& text, int line) {
    auto underscore = text.find('_');
    TagNumber number{-1, -1};
    if (underscore != std::string::npos) {
        auto major = std::from_chars(text.data(), text.data() + underscore, number.first);
        auto minor = std::from_chars(text.data() + underscore + 1, text.data() + text.size(), number.second);
        if (major.ec == std::errc() && minor.ec == std::errc() && minor.ptr == text.data() + text.size()) return number;
    }
    throw std::logic_error("blacklist.policy:" + std::to_string(line) + ": '" + text + "' is not a tag number like 2_17");
}

std::vector<BlacklistRow> parse_blacklist(std::string_view text) {
    std::vector<BlacklistRow> rows;
    for_each_data_line(text, [&](const DataLine& line) {
        const auto& f = line.fields;
        if (f.size() != 5 || (f[0] != "manylinux" && f[0] != "musllinux"))
            throw std::logic_error("blacklist.policy:" + std::to_string(line.number) +
                                   ": expected family, library, symbol, from, through");
        rows.push_back({f[0] == "manylinux" ? Family::manylinux : Family::musllinux, f[1], f[2],
                        parse_tag_number(f[3], line.number), parse_tag_number(f[4], line.number)});
    });
    return rows;
}

const std::vector<BlacklistRow>& blacklist() {
    static const std::vector<BlacklistRow> rows =
        parse_blacklist(std::string_view(wheelfix_blacklist_policy, wheelfix_blacklist_policy_size));
    return rows;
}

bool blacklists(const BlacklistRow& row, const ImportedSymbol& import, Family family, TagNumber tag) {
    return row.family == family && row.library == import.library && row.symbol == import.symbol && row.from <= tag &&
           tag <= row.through;
}

// The first blacklist row that keeps `import` from the tag, or nullptr.
const BlacklistRow* blacklisting_row(const ImportedSymbol& import, Family family, TagNumber tag) {
    for (const auto& row : blacklist())
        if (blacklists(row, import, family, tag)) return &row;
    return nullptr;
}

bool imported(const elf::Symbol& symbol) { return !symbol.defined() && symbol.binding != STB_WEAK; }

std::vector<ImportedSymbol> blacklisted_imports(const elf::ElfFile& elf) {
    const auto needed = elf.needed();
    std::vector<ImportedSymbol> found;
    for (const auto& symbol : elf.dynamic_symbols()) {
        if (!imported(symbol)) continue;
        for (const auto& row : blacklist())
            if (row.symbol == symbol.name && std::find(needed.begin(), needed.end(), row.library) != needed.end())
                found.push_back({row.library, row.symbol});
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

std::string isa_name(int level) { return fmt::format("x86-64-v{}", level); }

// The tag numbers of the family on the architecture, oldest first.
std::vector<TagNumber> tags_of(Family family, std::string_view arch) {
    std::vector<TagNumber> tags;
    auto add = [&](const std::string& tag_with_arch) {
        auto parsed = parse_platform_tag(tag_with_arch);
        tags.emplace_back(parsed.major, parsed.minor);
    };
    if (family == Family::manylinux) {
        for (const auto& row : manylinux_policy())
            if (row.arch == arch) add(row.tag + "_" + row.arch);
    } else {
        for (const auto& row : musllinux_policy())
            if (row.arch == arch) add(row.tag + "_" + row.arch);
    }
    return tags;
}

std::string tag_name(Family family, TagNumber tag) {
    return fmt::format("{}_{}_{}", family_name(family), tag.first, tag.second);
}

std::string costs_text(Family family, const std::string& lowest) {
    return lowest.empty() ? fmt::format("no {} tag fits", family_name(family)) : "needs " + lowest + " or newer";
}

}  // namespace

AbiFacts abi_facts(const elf::ElfFile& elf) {
    AbiFacts facts;
    facts.blacklisted_imports = blacklisted_imports(elf);
    facts.pyfpe = pyfpe_import(elf);
    facts.ucs2 = ucs2_import(elf);
    facts.x86_64_level = x86_64_isa_level(elf);
    return facts;
}

AbiFacts merged(const AbiFacts& a, const AbiFacts& b) {
    AbiFacts out = a;
    out.blacklisted_imports.insert(out.blacklisted_imports.end(), b.blacklisted_imports.begin(),
                                   b.blacklisted_imports.end());
    std::sort(out.blacklisted_imports.begin(), out.blacklisted_imports.end());
    out.blacklisted_imports.erase(std::unique(out.blacklisted_imports.begin(), out.blacklisted_imports.end()),
                                  out.blacklisted_imports.end());
    if (out.pyfpe.empty()) out.pyfpe = b.pyfpe;
    if (out.ucs2.empty()) out.ucs2 = b.ucs2;
    out.x86_64_level = std::max(a.x86_64_level, b.x86_64_level);
    return out;
}

std::string abi_violation(const AbiFacts& facts, Family family, int major, int minor, std::string_view arch) {
    if (!facts.pyfpe.empty()) return facts.pyfpe + " (only a Python built --with-fpectl has it)";
    if (!facts.ucs2.empty()) return facts.ucs2 + " (a narrow-unicode UCS2 Python 2)";
    if (facts.x86_64_level >= 2 && arch == "x86_64")
        return isa_name(facts.x86_64_level) + " instructions (GNU_PROPERTY_X86_ISA_1_NEEDED)";
    for (const auto& import : facts.blacklisted_imports)
        if (blacklisting_row(import, family, {major, minor}))
            return fmt::format("{} from {} (blacklisted for {})", import.symbol, import.library,
                               tag_name(family, {major, minor}));
    return {};
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

std::vector<AbiConcern> abi_concerns(const AbiFacts& facts, Family family, std::string_view arch) {
    std::vector<AbiConcern> concerns;
    const std::string none = costs_text(family, "");
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
        concerns.push_back({AbiConcern::Kind::isa, isa_name(facts.x86_64_level),
                            fmt::format("needs {} instructions (GNU_PROPERTY_X86_ISA_1_NEEDED), above the x86-64 "
                                        "baseline every {} tag promises: {}",
                                        isa_name(facts.x86_64_level), family_name(family), none),
                            ""});
    const auto tags = tags_of(family, arch);
    for (const auto& import : facts.blacklisted_imports) {
        std::string lowest;
        for (const auto& tag : tags)
            if (!blacklisting_row(import, family, tag)) {
                lowest = tag_name(family, tag);
                break;
            }
        bool blacklisted_somewhere =
            std::any_of(tags.begin(), tags.end(), [&](const TagNumber& tag) { return blacklisting_row(import, family, tag); });
        if (!blacklisted_somewhere) continue;  // blacklisted only for the other family
        concerns.push_back({AbiConcern::Kind::blacklist, import.library + ": " + import.symbol,
                            fmt::format("imports {} from {}, which the policy blacklists for older tags: {}",
                                        import.symbol, import.library, costs_text(family, lowest)),
                            lowest});
        if (lowest.empty())
            concerns.back().message = fmt::format("imports {} from {}, which every {} tag blacklists: {}", import.symbol,
                                                  import.library, family_name(family), none);
    }
    return concerns;
}

}  // namespace wheelfix::policy
