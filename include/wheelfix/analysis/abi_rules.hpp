// The four facts `auditwheel show` judges besides the version floor, read from an
// ELF file and reported with what each costs (the costs themselves are data:
// policy/abi_costs.hpp).
//
// Contract:
// - needs_of(elf) is policy::needed_versions(elf), what the tag rules
//   (policy/manylinux.hpp) judge of one file, with `abi` read from the file:
//   * blacklisted imports: symbols the file imports (undefined and not weak, as
//     auditwheel counts them) by a name policy::blacklist_entries() lists for a
//     library the file NEEDs (libz.so.1 `_tr_init`, libc.so.6
//     `__cxa_thread_atexit_impl`, ...), with that library; sorted, no duplicates.
//   * PyFPE: an import of PyFPE_jbuf, PyFPE_dummy or PyFPE_counter (function or no
//     type), which only a Python built --with-fpectl exports (PEP 513).
//   * UCS2: a function import whose name has PyUnicodeUCS2_ (a narrow-unicode
//     Python 2, which manylinux does not support).
//   * the x86-64 level of GNU_PROPERTY_X86_ISA_1_NEEDED (elf/gnu_property.hpp) of an
//     x86_64 file: 2, 3 or 4 when above the baseline, else 0 (i686 files are not
//     judged: auditwheel 6.x does not either).
// - abi_concerns(facts, family, arch) lists each fact with the lowest tag of the
//   family on that architecture it allows by itself ("" when it allows none), for
//   reports; a blacklisted import the family's tags never blacklist is left out.
#pragma once

#include "wheelfix/analysis/elf_report.hpp"
#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/policy/abi_costs.hpp"
#include "wheelfix/policy/manylinux.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::analysis {

policy::NeededVersions needs_of(const elf::ElfFile& elf);

struct AbiConcern {
    enum class Kind { blacklist, pyfpe, ucs2, isa };
    Kind kind = Kind::blacklist;
    std::string what;        // "libz.so.1: _tr_init", "PyFPE_jbuf", "PyUnicodeUCS2_AsUTF8String", "x86-64-v3"
    std::string message;     // one line: what it is and what it costs
    std::string lowest_tag;  // "manylinux_2_34": the lowest tag it allows on the arch; "" = none
};

const char* kind_name(AbiConcern::Kind kind);  // "blacklist", "pyfpe", "ucs2", "isa"
std::vector<AbiConcern> abi_concerns(const policy::AbiFacts& facts, policy::Family family, std::string_view arch);
// Of one file's report: judged in its libc family (musllinux when it links musl) on its architecture.
std::vector<AbiConcern> abi_concerns(const ElfReport& report);

}  // namespace wheelfix::analysis
