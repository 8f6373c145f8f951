// verify_wheel: every check works from what Wheel::open already parsed plus one
// digest per member, so a wheel is read once. The checks are independent passes
// that append findings: RECORD line by line, members against RECORD, names and
// versions, tags. sha384/sha512 RECORD hashes (legal, rare) are the one case that
// re-reads a member, through OpenSSL's EVP interface.
#include "wheelfix/wheel/verify.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/wheel/name_fold.hpp"
#include "wheelfix/wheel/version.hpp"

#include <algorithm>
#include <openssl/evp.h>

#include <map>
#include <memory>
#include <set>

namespace wheelfix::wheel {

namespace {

using Findings = std::vector<VerifyFinding>;
using DigestIndex = std::map<std::string_view, const MemberDigest*>;

std::string at_line(const RecordEntry& entry) { return " (RECORD line " + std::to_string(entry.line) + ")"; }

bool is_record_or_signature(const Wheel& wheel, std::string_view path) {
    auto record = wheel.record_path();
    return path == record || path == record + ".jws" || path == record + ".p7s";
}

// "member x: CRC mismatch" -> "CRC mismatch": the finding already names the member.
std::string without_member_prefix(const std::string& problem, const std::string& member) {
    std::string prefix = "member " + member + ": ";
    return problem.starts_with(prefix) ? problem.substr(prefix.size()) : problem;
}

// ---- hashing --------------------------------------------------------------------

// sha384 / sha512 of a member, urlsafe-b64 without padding.
std::string evp_hash(const zip::Archive& archive, const zip::Member& member, std::string_view algorithm) {
    init_crypto();
    const EVP_MD* md = algorithm == "sha384" ? EVP_sha384() : EVP_sha512();
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    if (!context || EVP_DigestInit_ex(context.get(), md, nullptr) != 1)
        throw std::runtime_error("OpenSSL: cannot initialise " + std::string(algorithm));
    archive.stream(member, [&](std::span<const std::uint8_t> chunk) {
        EVP_DigestUpdate(context.get(), chunk.data(), chunk.size());
    });
    std::array<std::uint8_t, EVP_MAX_MD_SIZE> out{};
    unsigned int length = 0;
    EVP_DigestFinal_ex(context.get(), out.data(), &length);
    return urlsafe_b64_nopad(std::span(out.data(), length));
}

// The member's hash in RECORD's spelling for the entry's algorithm.
std::string actual_hash(const zip::Archive& archive, const RecordEntry& entry, const MemberDigest& digest) {
    if (entry.hash_algorithm == "sha256") return urlsafe_b64_nopad(digest.sha256);
    return evp_hash(archive, *digest.member, entry.hash_algorithm);
}

// ---- RECORD line by line ------------------------------------------------------------

void check_hash(const zip::Archive& archive, const RecordEntry& entry, const MemberDigest& digest, Findings& findings) {
    if (entry.hash_algorithm.empty()) {
        findings.push_back({entry.path, "no hash" + at_line(entry)});
        return;
    }
    if (!hash_is_strong(entry.hash_algorithm)) {
        findings.push_back({entry.path, "weak hash algorithm " + entry.hash_algorithm + at_line(entry) +
                                            "; only sha256, sha384 and sha512 are accepted"});
        return;
    }
    std::string recorded_bytes;
    if (!urlsafe_b64_decode(entry.hash_value, recorded_bytes)) {
        findings.push_back({entry.path, "malformed " + entry.hash_algorithm + " value '" + entry.hash_value + "'" + at_line(entry)});
        return;
    }
    if (!digest.hashed) return;  // the line is well formed; the content was not read (scan_sizes)
    std::string actual;
    try {
        actual = actual_hash(archive, entry, digest);
    } catch (const InputError& error) {
        findings.push_back({entry.path, without_member_prefix(error.problem(), entry.path)});
        return;
    }
    std::string actual_bytes;
    urlsafe_b64_decode(actual, actual_bytes);
    if (recorded_bytes != actual_bytes)
        findings.push_back({entry.path, entry.hash_algorithm + " mismatch: RECORD says " + entry.hash_value + ", member has " + actual});
}

void check_size(const RecordEntry& entry, const MemberDigest& digest, Findings& findings) {
    if (!entry.size)
        findings.push_back({entry.path, "no size" + at_line(entry)});
    else if (*entry.size != digest.size)
        findings.push_back({entry.path, "size mismatch: RECORD says " + std::to_string(*entry.size) + ", member has " +
                                            std::to_string(digest.size)});
}

void check_record_lines(const Wheel& wheel, const DigestIndex& digests, Findings& findings) {
    std::set<std::string_view> seen;
    for (const auto& entry : wheel.record()) {
        if (!seen.insert(entry.path).second) {
            findings.push_back({entry.path, "listed more than once in RECORD" + at_line(entry)});
            continue;
        }
        if (auto reason = zip::unsafe_name_reason(entry.path)) {
            findings.push_back({entry.path, "unsafe path in RECORD (" + *reason + ")" + at_line(entry)});
            continue;
        }
        const auto* member = wheel.archive().find(entry.path);
        if (!member) {
            findings.push_back({entry.path, "listed in RECORD but not in the wheel" + at_line(entry)});
            continue;
        }
        if (member->is_directory || is_record_or_signature(wheel, entry.path)) continue;
        auto digest = digests.find(entry.path);
        if (digest == digests.end()) continue;  // unreadable: reported by whoever read it
        check_hash(wheel.archive(), entry, *digest->second, findings);
        check_size(entry, *digest->second, findings);
    }
}

void check_members_recorded(const Wheel& wheel, Findings& findings) {
    std::set<std::string_view> recorded;
    for (const auto& entry : wheel.record()) recorded.insert(entry.path);
    for (const auto& member : wheel.archive().members()) {
        if (member.is_directory || is_record_or_signature(wheel, member.name)) continue;
        if (!recorded.contains(member.name)) findings.push_back({member.name, "not listed in RECORD"});
    }
}

// ---- names, versions, tags -------------------------------------------------------------

void check_versions(const Wheel& wheel, Findings& findings) {
    auto metadata_path = wheel.dist_info() + "/METADATA";
    auto metadata_version = Version::try_parse(wheel.metadata_version());
    if (!metadata_version) {
        findings.push_back({metadata_path, "Version '" + wheel.metadata_version() + "' is not a valid PEP 440 version",
                            FindingKind::version});
        return;
    }
    auto filename_version = Version::try_parse(wheel.filename().version);
    if (!filename_version || *filename_version != *metadata_version)
        findings.push_back({metadata_path,
                            "version mismatch: file name says " + wheel.filename().version + ", METADATA says " +
                                wheel.metadata_version(),
                            FindingKind::version});
}

void check_names(const Wheel& wheel, Findings& findings) {
    auto metadata_path = wheel.dist_info() + "/METADATA";
    auto name = wheel.metadata_name();
    if (name.empty()) {
        findings.push_back({metadata_path, "no Name header", FindingKind::name});
        return;
    }
    if (normalize_project_name(wheel.filename().distribution) != normalize_project_name(name))
        findings.push_back({metadata_path,
                            "name mismatch: file name says " + wheel.filename().distribution + ", METADATA says " + name,
                            FindingKind::name});
}

void check_dist_info_name(const Wheel& wheel, Findings& findings) {
    const auto& dir = wheel.dist_info();
    auto stem = std::string_view(dir).substr(0, dir.size() - std::string_view(".dist-info").size());
    auto dash = stem.rfind('-');
    auto expected = escape_distribution(wheel.metadata_name()) + "-" + wheel.metadata_version() + ".dist-info";
    auto mismatch = [&](FindingKind kind) {
        findings.push_back({dir, "dist-info directory does not match METADATA (expected " + expected + ")", kind});
    };
    if (dash == std::string_view::npos) return mismatch(FindingKind::name);
    auto dir_version = Version::try_parse(stem.substr(dash + 1));
    auto metadata_version = Version::try_parse(wheel.metadata_version());
    bool name_agrees = normalize_project_name(stem.substr(0, dash)) == normalize_project_name(wheel.metadata_name());
    bool version_agrees = !metadata_version || (dir_version && *dir_version == *metadata_version);
    if (!name_agrees || !version_agrees) mismatch(name_agrees ? FindingKind::version : FindingKind::name);
}

void check_tags(const Wheel& wheel, Findings& findings) {
    auto wheel_path = wheel.dist_info() + "/WHEEL";
    std::set<std::string> listed;
    for (const auto& tag : wheel.wheel_file().all("Tag")) listed.insert(tag.substr(0, tag.find_last_not_of(" \t") + 1));
    auto from_name_list = wheel.filename().tags();
    std::set<std::string> from_name(from_name_list.begin(), from_name_list.end());
    for (const auto& tag : from_name)
        if (!listed.contains(tag))
            findings.push_back({wheel_path, "tag " + tag + " from the file name is missing from WHEEL", FindingKind::tags});
    for (const auto& tag : listed)
        if (!from_name.contains(tag))
            findings.push_back({wheel_path, "WHEEL lists tag " + tag + " that the file name does not have", FindingKind::tags});
}

// Member paths, and the directories they lie in, that one file system keeps apart
// and another merges (wheel/name_fold.hpp).
void check_name_collisions(const Wheel& wheel, Findings& findings) {
    std::vector<std::string> paths;
    std::set<std::string, std::less<>> seen;
    for (const auto& member : wheel.archive().members()) {
        std::string_view name = member.name;
        if (name.ends_with('/')) name.remove_suffix(1);
        for (std::size_t slash = name.find('/');; slash = name.find('/', slash + 1)) {
            const std::string_view path = name.substr(0, slash);
            if (seen.insert(std::string(path)).second) paths.emplace_back(path);
            if (slash == std::string_view::npos) break;
        }
    }
    for (const NameCollision& collision : name_collisions(paths))
        findings.push_back({collision.second, "and " + collision.first + " " + collision.why +
                                                  ": they collide on case-insensitive or normalising file systems",
                            FindingKind::collision});
}

// A path component longer than Linux's NAME_MAX (255 bytes): pip cannot create
// it on any file system, so the wheel cannot be installed.
void check_name_lengths(const Wheel& wheel, Findings& findings) {
    constexpr std::size_t name_max = 255;
    for (const auto& member : wheel.archive().members()) {
        std::string_view rest = member.name;
        std::size_t longest = 0;
        for (std::size_t slash; !rest.empty(); rest.remove_prefix(slash == std::string_view::npos ? rest.size() : slash + 1)) {
            slash = rest.find('/');
            longest = std::max(longest, std::min(slash, rest.size()));
        }
        if (longest > name_max)
            findings.push_back({member.name.size() > 80 ? member.name.substr(0, 60) + "…" : member.name,
                                "a name of " + std::to_string(longest) + " bytes in its path, longer than NAME_MAX " +
                                    std::to_string(name_max) + ": no Linux file system can install it",
                                FindingKind::length});
    }
}

}  // namespace

bool tags_agree(const Wheel& wheel) {
    Findings findings;
    check_tags(wheel, findings);
    return findings.empty();
}

std::vector<VerifyFinding> verify_wheel(const Wheel& wheel, const std::vector<MemberDigest>& digests) {
    DigestIndex index;
    for (const auto& digest : digests) index.emplace(digest.member->name, &digest);
    Findings findings;
    if (!wheel.wheel_version_problem().empty())
        findings.push_back({wheel.dist_info() + "/WHEEL", wheel.wheel_version_problem(), FindingKind::wheel_version});
    check_record_lines(wheel, index, findings);
    check_members_recorded(wheel, findings);
    check_names(wheel, findings);
    check_versions(wheel, findings);
    check_dist_info_name(wheel, findings);
    check_tags(wheel, findings);
    check_name_collisions(wheel, findings);
    check_name_lengths(wheel, findings);
    return findings;
}

}  // namespace wheelfix::wheel
