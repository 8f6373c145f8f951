// write_wheel_changes: an output member list from the input's, RECORD rebuilt from the
// original lines, handed to the zip writer.
#include "wheelfix/wheel/rewrite.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/output_file.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/wheel/verify.hpp"
#include "wheelfix/zip/writer.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <cstdlib>
#include <sys/stat.h>

namespace wheelfix::wheel {

namespace {

bool is_signature(const Wheel& wheel, std::string_view name) {
    return name == wheel.record_path() + ".jws" || name == wheel.record_path() + ".p7s";
}

bool in_dist_info(const Wheel& wheel, std::string_view name) { return name.starts_with(wheel.dist_info() + "/"); }

std::uint32_t mode_of(const zip::Member& member) {
    if (member.has_unix_mode && member.unix_mode != 0) return member.unix_mode;
    return member.is_symlink ? (S_IFLNK | 0777) : (S_IFREG | 0644);
}

std::int64_t time_for_changed(const zip::Member& member, const WriteOptions& options) {
    return options.source_date_epoch.value_or(member.mtime);
}

void set_record_digest(RecordEntry& entry, std::span<const std::uint8_t> sha, std::uint64_t size) {
    entry.hash_algorithm = "sha256";
    entry.hash_value = urlsafe_b64_nopad(sha);
    entry.size = size;
}

RecordEntry record_entry_for(std::string path, std::span<const std::uint8_t> bytes) {
    RecordEntry entry;
    entry.path = std::move(path);
    set_record_digest(entry, sha256(bytes), bytes.size());
    return entry;
}

// Added members' lines go before the first .dist-info line (or last).
void insert_added(const Wheel& wheel, std::vector<RecordEntry>& entries, const std::vector<AddedMember>& added) {
    auto at = std::find_if(entries.begin(), entries.end(), [&](const RecordEntry& e) { return in_dist_info(wheel, e.path); });
    std::vector<RecordEntry> lines;
    for (const auto& member : added) lines.push_back(record_entry_for(member.name, member.bytes));
    entries.insert(at, lines.begin(), lines.end());
}

// Where a member lands: inside a renamed .dist-info directory, or where it was.
std::string output_name(const Wheel& wheel, const DistInfoChanges& changes, const std::string& name) {
    if (!changes.rename_to || !in_dist_info(wheel, name)) return name;
    return *changes.rename_to + name.substr(wheel.dist_info().size());
}

const std::string* replacement_for(const Wheel& wheel, const DistInfoChanges& changes, std::string_view name) {
    if (!in_dist_info(wheel, name)) return nullptr;
    auto found = changes.replaced.find(std::string(name.substr(wheel.dist_info().size() + 1)));
    return found == changes.replaced.end() ? nullptr : &found->second;
}

std::span<const std::uint8_t> bytes_of(std::string_view text) {
    return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

// RECORD for a wheel that changed: its signatures no longer hold, so they go.
std::string regenerated_record(const Wheel& wheel, const WheelChanges& changes) {
    std::vector<RecordEntry> entries;
    for (auto entry : wheel.record()) {
        if (is_signature(wheel, entry.path)) continue;
        if (auto found = changes.edited.find(entry.path); found != changes.edited.end())
            set_record_digest(entry, found->second.sha256, found->second.size);
        if (const auto* content = replacement_for(wheel, changes.dist_info, entry.path))
            set_record_digest(entry, sha256(bytes_of(*content)), content->size());
        entries.push_back(std::move(entry));
    }
    insert_added(wheel, entries, changes.added);
    for (auto& entry : entries) entry.path = output_name(wheel, changes.dist_info, entry.path);
    // New dist-info files go before RECORD's own line (the last).
    auto record_line = std::find_if(entries.begin(), entries.end(), [&](const RecordEntry& e) {
        return e.path == output_name(wheel, changes.dist_info, wheel.record_path());
    });
    std::vector<RecordEntry> new_files;
    const std::string directory = changes.dist_info.rename_to.value_or(wheel.dist_info());
    for (const auto& [file, content] : changes.dist_info.added)
        new_files.push_back(record_entry_for(directory + "/" + file, bytes_of(content)));
    entries.insert(record_line, new_files.begin(), new_files.end());
    return format_record(entries);
}

zip::OutputMember output_for(const Wheel& wheel, const zip::Member& member, WheelChanges& changes,
                             const WriteOptions& options) {
    zip::OutputMember out;
    out.name = output_name(wheel, changes.dist_info, member.name);
    out.unix_mode = mode_of(member);
    out.mtime = member.mtime;
    if (auto found = changes.edited.find(member.name); found != changes.edited.end()) {
        out.source = zip::Precompressed{&member, std::move(found->second)};
        out.mtime = time_for_changed(member, options);
    } else if (const auto* content = replacement_for(wheel, changes.dist_info, member.name)) {
        out.source = zip::Content{std::vector<std::uint8_t>(content->begin(), content->end())};
        out.mtime = time_for_changed(member, options);
    } else {
        out.source = zip::RawCopy{&member};
    }
    return out;
}

void check_added(const Wheel& wheel, const std::vector<AddedMember>& added) {
    std::set<std::string_view> names;
    for (const auto& member : wheel.archive().members()) names.insert(member.name);
    for (const auto& member : added) {
        if (member.name.empty() || member.name.front() == '/' || in_dist_info(wheel, member.name))
            throw InputError(member.name, "cannot add this member to the wheel");
        if (!names.insert(member.name).second)
            throw InputError(wheel.archive().path().string(), "already has a member " + member.name);
    }
}

void check_dist_info_changes(const Wheel& wheel, const DistInfoChanges& changes) {
    const auto& rename = changes.rename_to;
    if (rename && (!rename->ends_with(".dist-info") || rename->find('/') != std::string::npos ||
                   zip::unsafe_name_reason(*rename + "/RECORD")))
        throw InputError(*rename, "not a .dist-info directory name");
    for (const auto& [file, content] : changes.replaced)
        if (file == "RECORD" || !wheel.archive().find(wheel.dist_info() + "/" + file))
            throw InputError(wheel.archive().path().string(), "cannot replace " + wheel.dist_info() + "/" + file);
    for (const auto& [file, content] : changes.added)
        if (file.empty() || file == "RECORD" || wheel.archive().find(wheel.dist_info() + "/" + file) ||
            zip::unsafe_name_reason(wheel.dist_info() + "/" + file))
            throw InputError(wheel.archive().path().string(), "cannot add " + wheel.dist_info() + "/" + file);
}

bool changes_anything(const WheelChanges& changes) {
    return !changes.edited.empty() || !changes.added.empty() || changes.dist_info.rename_to ||
           !changes.dist_info.replaced.empty() || !changes.dist_info.added.empty();
}

}  // namespace

std::optional<std::int64_t> source_date_epoch_from_environment() {
    const char* text = std::getenv("SOURCE_DATE_EPOCH");
    if (!text || !*text) return std::nullopt;
    std::int64_t value = 0;
    std::string_view view(text);
    auto [end, ec] = std::from_chars(view.data(), view.data() + view.size(), value);
    if (ec != std::errc() || end != view.data() + view.size() || value < 0)
        throw InputError("SOURCE_DATE_EPOCH", "not a number of seconds: '" + std::string(view) + "'");
    return value;
}

void require_record_matches(const Wheel& wheel, const std::vector<MemberDigest>& digests) {
    refuse_findings(wheel, verify_wheel(wheel, digests));
}

void refuse_findings(const Wheel& wheel, const std::vector<VerifyFinding>& findings) {
    if (findings.empty()) return;
    // Tampering first: it explains more than a name does.
    auto first = std::find_if(findings.begin(), findings.end(), [](const auto& f) { return f.kind == FindingKind::record; });
    if (first == findings.end()) first = findings.begin();
    const char* what = first->kind == FindingKind::record      ? "does not match its RECORD"
                       : first->kind == FindingKind::collision ? "has member names that only Linux keeps apart"
                       : first->kind == FindingKind::length    ? "has a member name too long to install"
                                                               : "does not name itself consistently";
    std::string problem = std::string(what) + ", refusing to write a fixed copy (" + first->member + ": " + first->problem + ")";
    if (findings.size() > 1) problem += " and " + std::to_string(findings.size() - 1) + " more; see wheelfix verify";
    if (first->kind == FindingKind::tags) problem += "; retag and repair rewrite WHEEL's Tag lines from the file name";
    throw InputError(wheel.archive().path().string(), problem);
}

void write_wheel_changes(const Wheel& wheel, WheelChanges changes, const std::filesystem::path& destination,
                         const WriteOptions& options) {
    check_added(wheel, changes.added);
    check_dist_info_changes(wheel, changes.dist_info);
    bool changed = changes_anything(changes);
    std::vector<zip::OutputMember> payload, dist_info;
    const zip::Member* record_member = nullptr;
    for (const auto& member : wheel.archive().members()) {
        if (member.name == wheel.record_path()) {
            record_member = &member;
            continue;
        }
        if (changed && is_signature(wheel, member.name)) continue;
        auto& list = in_dist_info(wheel, member.name) ? dist_info : payload;
        list.push_back(output_for(wheel, member, changes, options));
    }
    if (!record_member) throw InputError(wheel.archive().path().string(), "no RECORD member");
    std::string record_text = changed ? regenerated_record(wheel, changes) : std::string();
    const std::int64_t new_mtime = time_for_changed(*record_member, options);  // the members this write makes
    for (auto& member : changes.added)
        payload.push_back({member.name, zip::Content{std::move(member.bytes)}, member.unix_mode, new_mtime});

    zip::OutputMember record;
    record.name = output_name(wheel, changes.dist_info, wheel.record_path());
    record.unix_mode = mode_of(*record_member);
    if (changed) {
        record.source = zip::Content{std::vector<std::uint8_t>(record_text.begin(), record_text.end())};
        record.mtime = new_mtime;
    } else {
        record.source = zip::RawCopy{record_member};
        record.mtime = record_member->mtime;
    }
    const std::string directory = changes.dist_info.rename_to.value_or(wheel.dist_info());
    for (const auto& [file, content] : changes.dist_info.added)
        dist_info.push_back({directory + "/" + file, zip::Content{std::vector<std::uint8_t>(content.begin(), content.end())},
                             0100644, new_mtime});
    payload.insert(payload.end(), std::make_move_iterator(dist_info.begin()), std::make_move_iterator(dist_info.end()));
    payload.push_back(std::move(record));
    zip::write_archive(destination, wheel.archive(), payload, options.overwrite ? Existing::replace : Existing::refuse);
}

}  // namespace wheelfix::wheel
