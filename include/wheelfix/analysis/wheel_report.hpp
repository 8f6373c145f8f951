// What `inspect` says about a wheel: its identity, its torch requirement, whether
// RECORD holds, the honest platform tag, and an ElfReport per ELF member.
//
// Contract: inspect_wheel() reads every member exactly once (wheel/scan.hpp):
// RECORD is checked from the same pass that parses the ELF members, which are
// streamed, keeping only what the report reads (elf/streamed_elf.hpp; a member
// whose layout defeats that is read again), so memory does not grow with them. A member with
// the ELF magic that does not parse is an InputError naming the wheel and member;
// a member named like a shared library (*.so, *.so.N) without the ELF magic is
// listed in not_elf (a linker script or text file is a finding, not a failure).
// The CUDA modules (analysis/modules.hpp) are grouped from the ELF reports.
// inspect_file() does the same for one bare ELF file (InputError if it is not one).
// For commands that read the wheel themselves (repair): analyze_member() is one
// member's ElfReport (errors as InputErrors naming wheel and member); analyze_image()
// that of a member read into a wheel::MemberImage keeping what the analysis reads
// (Keeps::analysis; what it did not keep is fetched, errors naming `label`), as
// inspect_wheel reads each ELF member and repair its edited ones in the splice's
// pass (repair/plan.hpp); wheel_report() assembles the report from the caller's
// digests and ElfReports (in member order) exactly as inspect_wheel does.
// inspect_wheel(path, known) is for a wheel some of whose members are byte-for-byte
// copies of members the caller has read already (repair's output: members copied
// as stored): known(member) gives the digest and ElfReport of such a member, or
// nullopt for one to read; only those are read. The report is what inspect_wheel
// gives when the caller's knowledge is right.
#pragma once

#include "wheelfix/analysis/elf_report.hpp"
#include "wheelfix/analysis/modules.hpp"
#include "wheelfix/analysis/needed_resolution.hpp"
#include "wheelfix/wheel/member_reader.hpp"
#include "wheelfix/wheel/metadata.hpp"
#include "wheelfix/wheel/scan.hpp"
#include "wheelfix/wheel/variant.hpp"
#include "wheelfix/wheel/verify.hpp"
#include "wheelfix/wheel/wheel.hpp"

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace wheelfix::analysis {

struct PlatformClaim {
    std::string tag;           // as in the file name, e.g. "manylinux2014_x86_64"
    std::string glibc_floor;   // "2.17" for manylinux tags, empty otherwise
    bool lies = false;         // the binaries need more than the tag promises
    std::string violation;     // first symbol version the tag does not allow, or the foreign machine
    std::string foreign_binary;  // a member the tag's architecture cannot load at all (an i686
                                 // library in an x86_64 wheel): no platform tag fixes that
};

struct WheelReport {
    std::string path;
    std::string distribution;   // METADATA Name
    std::string version;        // METADATA Version
    std::string local_version;  // local segment of the file name's version, may be empty
    std::string filename_version;
    std::vector<std::string> tags;
    std::vector<wheel::Requirement> torch_requirements;  // METADATA's Requires-Dist on torch
    std::size_t member_count = 0;
    std::vector<wheel::VerifyFinding> record_findings;  // empty: RECORD holds

    policy::NeededVersions needs;  // newest needs over all ELF members
    std::string honest_tag;        // lowest manylinux/musllinux tag for all members, "" if none fits
    std::string symbol_tag;        // the same from the symbol versions alone (auditwheel's sym_tag)
    std::vector<PlatformClaim> platform_claims;

    std::vector<ElfReport> elves;
    std::vector<CudaModule> modules;   // the ELF files with device code, variants grouped (modules.hpp)
    std::vector<std::string> not_elf;  // library-named members that are not ELF

    // Every NEEDED resolved and classified (analysis/needed_resolution.hpp), when
    // the caller asked for it (attach_libraries): inspect does, repair keeps its own.
    std::optional<NeededResolution> libraries;
    // The libraries from outside the wheel that the policy does not allow (`graft`:
    // repair would copy it in; `missing`: repair refuses the wheel), each with who
    // needs it; while there is one no manylinux/musllinux tag fits (attach_libraries).
    std::vector<NeededResolution::Outside> outside_libraries;
    // The torch releases the extensions load on, from the torch atlas (`inspect` fills it:
    // "torch>=2.7.0,<2.8 (loads on 2.7.0 … 2.7.1 of 18 releases)"); empty when not known.
    std::string torch_range;

    // PEP 825: the file name's variant label ("" when none), its *.dist-info/variant.json
    // (nullopt when none), and what that claims that the binaries do not hold
    // (analysis/variant.hpp variant_claim_problems; a label the file does not name,
    // a label without variant.json): each a lie, as a platform tag's.
    std::string variant_label;
    std::optional<wheel::VariantFile> variant;
    std::vector<std::string> variant_findings;
};

// Resolves the report's ELF members' NEEDED (the wheel's other members, read from
// its central directory, are the candidates ld.so would stop at) into
// report.libraries, then judges the tag by them: the honest tag is raised to the
// oldest tag allowing every `system` library the members link (libmvec.so.1:
// manylinux_2_24), and is "" while outside_libraries is not empty; a claim of the
// file name older than that, or any manylinux/musllinux claim while a library is
// outside, lies. `torch`, `nvidia`, `driver`, `libpython` and `excluded` libraries
// cost nothing: other distributions, the driver or the interpreter provide them.
// An archive that no longer opens is an InputError.
void attach_libraries(WheelReport& report, const SearchContext& context);

WheelReport inspect_wheel(const std::filesystem::path& path);

struct KnownMember {
    wheel::MemberDigest digest;        // its `member` is set to the wheel's own
    const ElfReport* elf = nullptr;    // for an ELF member (digest.is_elf)
};
using KnownMembers = std::function<std::optional<KnownMember>(const zip::Member&)>;
WheelReport inspect_wheel(const std::filesystem::path& path, const KnownMembers& known);
ElfReport analyze_member(const wheel::Wheel& wheel, const std::string& member, const elf::ElfFile& elf);
ElfReport analyze_image(wheel::MemberImage& image, const std::string& label, const std::string& member);
WheelReport wheel_report(const wheel::Wheel& wheel, const std::vector<wheel::MemberDigest>& digests,
                         std::vector<ElfReport> elves);
ElfReport inspect_file(const std::filesystem::path& path);

// The file members named like a shared library ("x.so", "x.so.13", "x.abi3.so"), in archive order (what check and repair's foresight read).
std::vector<const zip::Member*> library_members(const zip::Archive& archive);

}  // namespace wheelfix::analysis
