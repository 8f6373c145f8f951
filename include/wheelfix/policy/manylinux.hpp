// manylinux / musllinux policy: which platform tag a binary can honestly carry.
//
// Contract:
// - needed_versions(elf) reads the GNU version requirements (verneed) of one ELF
//   file: the newest version it asks for of each family (kVersionFamilies: GLIBC_
//   ... LIBATOMIC_; empty where none), and whether it links musl.
// - manylinux_policy() is the table in src/policy/data/manylinux.policy (compiled
//   into the binary): per tag and architecture the newest version of each family a
//   binary may need. lowest_manylinux_tag(needs, arch) is the oldest tag whose
//   floor covers every need on that architecture; nullptr when even the newest
//   tag is too old, or the architecture has no policy.
// - musllinux_policy() is src/policy/data/musllinux.policy: the musllinux tags per
//   architecture. musl has no symbol versions: a binary shows musl 1.2's 64-bit
//   time_t on 32-bit targets (calls to __*time64) and the newest musl function it
//   imports (NeededVersions::musl); lowest_musllinux_tag() is the oldest tag whose
//   musl covers that. A file links musl when it NEEDs libc.musl-*, its interpreter
//   is ld-musl-*, or (nothing in it speaking for glibc) its .comment names Alpine.
// - NeededVersions::abi holds what costs tags beyond versions (policy/abi_costs.hpp:
//   blacklisted imports, PyFPE_jbuf, UCS2, the x86-64 ISA level; needed_versions
//   leaves it empty, analysis/abi_rules.hpp's needs_of reads it); first_violation,
//   lowest_manylinux_tag and lowest_musllinux_tag judge it with the versions, so a
//   tag it rules out is never the honest one.
// - parse_platform_tag() understands manylinux1/2010/2014, manylinux_X_Y,
//   musllinux_X_Y and linux platform tags, and anything else as kind other.
// - Versions compare numerically component by component ("2.2.5" < "2.17").
#pragma once

#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/policy/abi_costs.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::policy {

int compare_dotted(std::string_view a, std::string_view b);  // <0, 0, >0

struct NeededVersions {
    std::string glibc;    // "2.34", empty when no GLIBC_ version is needed
    std::string glibcxx;  // "3.4.30"
    std::string cxxabi;   // "1.3.13"
    std::string gcc;      // "4.2.0"
    std::string zlib;     // "1.2.9" (ZLIB_, libz.so.1)
    std::string libatomic;  // "1.2" (LIBATOMIC_, libatomic.so.1)
    std::string musl;     // "1.2" (time64 entry points), "1.2.2" (reallocarray ...), else empty
    std::string musl_reason;  // why: "64-bit time_t", or the function ("reallocarray")
    bool links_musl = false;  // NEEDED libc.musl-* or libc.so, a musl interpreter or an Alpine toolchain
    AbiFacts abi;             // blacklisted imports, PyFPE, UCS2, x86-64 level (abi_costs.hpp)
};

NeededVersions needed_versions(const elf::ElfFile& elf);
// Element-wise newest of two sets of needs (for a whole wheel).
NeededVersions newest(const NeededVersions& a, const NeededVersions& b);

struct ManylinuxTag {
    std::string tag;      // "manylinux_2_17"
    std::string alias;    // "manylinux2014", empty if none
    std::string arch;     // "x86_64"
    std::string glibc_floor;  // "2.17", from the tag's number
    std::string glibcxx, cxxabi, gcc, zlib, libatomic;  // newest allowed, empty = none allowed
};

// The symbol-version families a manylinux tag limits, in the order reports list them.
struct VersionFamily {
    std::string_view prefix;             // "GLIBC", as in GLIBC_2.17
    std::string_view key;                // "glibc": the field's name in JSON reports
    std::string NeededVersions::*need;
    std::string ManylinuxTag::*allowed;  // nullptr for GLIBC: the tag's own number, glibc_floor
};
inline constexpr VersionFamily kVersionFamilies[] = {
    {"GLIBC", "glibc", &NeededVersions::glibc, nullptr},
    {"GLIBCXX", "glibcxx", &NeededVersions::glibcxx, &ManylinuxTag::glibcxx},
    {"CXXABI", "cxxabi", &NeededVersions::cxxabi, &ManylinuxTag::cxxabi},
    {"GCC", "gcc", &NeededVersions::gcc, &ManylinuxTag::gcc},
    {"ZLIB", "zlib", &NeededVersions::zlib, &ManylinuxTag::zlib},
    {"LIBATOMIC", "libatomic", &NeededVersions::libatomic, &ManylinuxTag::libatomic},
};

const std::vector<ManylinuxTag>& manylinux_policy();
const ManylinuxTag* lowest_manylinux_tag(const NeededVersions& needs, std::string_view arch);
// The newest symbol version that `needs` has and `tag` does not allow, as
// "GLIBC_2.34" (the first reason a tag is too old), else the first abi_costs
// violation; empty when the tag allows all.
std::string first_violation(const NeededVersions& needs, const ManylinuxTag& tag);

struct MusllinuxTag {
    std::string tag;         // "musllinux_1_2"
    std::string arch;        // "x86_64"
    std::string musl_floor;  // "1.2", from the tag's number
};

const std::vector<MusllinuxTag>& musllinux_policy();
const MusllinuxTag* lowest_musllinux_tag(const NeededVersions& needs, std::string_view arch);
// Why `tag` does not fit these needs ("musl 1.2 (64-bit time_t)", a blacklisted
// import, ...), or "" when it does.
std::string first_musl_violation(const NeededVersions& needs, const MusllinuxTag& tag);

// Lowest musllinux (musl binaries) or manylinux tag name for these needs, "" if none.
std::string honest_tag(const NeededVersions& needs, std::string_view arch);

// The architecture name platform tags use for this ELF file ("x86_64", "i686",
// "aarch64", "armv7l", "ppc64le", "s390x", "riscv64", "mips64", ...).
std::string platform_arch(const elf::ElfFile& elf);

struct PlatformTag {
    enum class Kind { manylinux, musllinux, linux, other } kind = Kind::other;
    int major = 0;  // glibc 2 / musl 1
    int minor = 0;  // glibc 17 / musl 2
    std::string arch;
    std::string text;
};
PlatformTag parse_platform_tag(std::string_view tag);

// Why a wheel tagged `before` may not be retagged to `after` without reading its
// binaries, or "" when it may. Each new tag must be a Linux platform tag
// (manylinux, musllinux, linux_) with an architecture, or `any` for a wheel that
// was `any`; its architecture must be one the wheel already names (retagging
// cannot make an x86_64 binary run on aarch64), and a glibc wheel (manylinux) does
// not become a musl one (musllinux) or the reverse.
std::string platform_change_problem(const std::vector<std::string>& before, const std::vector<std::string>& after);

}  // namespace wheelfix::policy
