// Writing a changed copy of a wheel: the last step of every command that writes.
//
// Contract: write_wheel_changes(wheel, changes, destination, options) writes a new wheel at
// `destination` (atomically, zip/writer.hpp) in which
// - members named in `edited` get their new compressed stream as given (never
//   recompressed again), every other member is copied raw, as stored;
// - RECORD is regenerated from the original RECORD: edited members get their new
//   hash and size, every other line is kept as it was — callers first prove the
//   input's RECORD true with require_record_matches() on the digests of their one
//   read; RECORD.jws and RECORD.p7s are dropped when anything changed, since their
//   signature no longer holds;
// - the .dist-info directory comes last and RECORD last of all;
// - unix modes (permission bits, symlinks) are kept; edited members and RECORD get
//   the SOURCE_DATE_EPOCH time when given, else their original time, so the same
//   input and options give byte-identical output;
// - `added` members (new files: a shim library, ...) go after the input's payload
//   members and before the .dist-info directory, with the mode given, the
//   SOURCE_DATE_EPOCH time (else RECORD's original time) and a RECORD line each;
//   a name that already exists in the wheel, or lies inside the .dist-info
//   directory, is an InputError;
// - `dist_info` changes (WheelChanges, write_wheel_changes) edit the metadata without touching the
//   payload: `rename_to` moves every member of the .dist-info directory (and its
//   RECORD lines) into a directory of that name; `replaced` gives dist-info files
//   ("METADATA", "WHEEL") new content, deflated anew, with a fresh RECORD hash and
//   size and the time of an edited member. Replacing RECORD or a file the
//   directory does not hold, or a rename_to that is not a "*.dist-info" name, is an
//   InputError.
#pragma once

#include "wheelfix/wheel/scan.hpp"
#include "wheelfix/wheel/verify.hpp"
#include "wheelfix/wheel/wheel.hpp"
#include "wheelfix/zip/splice.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wheelfix::wheel {

struct WriteOptions {
    std::optional<std::int64_t> source_date_epoch;  // from the environment, when set
    bool overwrite = false;  // replace an existing destination; else the final rename refuses (util/output_file.hpp)
};

// SOURCE_DATE_EPOCH from the environment; InputError when it is set but not a number.
std::optional<std::int64_t> source_date_epoch_from_environment();

// A new file for the output wheel.
struct AddedMember {
    std::string name;                      // path inside the wheel
    std::vector<std::uint8_t> bytes;
    std::uint32_t unix_mode = 0100755;     // st_mode incl. type bits
};

// Metadata-only changes: the .dist-info directory renamed, small files in it replaced.
struct DistInfoChanges {
    std::optional<std::string> rename_to;          // "name-1.0+torch2.10.dist-info"
    std::map<std::string, std::string> replaced;   // file inside the directory ("METADATA") -> new content
    std::map<std::string, std::string> added;      // new file inside the directory ("sboms/x.json") -> content
};

struct WheelChanges {
    std::map<std::string, zip::PrecompressedMember> edited;
    std::vector<AddedMember> added;
    DistInfoChanges dist_info;
};

void write_wheel_changes(const Wheel& wheel, WheelChanges changes, const std::filesystem::path& destination,
                         const WriteOptions& options);

// Refuses (InputError naming the wheel, with the first finding) a wheel whose
// members do not match its RECORD: commands that write never launder a tampered
// wheel into one with a fresh, matching RECORD.
void require_record_matches(const Wheel& wheel, const std::vector<MemberDigest>& digests);
// The same judgement on findings a writer already has, after it set aside the ones
// it repairs itself (retag --fix-version rewrites every version; retag and repair
// rewrite WHEEL's Tag lines). The one line names a tampered member first ("does
// not match its RECORD"), else the name, version or tag that disagrees ("does not
// name itself consistently").
void refuse_findings(const Wheel& wheel, const std::vector<VerifyFinding>& findings);

}  // namespace wheelfix::wheel
