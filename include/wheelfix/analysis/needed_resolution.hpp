// Resolving every DT_NEEDED of a wheel's ELF members the way ld.so would, and
// classifying what each one is: auditwheel's question, answered the loader's way.
//
// Contract: resolve_needed(elves, other_installed, context) searches, for every NEEDED
// name of every ELF member, in glibc's ld.so order for the member's class and machine:
//   1. DT_RPATH, only when the requesting object has no DT_RUNPATH: its own, then
//      that of each object above it in the load chain that has none either (an
//      extension's RPATH also serves the libraries loaded beneath it);
//   2. context.ldpaths (--ldpaths, else LD_LIBRARY_PATH);
//   3. DT_RUNPATH of the requesting object (never its loaders');
//   4. the directories of <root>/etc/ld.so.conf (read_ld_so_conf: what ld.so.cache
//      holds);
//   5. default_directories() for the class and machine, below context.root.
// `$ORIGIN` (and `${ORIGIN}`) of a member is its directory in the installed layout
// (installed_path), so members are found where the installed wheel finds them; a
// path climbing above the platlib root, or naming no member, finds nothing in the
// wheel (other distributions' files, such as torch/lib, are known by name below).
// `$LIB` and `$PLATFORM` (braced or not) expand anywhere in an entry as glibc's
// ld.so expands them for the object's class and machine (dst_lib, dst_platform);
// entries with another $ token, relative entries and empty ones are skipped (noted).
// A NEEDED holding '/' is a path: an absolute one is opened as it is.
// A candidate of another class or machine, or one that cannot be opened (missing,
// unreadable, a symlink loop), is skipped and noted, as ld.so skips it; one that
// opens but is not ELF stops the search as ld.so stops ("invalid ELF header"): the
// need is `missing` with that problem.
//
// Classes, decided once the search is done:
//   in-wheel  found as a member on the requesting object's own search path;
//   excluded  the name matches a context.exclude glob (auditwheel's --exclude);
//   system    the policy's allowed list for the wheel's libc family (musl: musllinux);
//   libpython an extension's NEEDED libpython: repair removes it, as auditwheel does;
//   driver, torch, nvidia   by name, from the library-classes data
//             (policy/library_classes.hpp) — never grafted, found or not;
//   in-wheel  via "import", when not found at all: a member of that name or SONAME
//             the package loads first (by import or ctypes; ld.so reuses a loaded
//             object of that SONAME) — never one under a top-level `<name>.libs/`
//             (auditwheel's grafts): only another member's NEEDED loads those, and
//             that member loading first is something nothing here can promise;
//   graft     found outside the wheel: to be copied in;
//   missing   not found (problem says why).
// With context.wheel_only, only the wheel's members are searched (the RPATH and
// RUNPATH entries naming directories inside it; no --ldpaths, ld.so.conf, default
// directory or absolute path is probed): what the wheel itself provides each member,
// whatever the host holds (check judges an install it does not see).
// Each `graft` (keyed by its NEEDED name, as ld.so reuses a loaded object of that
// name) is read — a file of at most kMaxGraftBytes, parsed with our reader — and its
// own NEEDED resolved the same way with its own RPATH/RUNPATH and the chain above
// it, recursively (each name once); one that does not parse is `missing` with the
// parse error. Nothing here throws for a library's content.
#pragma once

#include "wheelfix/analysis/elf_report.hpp"
#include "wheelfix/policy/manylinux.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace wheelfix::analysis {

enum class LibraryClass { in_wheel, excluded, system, driver, python, torch, nvidia, graft, missing };
// "in-wheel", "excluded", "system", "driver", "libpython", "torch", "nvidia", "graft", "missing"
const char* library_class_name(LibraryClass library_class);

// A library larger than this is not grafted (missing, with the reason): a graft is
// held in memory while the wheel is written.
inline constexpr std::uint64_t kMaxGraftBytes = std::uint64_t{256} << 20;

struct SearchContext {
    std::vector<std::string> ldpaths;            // in order
    std::filesystem::path root = "/";             // ld.so.conf and default directories below it
    std::vector<std::string> exclude;             // SONAME globs never grafted
    bool musl = false;                            // the musllinux allowed list
    std::optional<int> cuda_major;                // for naming nvidia distributions
    bool wheel_only = false;                      // search the wheel's members only, no file system
};

// One ELF member of the wheel as the resolver sees it.
struct WheelElf {
    std::string member;     // path in the archive
    std::string installed;  // path below the platlib root (installed_path), "" when not installed there
    const ElfReport* report = nullptr;
};

struct ResolvedNeed {
    std::string name;                  // the DT_NEEDED entry
    LibraryClass library_class = LibraryClass::missing;
    std::string location;              // installed member path (in-wheel) or file path; "" when not found
    std::string via;                   // "RPATH", "RPATH of <loader>", "--ldpaths", "RUNPATH", "ld.so.conf", "default"
    std::string distribution;          // torch/nvidia: who ships it
    std::vector<std::string> skipped;  // "path: why" for candidates passed over
    std::string problem;               // missing: why
};

struct ElfNeeds {
    std::string name;  // the member's archive path, or a grafted library's NEEDED name
    std::vector<ResolvedNeed> needs;
};

struct GraftedLibrary {
    std::string needed_name;           // what dependents' NEEDED say
    std::filesystem::path path;        // where it was found
    std::optional<std::string> soname;
    std::optional<std::string> rpath, runpath;
    std::string elf_class, machine;
    std::vector<std::string> needed;   // its own DT_NEEDED
    policy::NeededVersions needs;      // its symbol-version floor
    std::vector<std::string> needed_by;  // member archive paths and grafted NEEDED names
};

struct NeededResolution {
    std::vector<ElfNeeds> members;       // one per WheelElf, in order
    std::vector<GraftedLibrary> grafts;  // discovery order
    std::vector<ElfNeeds> graft_needs;   // one per graft, same order

    // A library from outside the wheel that the policy does not allow: a `graft` or
    // `missing` name, with every member or grafted library that needs it.
    struct Outside {
        std::string name;
        LibraryClass library_class = LibraryClass::missing;  // graft or missing
        std::string location;                                 // graft: the file found
        std::string problem;                                  // missing: why
        std::vector<std::string> needed_by;
    };
    using Missing = Outside;
    // Every graft and missing name (members first, then the grafts' own needs, in
    // discovery order; a name once per class).
    std::vector<Outside> outside_wheel() const;
    // Every missing name with every member or grafted library that needs it.
    std::vector<Missing> missing() const;
    // NEEDED names of `library_class` anywhere (members and grafts), sorted, unique.
    std::vector<std::string> names_of(LibraryClass library_class) const;
    // What the members NEED that is provided beside the wheel and costs its tag
    // nothing, by provider in order of first appearance: a torch or nvidia library's
    // distribution (else its class name, "torch"/"nvidia"), "the GPU driver" for a
    // driver library; each name once.
    struct Provided {
        std::string provider;
        std::vector<std::string> libraries;
    };
    std::vector<Provided> provided_beside() const;
};

NeededResolution resolve_needed(const std::vector<WheelElf>& elves, const std::vector<std::string>& other_installed,
                                const SearchContext& context);

// Where a member is installed below the platlib root: itself, or for
// "<x>.data/platlib/p" and "<x>.data/purelib/p" the path p; nullopt for other
// .data directories (scripts, headers, data), which are installed elsewhere.
std::optional<std::string> installed_path(std::string_view member);

// The directories of <root>/etc/ld.so.conf: `include GLOB` (relative globs are
// relative to the including file's directory; include depth at most 8, a file
// included twice is read once), `hwcap` lines ignored, other lines are directories
// separated by blanks, ':' or ','. Returned as the system sees them (without
// root); unreadable files are skipped. Order kept, duplicates dropped.
std::vector<std::string> read_ld_so_conf(const std::filesystem::path& root);

// glibc's built-in directories for this class and machine (platform-tag machine
// spelling, as ElfReport::machine): e.g. x86_64 "ELF64": /lib/x86_64-linux-gnu,
// /usr/lib/x86_64-linux-gnu, /lib64, /usr/lib64, /lib, /usr/lib.
std::vector<std::string> default_directories(std::string_view elf_class, std::string_view machine);
// $LIB: glibc's slibdir for the class and machine, judged from the layout below
// `root`: Debian's multiarch "lib/<triplet>" where that directory exists, else
// "lib64" ("lib32") where that is a real directory (Fedora, SUSE), else "lib".
std::string dst_lib(std::string_view elf_class, std::string_view machine, const std::filesystem::path& root);
// $PLATFORM: what this host's ld.so expands it to: for x86_64 glibc's own choice
// from the CPU ("haswell", "xeon_phi" on Intel CPUs with those features, else
// "x86_64"); for the other machines AT_PLATFORM, the machine name ("aarch64", "i686").
std::string dst_platform(std::string_view machine);

}  // namespace wheelfix::analysis
