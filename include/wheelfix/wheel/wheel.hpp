// The wheel model: a zip archive read as a wheel.
//
// Contract: Wheel::open() opens the archive (zip rules in zip/archive.hpp), parses
// the file name, finds the one top-level *.dist-info directory, and parses its
// WHEEL, METADATA and RECORD. What a wheel cannot be processed without — a bad
// file name, no or several dist-info directories, a missing or unparsable
// METADATA/WHEEL/RECORD, METADATA without Version, WHEEL without Wheel-Version or
// with a major version above 1 (pip refuses both) — is an InputError naming the
// wheel. A reader that only reports (inspect, verify) opens with
// WheelVersion::report instead: a Wheel-Version whose major is above 1 is then kept
// as wheel_version_problem() (verify_wheel's FindingKind::wheel_version) and the
// rest of the wheel is read as a 1.x wheel. Disagreements a wheel can have and still be read (filename version vs
// METADATA, RECORD hashes) are not checked here: verify.hpp reports them.
#pragma once

#include "wheelfix/wheel/filename.hpp"
#include "wheelfix/wheel/metadata.hpp"
#include "wheelfix/wheel/record.hpp"
#include "wheelfix/zip/archive.hpp"

#include <filesystem>
#include <string>

namespace wheelfix::wheel {

// Where a member is installed, relative to the platlib root (site-packages):
// "<name>.data/platlib/rest" and "<name>.data/purelib/rest" install as "rest"
// (pip moves them there); every other member where it is named.
std::string_view installed_path(std::string_view member_path);

// How many directories deep a member sits once installed ("pkg/sm100/x.so" -> 2,
// "pkg-1.0.data/platlib/pkg/x.so" -> 1): what "$ORIGIN/.." counts from, for RPATH
// checks and {root} expansion.
int directory_depth(std::string_view member_path);

// "{root}", the wheel root seen from a member `depth` directories deep, expanded
// in a search path: "$ORIGIN" then one "/.." per level, so "{root}/torch/lib" in
// sgl_kernel/sm100/x.so (depth 2) is "$ORIGIN/../../torch/lib". Used by search
// paths given on the command line and by the profiles' rpath records alike.
std::string expand_root(std::string_view search_path, int depth);

// What Wheel::open does with a Wheel-Version of an unknown major (2.0): refuse it
// (every writer: it cannot know what such a wheel means) or keep it as a finding.
enum class WheelVersion { refuse_unknown, report };

class Wheel {
public:
    static Wheel open(const std::filesystem::path& path, WheelVersion unknown = WheelVersion::refuse_unknown);

    const zip::Archive& archive() const { return archive_; }
    const WheelFilename& filename() const { return filename_; }
    const std::string& dist_info() const { return dist_info_; }  // "name-1.0.dist-info"
    const HeaderFile& metadata() const { return metadata_; }
    const HeaderFile& wheel_file() const { return wheel_; }
    const std::vector<RecordEntry>& record() const { return record_; }
    std::string record_path() const { return dist_info_ + "/RECORD"; }
    // "Wheel-Version 2.0: ..." when opened with WheelVersion::report and the major is unknown, else "".
    const std::string& wheel_version_problem() const { return wheel_version_problem_; }

    std::string metadata_name() const;     // METADATA Name
    std::string metadata_version() const;  // METADATA Version
    // The Requires-Dist entries on torch (any case/spelling of the name).
    std::vector<Requirement> torch_requirements() const;

private:
    zip::Archive archive_;
    WheelFilename filename_;
    std::string dist_info_;
    HeaderFile metadata_;
    HeaderFile wheel_;
    std::vector<RecordEntry> record_;
    std::string wheel_version_problem_;

    explicit Wheel(zip::Archive archive) : archive_(std::move(archive)) {}
};

}  // namespace wheelfix::wheel
