// Library classes: which NEEDED names the platform, torch, NVIDIA's wheels or the
// GPU driver provide, so that `repair` never grafts them. Data, not code:
// src/policy/data/library-classes (compiled in; its header states the format and
// where each list comes from).
//
// Contract:
// - library_classes() is the parsed data file; parse_library_classes(text, source)
//   parses one (any problem is an InputError "<source>:<line>" naming the field).
// - classify_name(classes, soname, musl) is the class a NEEDED name has by name
//   alone: system (the policy's allowed list of the wheel's libc family: musl
//   wheels take the musllinux list), driver, python, torch, nvidia, or none. The order
//   is system, driver, python, torch, nvidia; within a class the first matching line.
// - tag_allowing(tag, names, arch, musl): `tag` raised to the oldest tag of its
//   family whose policy allows every system library among `names` (a system
//   rule's TAG: "manylinux_2_24" for libmvec.so.1), so the chosen tag honours it.
// - distribution(): for torch and nvidia names, the distribution that installs the
//   library for that CUDA major ("torch", "nvidia-cuda-runtime-cu12"); empty when
//   the data names none.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::policy {

enum class NamedClass { none, system, driver, python, torch, nvidia };

struct LibraryClassRule {
    NamedClass named = NamedClass::none;
    std::string glob;
    std::string since_tag;     // system: "manylinux_2_5", "musllinux_1_1"
    bool musl = false;         // system: the rule is the musllinux family's
    std::string distribution;  // torch: "torch"; nvidia: CUDA 12's
    std::string distribution_cuda13;  // nvidia: CUDA 13's
};

struct LibraryClasses {
    std::vector<LibraryClassRule> rules;  // file order
};

LibraryClasses parse_library_classes(std::string_view text, const std::string& source);
const LibraryClasses& library_classes();

struct NameClass {
    NamedClass named = NamedClass::none;
    const LibraryClassRule* rule = nullptr;  // the line that matched
};

NameClass classify_name(const LibraryClasses& classes, std::string_view soname, bool musl);
// The distribution that ships `rule`'s libraries for CUDA `cuda_major` (12 when unknown).
std::string distribution(const LibraryClassRule& rule, std::optional<int> cuda_major);

// `tag` ("manylinux_2_17", without the architecture; "" stays "") raised to the
// oldest tag of its family on `arch` whose policy allows every system-class name in
// `names`; names of other classes are not looked at.
std::string tag_allowing(std::string tag, const std::vector<std::string>& names, std::string_view arch, bool musl);

// Whether `soname` matches any of the fnmatch(3) globs (auditwheel's --exclude).
bool matches_soname_glob(const std::vector<std::string>& globs, std::string_view soname);

}  // namespace wheelfix::policy
