// Wheel::open: archive -> file name -> the one *.dist-info directory -> its
// WHEEL, METADATA and RECORD. The dist-info directory is found from the member
// names alone (top-level components ending in ".dist-info", in any case), so a
// wheel without explicit directory entries works; dist-info members that differ
// only in case are refused. Errors from the parts are re-attributed to the
// wheel: "w.whl: pkg-1.0.dist-info/METADATA: line 3: ...".
#include "wheelfix/wheel/wheel.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/text.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace wheelfix::wheel {

namespace {

constexpr std::string_view kDistInfoSuffix = ".dist-info";

WheelFilename parse_wheel_filename(const std::filesystem::path& path) {
    try {
        return parse_filename(path.filename().string());
    } catch (const InputError& error) {
        throw InputError(path.string(), error.problem());
    }
}

// Top-level directories named *.dist-info in any case: "X.DIST-INFO" is the same
// directory as "x.dist-info" once a case-insensitive file system unpacks it.
std::set<std::string> top_level_dist_info_dirs(const std::vector<zip::Member>& members) {
    std::set<std::string> dirs;
    for (const auto& member : members) {
        auto slash = member.name.find('/');
        if (slash == std::string::npos) continue;
        auto top = std::string_view(member.name).substr(0, slash);
        if (top.size() > kDistInfoSuffix.size() && ascii_lower(top).ends_with(kDistInfoSuffix)) dirs.emplace(top);
    }
    return dirs;
}

// Two dist-info members that differ only in case (METADATA and metadata): which one
// an installer keeps depends on the file system, so the wheel is refused.
void reject_case_folded_duplicates(const std::filesystem::path& path, const std::vector<zip::Member>& members,
                                   const std::string& dist_info) {
    std::map<std::string, std::string> seen;
    for (const auto& member : members) {
        if (!member.name.starts_with(dist_info + "/")) continue;
        auto [it, inserted] = seen.emplace(ascii_lower(member.name), member.name);
        if (!inserted)
            throw InputError(path.string(), "members " + it->second + " and " + member.name + " differ only in case");
    }
}

std::string find_dist_info(const std::filesystem::path& path, const std::vector<zip::Member>& members) {
    auto dirs = top_level_dist_info_dirs(members);
    if (dirs.empty()) throw InputError(path.string(), "no top-level .dist-info directory");
    if (dirs.size() > 1) {
        const std::vector<std::string> list(dirs.begin(), dirs.end());
        throw InputError(path.string(), "several .dist-info directories (" + join(list, ", ") + ")");
    }
    return *dirs.begin();
}

std::string read_member_text(const zip::Archive& archive, const std::string& name) {
    const auto* member = archive.find(name);
    if (!member) throw InputError(archive.path().string(), "missing " + name);
    auto bytes = archive.read(*member);
    return std::string(bytes.begin(), bytes.end());
}

// Runs a parser on a member's text; its InputError (naming the member) is
// re-attributed to the wheel.
template <typename Parse>
auto parse_member(const zip::Archive& archive, const std::string& name, Parse parse) {
    auto text = read_member_text(archive, name);
    try {
        return parse(text, name);
    } catch (const InputError& error) {
        throw error.within(archive.path().string());
    }
}

// pip refuses a wheel whose WHEEL has no Wheel-Version or a major version it does
// not know (pip/_internal/utils/wheel.py: check_compatibility); so does wheelfix,
// since it cannot know what a 2.0 wheel means.
// Returns the problem of a known-format version whose major is above 1 (the caller
// refuses or reports it); a missing or malformed Wheel-Version is always refused.
std::string unknown_wheel_version(const std::filesystem::path& path, const std::string& dist_info,
                                  const HeaderFile& wheel_file) {
    const auto text = wheel_file.first("Wheel-Version");
    if (!text) throw InputError(path.string(), dist_info + "/WHEEL has no Wheel-Version (pip refuses such a wheel)");
    const std::string version(trim(*text));
    const std::string major = version.substr(0, version.find('.'));
    const bool digits = !major.empty() && major.size() <= 6 &&
                        std::all_of(major.begin(), major.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits)
        throw InputError(path.string(), dist_info + "/WHEEL: Wheel-Version '" + printable(version) + "' is not a version");
    if (std::stoi(major) > 1)
        return "Wheel-Version " + printable(version) +
               ": wheelfix reads wheels of version 1.x (pip refuses a major version it does not know)";
    return {};
}

// The file name a wheel's own dist-info and WHEEL Tag lines give it, as a hint for a
// file whose name is not a wheel's ("in.whl"); "" when they cannot tell.
std::string name_from_contents(const std::filesystem::path& path, const zip::Archive& archive) {
    try {
        const std::string dist_info = find_dist_info(path, archive.members());
        const auto wheel_file = parse_member(archive, dist_info + "/WHEEL", parse_headers);
        std::vector<std::string> python, abi, platform;
        auto add = [](std::vector<std::string>& parts, const std::string& part) {
            if (std::find(parts.begin(), parts.end(), part) == parts.end()) parts.push_back(part);
        };
        for (const auto& tag : wheel_file.all("Tag")) {
            const std::string text(trim(tag));
            const auto first = text.find('-'), second = text.find('-', first + 1);
            if (first == std::string::npos || second == std::string::npos) return {};
            add(python, text.substr(0, first));
            add(abi, text.substr(first + 1, second - first - 1));
            add(platform, text.substr(second + 1));
        }
        if (python.empty()) return {};
        const std::string stem = dist_info.substr(0, dist_info.size() - kDistInfoSuffix.size());
        return printable(stem + "-" + join(python, ".") + "-" + join(abi, ".") + "-" + join(platform, ".") + ".whl");
    } catch (const std::exception&) {
        return {};
    }
}

}  // namespace

Wheel Wheel::open(const std::filesystem::path& path, WheelVersion unknown) {
    Wheel wheel(zip::Archive::open(path));
    try {
        wheel.filename_ = parse_wheel_filename(path);
    } catch (const InputError& error) {
        const std::string name = name_from_contents(path, wheel.archive_);
        if (name.empty()) throw;
        throw InputError(error.file(), error.problem() + " (pip refuses such a name too; its dist-info and WHEEL say " +
                                           name + ")");
    }
    wheel.dist_info_ = find_dist_info(path, wheel.archive_.members());
    reject_case_folded_duplicates(path, wheel.archive_.members(), wheel.dist_info_);
    wheel.wheel_ = parse_member(wheel.archive_, wheel.dist_info_ + "/WHEEL", parse_headers);
    wheel.wheel_version_problem_ = unknown_wheel_version(path, wheel.dist_info_, wheel.wheel_);
    if (!wheel.wheel_version_problem_.empty() && unknown == WheelVersion::refuse_unknown)
        throw InputError(path.string(), wheel.wheel_version_problem_);
    wheel.metadata_ = parse_member(wheel.archive_, wheel.dist_info_ + "/METADATA", parse_headers);
    wheel.record_ = parse_member(wheel.archive_, wheel.record_path(), parse_record);
    if (wheel.metadata_version().empty())
        throw InputError(path.string(), wheel.dist_info_ + "/METADATA has no Version");
    return wheel;
}

std::string Wheel::metadata_name() const { return std::string(trim(metadata_.first("Name").value_or(""))); }

std::string Wheel::metadata_version() const { return std::string(trim(metadata_.first("Version").value_or(""))); }

std::vector<Requirement> Wheel::torch_requirements() const { return wheel::torch_requirements(metadata_); }

std::string_view installed_path(std::string_view member_path) {
    auto first = member_path.find('/');
    if (first == std::string_view::npos || !member_path.substr(0, first).ends_with(".data")) return member_path;
    auto rest = member_path.substr(first + 1);
    for (std::string_view scheme : {"platlib/", "purelib/"})
        if (rest.starts_with(scheme)) return rest.substr(scheme.size());
    return member_path;
}

int directory_depth(std::string_view member_path) {
    auto installed = installed_path(member_path);
    return static_cast<int>(std::count(installed.begin(), installed.end(), '/'));
}

std::string expand_root(std::string_view search_path, int depth) {
    std::string origin = "$ORIGIN";
    for (int i = 0; i < depth; ++i) origin += "/..";
    std::string out;
    std::size_t start = 0;
    while (true) {
        auto found = search_path.find("{root}", start);
        out.append(search_path.substr(start, found == std::string_view::npos ? std::string_view::npos : found - start));
        if (found == std::string_view::npos) break;
        out += origin;
        start = found + 6;
    }
    return out;
}

}  // namespace wheelfix::wheel
