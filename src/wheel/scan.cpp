// scan_members: stream each member once through SHA-256, keeping ELF images whole.
#include "wheelfix/wheel/scan.hpp"

#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/util/parallel_tasks.hpp"
#include "wheelfix/util/progress.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/zip/seekable_member.hpp"

#include <algorithm>

namespace wheelfix::wheel {

namespace {

// A growing buffer for one ELF image; the central directory's size is only a hint
// (it is untrusted), so the reservation is capped and the vector grows if needed.
constexpr std::uint64_t kMaxUpfrontReservation = std::uint64_t(4) << 30;

MemberDigest scan_one(const zip::Archive& archive, const zip::Member& member, const ElfSink& on_elf,
                      const ProgressTask& progress) {
    MemberDigest digest;
    digest.member = &member;
    Sha256 hasher;
    std::vector<std::uint8_t> image;
    bool first_chunk = true;
    digest.size = archive.stream(member, [&](std::span<const std::uint8_t> chunk) {
        hasher.update(chunk);
        progress.advance(chunk.size());
        if (first_chunk) {
            first_chunk = false;
            digest.is_elf = on_elf && !member.is_symlink && elf::is_elf(chunk);
            if (digest.is_elf) image.reserve(std::min(member.size, kMaxUpfrontReservation));
        }
        if (digest.is_elf) image.insert(image.end(), chunk.begin(), chunk.end());
    });
    digest.sha256 = hasher.digest();
    if (digest.is_elf) on_elf(member, image);
    return digest;
}

// The member is kept whole anyway, so inflate_indexed hashes it on a second
// thread that follows the inflate (zip/inflate_index.hpp): on a 541 MB library
// the SHA-256 is done when the last byte is inflated, before `on_indexed` runs.
// With a `sink` (scan_members_indexed's stream_into), the bytes are handed on as
// they pass instead of kept, and windows are recorded for reading ranges again.
MemberDigest scan_indexed(const zip::Archive& archive, const zip::Member& member, const IndexedSink& on_indexed,
                          const ProgressTask& progress, const StreamSink& streamed = {}) {
    const zip::InflateSink& sink = streamed.sink;
    MemberDigest digest;
    digest.member = &member;
    // A streamed member is one the executor may splice (bounded): it is read by the
    // default inflater (ISA-L records a block start per window, not every one); the
    // splice finds the exact starts around its edits again from the window before
    // them (zip/splice.hpp).
    const auto options = sink ? zip::InflateOptions{.sha256 = true,
                                                    .window_every = zip::SeekableMember::spacing(member.size),
                                                    .sink_may_lag = streamed.may_lag,
                                                    .sink_hashing = streamed.hashing,
                                                    .sink_start = streamed.start}
                              : zip::InflateOptions{.keep = true, .sha256 = true};
    auto inflated = zip::inflate_indexed(archive, member, sink, options);
    progress.advance(inflated.size);
    digest.size = inflated.size;
    digest.sha256 = *inflated.sha256;
    digest.is_elf = !member.is_symlink && (sink ? true : elf::is_elf(inflated.data));  // streamed: its magic was read
    on_indexed(member, inflated);
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

bool one_dominates(const std::vector<std::uint64_t>& sizes) {
    if (sizes.size() < 2) return true;
    const std::uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
    std::uint64_t rest = 0;
    for (const std::uint64_t size : sizes) rest += size;
    rest -= largest;
    return rest < largest / 4;
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
        digest = scan_one(archive, *digest.member, {}, progress);
    };
    if (one_dominates(sizes)) {
        for (std::size_t i = 0; i < sizes.size(); ++i) hash_one(i);
        return digests;
    }
    run_tasks(sizes, hash_one);
    return digests;
}

std::vector<MemberDigest> scan_members(const zip::Archive& archive, const ElfSink& on_elf) {
    // Only hashing: concurrently. Collecting ELF images whole stays one member at a
    // time, so at most one image is in memory (the contract).
    if (!on_elf) return scan_sizes(archive, [](const zip::Member&) { return true; });
    std::vector<MemberDigest> digests;
    digests.reserve(archive.members().size());
    const ProgressTask progress = reading_progress(archive);
    for (const auto& member : archive.members()) {
        if (member.is_directory) continue;
        digests.push_back(scan_one(archive, member, on_elf, progress));
    }
    return digests;
}

std::vector<MemberDigest> scan_members_indexed(const zip::Archive& archive,
                                               const std::function<bool(const zip::Member&)>& wants_index,
                                               const IndexedSink& on_indexed) {
    return scan_members_indexed(archive, wants_index, on_indexed, {});
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
            digests.push_back(scan_one(archive, member, {}, progress));
            continue;
        }
        const StreamSink sink = stream_into ? stream_into(member) : StreamSink{};
        digests.push_back(scan_indexed(archive, member, on_indexed, progress, sink));
    }
    return digests;
}

}  // namespace wheelfix::wheel
