// What costs a binary its manylinux/musllinux tag beyond symbol versions, as data:
// the four facts `auditwheel show` judges besides the version floor, and the tags
// each costs. Reading those facts from an ELF file, and the per-fact report, are
// analysis/abi_rules.hpp's.
//
// Contract:
// - AbiFacts holds the facts of one file or (merged(a, b)) of a wheel holding both:
//   blacklisted imports (library, symbol; sorted, no duplicates), a PyFPE_* import,
//   a PyUnicodeUCS2_* function import, the x86-64 ISA level above the baseline.
// - blacklist_entries() is every (library, symbol) pair that
//   src/policy/data/blacklist.policy lists for some tag of either family, sorted,
//   no duplicates: what a reader looks for among a file's imports.
// - abi_violation(facts, family, major, minor, arch) is why the facts keep a binary
//   from `family`_major_minor on `arch` — one line naming the first offending fact —
//   or "" when they do not. The costs, as auditwheel 6.8 has them (wheel_abi.py):
//   a blacklisted import costs the tags the data file names for it; PyFPE, UCS2 and
//   an x86-64 level above the baseline cost every manylinux and musllinux tag (the
//   ISA level on x86_64 only).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::policy {

struct ImportedSymbol {
    std::string library;  // "libz.so.1"
    std::string symbol;   // "_tr_init"
    auto operator<=>(const ImportedSymbol&) const = default;
};

struct AbiFacts {
    std::vector<ImportedSymbol> blacklisted_imports;
    std::string pyfpe;       // the PyFPE_* symbol imported, or empty
    std::string ucs2;        // the first PyUnicodeUCS2_* function imported, or empty
    int x86_64_level = 0;    // 2, 3, 4, or 0 for the baseline / no note / not x86_64
};

AbiFacts merged(const AbiFacts& a, const AbiFacts& b);

enum class Family { manylinux, musllinux };
const char* family_name(Family family);  // "manylinux", "musllinux"

const std::vector<ImportedSymbol>& blacklist_entries();
std::string abi_violation(const AbiFacts& facts, Family family, int major, int minor, std::string_view arch);
std::string isa_name(int level);  // "x86-64-v3"

}  // namespace wheelfix::policy
