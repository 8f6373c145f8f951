// What costs a binary its manylinux/musllinux tag beyond symbol versions: the four
// checks `auditwheel show` makes besides the version floor.
//
// Contract:
// - abi_facts(elf) reads one ELF file and records what the rules below judge:
//   * blacklisted imports: symbols the file imports (undefined and not weak, as
//     auditwheel counts them) by a name that src/policy/data/blacklist.policy lists
//     for a library the file NEEDs (libz.so.1 `_tr_init`, libc.so.6
//     `__cxa_thread_atexit_impl`, ...), with that library; sorted, no duplicates.
//   * PyFPE: an import of PyFPE_jbuf, PyFPE_dummy or PyFPE_counter (function or no
//     type), which only a Python built --with-fpectl exports (PEP 513).
//   * UCS2: a function import whose name has PyUnicodeUCS2_ (a narrow-unicode
//     Python 2, which manylinux does not support).
//   * the x86-64 level of GNU_PROPERTY_X86_ISA_1_NEEDED (elf/gnu_property.hpp) of an
//     x86_64 file: 2, 3 or 4 when above the baseline, else 0 (i686 files are not
//     judged: auditwheel 6.x does not either).
//   merged(a, b) is what a wheel holding both files shows.
// - abi_violation(facts, family, major, minor, arch) is why the facts keep a binary
//   from `family`_major_minor on `arch` — one line naming the first offending fact —
//   or "" when they do not. The costs, as auditwheel 6.8 has them (wheel_abi.py):
//   a blacklisted import costs the tags the data file names for it; PyFPE, UCS2 and
//   an x86-64 level above the baseline cost every manylinux and musllinux tag.
// - abi_concerns(facts, family, arch) lists each fact with the lowest tag of the
//   family on that architecture it allows by itself ("" when it allows none), for
//   reports.
#pragma once

#include "wheelfix/elf/elf_file.hpp"

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

AbiFacts abi_facts(const elf::ElfFile& elf);
AbiFacts merged(const AbiFacts& a, const AbiFacts& b);

enum class Family { manylinux, musllinux };

std::string abi_violation(const AbiFacts& facts, Family family, int major, int minor, std::string_view arch);

struct AbiConcern {
    enum class Kind { blacklist, pyfpe, ucs2, isa };
    Kind kind = Kind::blacklist;
    std::string what;        // "libz.so.1: _tr_init", "PyFPE_jbuf", "PyUnicodeUCS2_AsUTF8String", "x86-64-v3"
    std::string message;     // one line: what it is and what it costs
    std::string lowest_tag;  // "manylinux_2_34": the lowest tag it allows on the arch; "" = none
};

const char* kind_name(AbiConcern::Kind kind);  // "blacklist", "pyfpe", "ucs2", "isa"
std::vector<AbiConcern> abi_concerns(const AbiFacts& facts, Family family, std::string_view arch);

}  // namespace wheelfix::policy
