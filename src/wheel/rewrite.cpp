// write_wheel: an output member list from the input's, RECORD rebuilt from the
// original lines, handed to the zip writer.
#include "wheelfix/wheel/rewrite.hpp"

#include "wheelfix/util/error.hpp"
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

RecordEntry record_entry_for(const AddedMember& added) {
    RecordEntry entry;
    entry.path = added.name;
    entry.hash_algorithm = "sha256";
    entry.hash_value = urlsafe_b64_nopad(sha256(added.bytes));
    entry.size = added.bytes.size();
    return entry;
}

// Added members' lines go before the first .dist-info line (or last).
void insert_added(const Wheel& wheel, std::vector<RecordEntry>& entries, const std::vector<AddedMember>& added) {
    auto at = std::find_if(entries.begin(), entries.end(), [&](const RecordEntry& e) { return in_dist_info(wheel, e.path); });
    std::vector<RecordEntry> lines;
    for (const auto& member : added) lines.push_back(record_entry_for(member));
    entries.insert(at, lines.begin(), lines.end());
}

std::string regenerated_record(const Wheel& wheel, const std::map<std::string, zip::PrecompressedMember>& edited,
                               const std::vector<AddedMember>& added, bool drop_signatures) {
    std::vector<RecordEntry> entries;
    for (auto entry : wheel.record()) {
        if (drop_signatures && is_signature(wheel, entry.path)) continue;
        if (auto found = edited.find(entry.path); found != edited.end()) {
            entry.hash_algorithm = "sha256";
            entry.hash_value = urlsafe_b64_nopad(found->second.sha256);
            entry.size = found->second.size;
        }
        entries.push_back(std::move(entry));
    }
    insert_added(wheel, entries, added);
    return format_record(entries);
}

zip::OutputMember output_for(const zip::Member& member, std::map<std::string, zip::PrecompressedMember>& edited, const WriteOptions& options) {
    zip::OutputMember out;
    out.name = member.name;
    out.unix_mode = mode_of(member);
    out.mtime = member.mtime;
    if (auto found = edited.find(member.name); found != edited.end()) {
        out.source = zip::Precompressed{&member, std::move(found->second)};
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

zip::OutputMember output_for_added(AddedMember& added, std::int64_t mtime) {
    zip::OutputMember out;
    out.name = added.name;
    out.unix_mode = added.unix_mode;
    out.mtime = mtime;
    out.source = zip::Content{std::move(added.bytes)};
    return out;
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
    auto findings = verify_wheel(wheel, digests);
    if (findings.empty()) return;
    std::string problem = "does not match its RECORD, refusing to write a fixed copy (" + findings.front().member + ": " +
                          findings.front().problem + ")";
    if (findings.size() > 1) problem += " and " + std::to_string(findings.size() - 1) + " more; see wheelfix verify";
    throw InputError(wheel.archive().path().string(), problem);
}

void write_wheel(const Wheel& wheel, std::map<std::string, zip::PrecompressedMember> edited,
                 const std::filesystem::path& destination, const WriteOptions& options) {
    write_wheel(wheel, std::move(edited), {}, destination, options);
}

void write_wheel(const Wheel& wheel, std::map<std::string, zip::PrecompressedMember> edited,
                 std::vector<AddedMember> added, const std::filesystem::path& destination,
                 const WriteOptions& options) {
    check_added(wheel, added);
    bool changed = !edited.empty() || !added.empty();
    std::vector<zip::OutputMember> payload, dist_info;
    const zip::Member* record_member = nullptr;
    for (const auto& member : wheel.archive().members()) {
        if (member.name == wheel.record_path()) {
            record_member = &member;
            continue;
        }
        if (changed && is_signature(wheel, member.name)) continue;
        auto& list = in_dist_info(wheel, member.name) ? dist_info : payload;
        list.push_back(output_for(member, edited, options));
    }
    if (!record_member) throw InputError(wheel.archive().path().string(), "no RECORD member");
    std::string record_text = changed ? regenerated_record(wheel, edited, added, changed) : std::string();
    for (auto& member : added) payload.push_back(output_for_added(member, time_for_changed(*record_member, options)));

    zip::OutputMember record;
    record.name = wheel.record_path();
    record.unix_mode = mode_of(*record_member);
    if (changed) {
        record.source = zip::Content{std::vector<std::uint8_t>(record_text.begin(), record_text.end())};
        record.mtime = time_for_changed(*record_member, options);
    } else {
        record.source = zip::RawCopy{record_member};
        record.mtime = record_member->mtime;
    }
    payload.insert(payload.end(), std::make_move_iterator(dist_info.begin()), std::make_move_iterator(dist_info.end()));
    payload.push_back(std::move(record));
    zip::write_archive(destination, wheel.archive(), payload);
}

}  // namespace wheelfix::wheel
