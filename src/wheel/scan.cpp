// scan_members: stream each member once through SHA-256; scan_members_indexed: the
// members a writer keeps read into MemberImages (wheel/member_reader.hpp).
#include "wheelfix/wheel/scan.hpp"

#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/util/parallel_tasks.hpp"
#include "wheelfix/util/progress.hpp"
#include "wheelfix/util/sha256.hpp"

#include <algorithm>

namespace wheelfix::wheel {

namespace {

MemberDigest scan_one(const zip::Archive& archive, const zip::Member& member, const ProgressTask& progress) {
    MemberDigest digest;
    digest.member = &member;
    Sha256 hasher;
    digest.size = archive.stream(member, [&](std::span<const std::uint8_t> chunk) {
        hasher.update(chunk);
        progress.advance(chunk.size());
    });
    digest.sha256 = hasher.digest();
    return digest;
}

// A member the writer keeps, read by wheel/member_reader.hpp read_member: whole
// (hashed on a second thread that follows the inflate: on a 541 MB library the
// SHA-256 is done when the last byte is inflated), or bounded through `streamed`.
MemberDigest scan_indexed(const zip::Archive& archive, const zip::Member& member, const IndexedSink& on_indexed,
                          const ProgressTask& progress, const StreamSink& streamed) {
    MemberImage image = read_member(archive, member, streamed);
    MemberDigest digest;
    digest.member = &member;
    digest.size = image.index().size;
    digest.sha256 = *image.index().sha256;
    digest.is_elf = !member.is_symlink && image.is_elf();
    progress.advance(digest.size);
    on_indexed(member, image);
    return digest;
}

// Whether the member's content starts with the ELF magic, from its first chunk
// only (the rest is not inflated): a member that is not ELF is never kept whole.
bool starts_with_elf(const zip::Archive& archive, const zip::Member& member) {
    struct Enough {};
    bool elf = false;
    try {
        archive.stream(member, [&](std::span<const std::uint8_t> chunk) {
            elf = elf::is_elf(chunk);
            throw Enough{};
        }, 64);
    } catch (const Enough&) {
    }
    return elf;
}

}  // namespace

ProgressTask reading_progress(const zip::Archive& archive) {
    std::uint64_t total = 0;
    for (const auto& member : archive.members()) total += member.size;
    return ProgressTask("reading " + archive.path().filename().string(), total);
}

std::string MemberDigest::record_hash() const { return "sha256=" + urlsafe_b64_nopad(sha256); }

void read_members(const std::vector<std::uint64_t>& sizes, const std::function<void(std::size_t)>& read) {
    const std::uint64_t largest = sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
    std::uint64_t rest = 0;
    for (const std::uint64_t size : sizes) rest += size;
    rest -= largest;
    if (sizes.size() >= 2 && rest >= largest / 4) {
        run_tasks(sizes, read);
        return;
    }
    for (std::size_t i = 0; i < sizes.size(); ++i) read(i);
}

// The file members `hash_it` picks are hashed on the threads the budget spares,
// largest first (util/parallel_tasks.hpp); the others get their size from the
// central directory and no hash. In archive order whatever the budget.
std::vector<MemberDigest> scan_sizes(const zip::Archive& archive, const std::function<bool(const zip::Member&)>& hash_it) {
    std::vector<MemberDigest> digests;
    std::vector<std::size_t> to_hash;  // positions in digests
    std::vector<std::uint64_t> sizes;
    const ProgressTask progress = reading_progress(archive);
    for (const auto& member : archive.members()) {
        if (member.is_directory) continue;
        MemberDigest digest;
        digest.member = &member;
        digest.size = member.size;
        digest.hashed = false;
        if (hash_it(member)) {
            to_hash.push_back(digests.size());
            sizes.push_back(member.size);
        } else {
            progress.advance(member.size);
        }
        digests.push_back(digest);
    }
    auto hash_one = [&](std::size_t i) {
        MemberDigest& digest = digests[to_hash[i]];
        digest = scan_one(archive, *digest.member, progress);
    };
    read_members(sizes, hash_one);
    return digests;
}

std::vector<MemberDigest> scan_members(const zip::Archive& archive) {
    return scan_sizes(archive, [](const zip::Member&) { return true; });
}

std::vector<MemberDigest> scan_members_indexed(const zip::Archive& archive,
                                               const std::function<bool(const zip::Member&)>& wants_index,
                                               const IndexedSink& on_indexed, const StreamSinkFor& stream_into) {
    std::vector<MemberDigest> digests;
    digests.reserve(archive.members().size());
    const ProgressTask progress = reading_progress(archive);
    for (const auto& member : archive.members()) {
        if (member.is_directory) continue;
        bool keep = wants_index(member) && !member.is_symlink && starts_with_elf(archive, member);
        if (!keep) {
            digests.push_back(scan_one(archive, member, progress));
            continue;
        }
        digests.push_back(scan_indexed(archive, member, on_indexed, progress, stream_into(member)));
    }
    return digests;
}

}  // namespace wheelfix::wheel
