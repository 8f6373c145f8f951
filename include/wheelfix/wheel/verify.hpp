// Verifying a wheel against itself: RECORD, names, versions and tags.
//
// Contract: verify_wheel() reports every way an opened wheel disagrees with itself
// and returns an empty list when it is consistent. Findings, each naming the member
// (or dist-info file) concerned with a one-line problem:
// - per RECORD line: the path is unsafe, not in the wheel, or listed twice; the hash
//   is missing, weak (anything but sha256/384/512) or malformed, or disagrees with
//   the member ("sha256 mismatch: RECORD says X, member has Y"); the size is
//   missing or disagrees. RECORD's own line needs no hash.
// - a file member missing from RECORD (RECORD, RECORD.jws, RECORD.p7s and
//   directory entries are exempt).
// - the file name's distribution and version, the dist-info directory name and
//   METADATA's Name and Version disagree (names PEP 503-normalized, versions
//   compared as PEP 440 versions).
// - WHEEL's Tag lines and the tags expanded from the file name differ (as sets;
//   each missing or extra tag is one finding).
// - two member paths (files, or the directories they lie in) that differ only in
//   case or Unicode normalisation (wheel/name_fold.hpp): they install on Linux but
//   collide on macOS and Windows file systems (FindingKind::collision, never set
//   aside by a writer: relink, shim, retag and repair refuse such a wheel).
// - a Wheel-Version of an unknown major (a wheel opened with WheelVersion::report):
//   pip refuses to install it (FindingKind::wheel_version, never set aside).
// It takes the digests scan_members() already computed (a member that cannot be
// read is scan_members' InputError) and reads nothing again except members
// whose RECORD hash is sha384/sha512; members without a digest are not hash-checked,
// and a digest without a hash (MemberDigest::hashed false, scan_sizes) is checked
// by size only.
#pragma once

#include "wheelfix/wheel/scan.hpp"
#include "wheelfix/wheel/wheel.hpp"

#include <string>
#include <vector>

namespace wheelfix::wheel {

// What a finding is about: RECORD and the members it lists (tampering), or how
// the wheel names itself — distribution name, version (file name, METADATA and
// dist-info directory), tags. Lets a writer that rewrites names or versions itself
// (retag) set those findings aside.
enum class FindingKind { record, name, version, tags, collision, length, wheel_version };

struct VerifyFinding {
    std::string member;   // the member or dist-info file concerned
    std::string problem;  // one line
    FindingKind kind = FindingKind::record;
};

// Whether WHEEL's Tag lines are exactly the tags the file name expands to (the
// FindingKind::tags part of verify_wheel, which reads no member).
bool tags_agree(const Wheel& wheel);
std::vector<VerifyFinding> verify_wheel(const Wheel& wheel, const std::vector<MemberDigest>& digests);

}  // namespace wheelfix::wheel
