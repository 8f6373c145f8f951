// scan_members_streaming: hash every member once, streaming ELF members into
// bounded images (scan_streaming.hpp has the contract).
#include "wheelfix/wheel/scan_streaming.hpp"

#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/timings.hpp"

#include <memory>

namespace wheelfix::wheel {

namespace {

MemberDigest scan_one(const zip::Archive& archive, const zip::Member& member, Keeps keeps, const ElfImageUse& use,
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

}  // namespace

std::vector<MemberDigest> scan_members_streaming(const zip::Archive& archive, Keeps keeps, const ElfImageUse& use,
                                                 const std::function<bool(const zip::Member&)>& read_it) {
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
    auto read_one = [&](std::size_t i) { digests[i] = scan_one(archive, *to_read[i], keeps, use, progress); };
    read_members(sizes, read_one);
    return digests;
}

}  // namespace wheelfix::wheel
