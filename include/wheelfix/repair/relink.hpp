// relink: RPATH/RUNPATH, NEEDED and SONAME edits applied to the ELF members of a
// wheel, or to one bare ELF file.
//
// Contract:
// - relink_wheel(wheel, options, out_dir) is a plan run by the one executor
//   (plan.hpp: RECORD proven, its refusals, options.overwrite and options.dry_run):
//   every ELF member with a dynamic section that is_selected() gets one edit step,
//   the EditRequest built for its place in the wheel on its one parse; the result
//   goes to out_dir/<same file name> (edited members spliced, the rest copied raw).
// - Search paths may use "{root}", the wheel root seen from the member
//   (wheel::expand_root): "{root}/torch/lib" in sgl_kernel/sm100/x.so is
//   "$ORIGIN/../../torch/lib". For a bare file "{root}" is "$ORIGIN".
// - drop_absolute removes entries that are not $ORIGIN-relative and entries whose
//   $ORIGIN/.. climbs above the wheel root.
// - relink_file(path, options, out_file) edits one ELF file into out_file (written
//   to a temporary file beside it and renamed; permission bits kept).
// - Option values with NUL or newline characters, and --only patterns that select
//   no ELF member, are InputErrors; --exclude patterns may match nothing.
// - Globs are fnmatch(3) patterns without flags ('*' crosses '/'); a pattern
//   without '/' is matched against the base name, one with '/' against the path.
#pragma once

#include "wheelfix/elf/editor.hpp"
#include "wheelfix/repair/plan.hpp"
#include "wheelfix/zip/splice.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace wheelfix::repair {

struct RelinkOptions {
    std::optional<std::string> set_rpath;
    std::vector<std::string> add_rpath;
    std::vector<std::string> remove_rpath;
    bool drop_absolute = false;
    elf::SearchPathKind force_kind = elf::SearchPathKind::keep;
    std::vector<std::pair<std::string, std::string>> replace_needed;
    std::vector<std::string> add_needed;
    std::vector<std::string> remove_needed;
    std::optional<std::string> set_soname;
    std::vector<std::string> only;     // globs on member paths (a pattern without '/' matches the base name)
    std::vector<std::string> exclude;  // globs of members never touched, even when `only` matches them
    bool overwrite = false;         // replace an existing output file (refused otherwise)
    bool dry_run = false;           // wheels: plan and describe, write nothing
};

// The links a member is given from outside its own relink: NEEDED entries added
// (the shim's SONAME), replaced (a grafted library's hashed name) or removed (a
// libpython the graft plan drops), and search path entries added (where those
// libraries live). A value: repair and shim decide a member's links before the
// read (the foresight) and again after it, and compare the two.
struct Links {
    std::vector<std::string> add_needed;
    std::vector<std::pair<std::string, std::string>> replace_needed;  // old -> new
    std::vector<std::string> remove_needed;
    std::vector<std::string> add_rpath;

    bool operator==(const Links&) const = default;
    Links& operator+=(const Links& more);  // every list appended
};

// `options` with `links` added: NEEDED entries added, replaced and removed appended
// in order, search path entries appended unless already there.
RelinkOptions with_links(RelinkOptions options, const Links& links);

struct RelinkResult {
    std::filesystem::path output;
    std::vector<MemberChange> changed;
    std::size_t elf_members = 0;  // ELF members considered
    std::string plan;             // with dry_run: the plan (plan.hpp describe_plan); nothing written
};

RelinkResult relink_wheel(const std::filesystem::path& wheel, const RelinkOptions& options,
                          const std::filesystem::path& out_dir);
RelinkResult relink_file(const std::filesystem::path& file, const RelinkOptions& options,
                         const std::filesystem::path& out_file);

// The EditRequest for one member (depth nullopt: a bare file).
elf::EditRequest request_for(const RelinkOptions& options, const elf::ElfFile& elf, std::optional<int> depth);
// The same for options that do not read the file (no drop_absolute), for a member
// `depth` directories deep: what a plan can name before the member is read.
elf::EditRequest request_for(const RelinkOptions& options, int depth);
// Whether the member path matches any of `globs` (false when there are none).
bool matches_any(const std::vector<std::string>& globs, std::string_view member);
// The members relink may touch: matching any --only glob (every member when there
// are none) and no --exclude glob.
bool is_selected(const RelinkOptions& options, std::string_view member);

}  // namespace wheelfix::repair
