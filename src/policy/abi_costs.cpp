// The tags the blacklist, PyFPE, UCS2 and an x86-64 ISA level cost (abi_costs.hpp).
#include "wheelfix/policy/abi_costs.hpp"

#include "data_lines.hpp"

#include <fmt/format.h>

#include <algorithm>
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

std::string tag_name(Family family, TagNumber tag) {
    return fmt::format("{}_{}_{}", family_name(family), tag.first, tag.second);
}

}  // namespace

const char* family_name(Family family) { return family == Family::manylinux ? "manylinux" : "musllinux"; }

std::string isa_name(int level) { return fmt::format("x86-64-v{}", level); }

const std::vector<ImportedSymbol>& blacklist_entries() {
    static const std::vector<ImportedSymbol> entries = [] {
        std::vector<ImportedSymbol> all;
        for (const auto& row : blacklist()) all.push_back({row.library, row.symbol});
        std::sort(all.begin(), all.end());
        all.erase(std::unique(all.begin(), all.end()), all.end());
        return all;
    }();
    return entries;
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

}  // namespace wheelfix::policy
