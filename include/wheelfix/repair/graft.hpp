// Grafting: the libraries a wheel's extensions load from the build machine,
// copied into the wheel under names of their own (auditwheel's core).
//
// Contract: plan_grafts(wheel, elves, options) resolves every NEEDED of the ELF
// members (analysis/needed_resolution.hpp) and:
// - refuses (InputError naming the wheel, one line) when a library is `missing`:
//   every missing name with the members and grafted libraries that need it, and why;
//   also when a grafted file name collides with a member of the wheel;
// - for every `graft` library: reads it (at most analysis::kMaxGraftBytes), names
//   the copy `<base>-<first 8 hex of its sha256>.<rest>` after the NEEDED name
//   ("libfoo.so.1" -> "libfoo-0123abcd.so.1"; a base already ending in that hash is
//   kept), and edits the copy: SONAME = that name, every NEEDED naming another
//   grafted library renamed (DT_VERNEED's vn_file with it: elf/editor.hpp), and its
//   search path set to $ORIGIN. The copies go to `<libs_dir>/` at the platlib root
//   (libs_dir: "<distribution>.libs", where the shim also lives).
// - links(member): the relink additions one member needs: replace-needed for each
//   grafted name it NEEDs and "{root}/<libs_dir>" on its search path; none for a
//   member that needs no grafted library; a NEEDED libpython is removed (auditwheel's
//   rule: the interpreter provides those symbols).
// The package owning each grafted file is asked of the system's package manager for
// the SBOM (repair/sbom.hpp package_owners, one batch per wheel) unless ask_owner is
// false. Nothing here writes a file.
#pragma once

#include "wheelfix/analysis/needed_resolution.hpp"
#include "wheelfix/repair/relink.hpp"
#include "wheelfix/wheel/rewrite.hpp"
#include "wheelfix/wheel/wheel.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wheelfix::repair {

struct GraftOptions {
    std::vector<std::string> ldpaths;   // --ldpaths (else LD_LIBRARY_PATH, decided by the caller)
    std::vector<std::string> exclude;   // SONAME globs never grafted
    std::filesystem::path root = "/";   // ld.so.conf and default directories below it
    bool ask_owner = true;              // package_owners() for the SBOM
};

// The installed package a grafted file came from (repair/sbom.hpp package_owners).
struct PackageOwner {
    std::string type;     // purl type: "deb", "rpm", "apk"
    std::string distro;   // os-release ID: "debian", "ubuntu", "fedora", "alpine"
    std::string name;     // "libffi8"
    std::string version;  // "3.4.4-1"; rpm: VERSION-RELEASE
    std::string arch;     // "amd64", "x86_64"; may be empty
    std::string epoch;    // rpm only, when the package has one
    std::string purl() const;  // pkg:deb/debian/libffi8@3.4.4-1?arch=amd64
};

struct GraftedFile {
    std::string needed_name;            // "libfoo.so.1"
    std::string new_name;               // "libfoo-0123abcd.so.1"
    std::string member;                 // "<dist>.libs/libfoo-0123abcd.so.1"
    std::filesystem::path source;       // where it was found
    std::string sha256;                 // hex, of the file as found
    std::optional<PackageOwner> owner;  // nullopt: no package manager owns it
    std::vector<std::string> needed_by;
    std::vector<std::string> changes;   // the edits of the copy
};

struct GraftPlan {
    analysis::NeededResolution resolution;
    std::string libs_dir;
    std::vector<GraftedFile> grafts;
    std::map<std::string, std::string> renames;  // NEEDED name -> grafted file name
    policy::NeededVersions needs;                // newest over the grafted libraries
    std::vector<wheel::AddedMember> added;       // the edited copies

    Links links(const analysis::ElfReport& member) const;
};

// The WheelElf view of the reports (installed paths), and the installed paths of
// the wheel's other members (candidates ld.so would stop at).
GraftPlan plan_grafts(const wheel::Wheel& wheel, const std::vector<analysis::ElfReport>& elves,
                      const GraftOptions& options, const std::string& libs_dir);

// The graft links of one member decided while it is read, from its own search path
// alone, so that it is edited in the same pass (no second inflate); nullopt when
// that cannot be decided yet: a NEEDED name some member of the wheel carries as its
// base name (the wheel may provide it), or a library missing or unreadable (the
// whole plan refuses it). plan_grafts gives the same links for the member unless
// another member resolved the same NEEDED name first to another file: the caller
// compares (GraftPlan::links) and edits such a member again.
std::optional<Links> early_links(const wheel::Wheel& wheel, const analysis::ElfReport& elf,
                                         const GraftOptions& options, const std::string& libs_dir);

// Whether a member may need a graft (or a libpython removed): it NEEDs a name the
// library classes do not know (not system, driver, torch or nvidia by name).
bool may_need_graft(const analysis::ElfReport& elf, bool musl);

// "libfoo.so.1" + sha256 hex -> "libfoo-0123abcd.so.1".
std::string hashed_name(const std::string& needed_name, const std::string& sha256_hex);

}  // namespace wheelfix::repair
