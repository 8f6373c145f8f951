// scan_members: stream each member once through SHA-256; scan_members_streaming:
// ELF members streamed into bounded images; scan_members_indexed: the members a
// writer keeps read into MemberImages (wheel/member_reader.hpp).
#include "wheelfix/wheel/scan.hpp"

#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/util/parallel_tasks.hpp"
#include "wheelfix/util/progress.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/timings.hpp"

#include <algorithm>
#include <memory>

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

// scan_one, with an ELF member's chunks also fed to a StreamedElf keeping what
// `keeps` declares; its image is handed to `use` once the member is read and checked.
MemberDigest scan_streamed(const zip::Archive& archive, const zip::Member& member, Keeps keeps, const ElfImageUse& use,
                           const ProgressTask& progress) {
    MemberDigest digest;
    digest.member = &member;
    Sha256 hasher;
    std::shared_ptr<elf::StreamedElf> kept;
    bool first_chunk = true;
    const zip::SeekableMember seekable(archive, member, [&](std::span<const std::uint8_t> chunk) {
        hasher.update(chunk);
        progress.advance(chunk.size());
        if (first_chunk) {
            first_chunk = false;
            digest.is_elf = !member.is_symlink && elf::is_elf(chunk);
            if (digest.is_elf) kept = keeping(member.size, keeps);
        }
        const timings::Scope timer(timings::Phase::parse);
        if (kept) kept->consume(chunk);
    });
    digest.size = seekable.size();
    digest.sha256 = hasher.digest();
    const timings::Scope timer(timings::Phase::parse);
    if (!kept) return digest;
    MemberImage image(std::move(kept), seekable);
    use(member, image);
    return digest;
}

// A member the writer keeps, read by wheel/member_reader.hpp read_member: whole
// (hashed on a second thread that follows the inflate: on a 541 MB library the
// SHA-256 is done when the last byte is inflated), or bounded through `streamed`.
MemberDigest scan_indexed(const zip::Archive& archive, const zip::Member& member, const ElfImageUse& on_indexed,
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

// The progress task of one pass over `archive`: its total the inflated sizes of the
// central directory (an estimate: it is untrusted).
ProgressTask reading_progress(const zip::Archive& archive) {
    std::uint64_t total = 0;
    for (const auto& member : archive.members()) total += member.size;
    return ProgressTask("reading " + archive.path().filename().string(), total);
}

// read(i) for every member of `sizes`, concurrently unless one dominates (the
// header's rule). Alone, the big member's own helper thread (its inflate's sink
// pipeline or hash follower) gets the spare CPU; read concurrently, that helper is
// claimed only if the thread reading the small members has already ended, so
// whether the big member is hashed beside its inflate or after it would depend on
// a race.
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

}  // namespace

std::vector<MemberDigest> scan_sizes(const zip::Archive& archive, const MemberPick& hash_it) {
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

std::vector<MemberDigest> scan_members_streaming(const zip::Archive& archive, Keeps keeps, const ElfImageUse& use,
                                                 const MemberPick& read_it) {
    const ProgressTask progress = reading_progress(archive);
    std::vector<const zip::Member*> to_read;
    std::vector<std::uint64_t> sizes;
    for (const auto& member : archive.members()) {
        if (member.is_directory) continue;
        if (!read_it(member)) {
            progress.advance(member.size);
            continue;
        }
        to_read.push_back(&member);
        sizes.push_back(member.size);
    }
    std::vector<MemberDigest> digests(to_read.size());
    auto read_one = [&](std::size_t i) { digests[i] = scan_streamed(archive, *to_read[i], keeps, use, progress); };
    read_members(sizes, read_one);
    return digests;
}

std::vector<MemberDigest> scan_members_indexed(const zip::Archive& archive, const MemberPick& wants_index,
                                               const ElfImageUse& on_indexed, const StreamSinkFor& stream_into) {
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
