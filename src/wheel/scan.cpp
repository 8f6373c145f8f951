// scan_members: stream each member once through SHA-256, keeping ELF images whole.
#include "wheelfix/wheel/scan.hpp"

#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/util/sha256.hpp"

#include <algorithm>
#include <thread>

namespace wheelfix::wheel {

namespace {

// A growing buffer for one ELF image; the central directory's size is only a hint
// (it is untrusted), so the reservation is capped and the vector grows if needed.
constexpr std::uint64_t kMaxUpfrontReservation = std::uint64_t(4) << 30;

MemberDigest scan_one(const zip::Archive& archive, const zip::Member& member, const ElfSink& on_elf) {
    MemberDigest digest;
    digest.member = &member;
    Sha256 hasher;
    std::vector<std::uint8_t> image;
    bool first_chunk = true;
    digest.size = archive.stream(member, [&](std::span<const std::uint8_t> chunk) {
        hasher.update(chunk);
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

// The member is kept whole anyway, so its SHA-256 runs on a second thread while
// `on_indexed` parses and plans on this one (both only read the bytes): on a 541 MB
// library that hides the hash behind the ELF work instead of adding to the inflate.
MemberDigest scan_indexed(const zip::Archive& archive, const zip::Member& member, const IndexedSink& on_indexed) {
    MemberDigest digest;
    digest.member = &member;
    auto inflated = zip::inflate_indexed(archive, member, [](std::span<const std::uint8_t>) {}, /*keep=*/true);
    digest.size = inflated.size;
    digest.is_elf = !member.is_symlink && elf::is_elf(inflated.data);
    {
        std::jthread hashing([&] { digest.sha256 = sha256(inflated.data); });
        on_indexed(member, inflated);
    }
    return digest;
}

}  // namespace

std::string MemberDigest::record_hash() const { return "sha256=" + urlsafe_b64_nopad(sha256); }

std::vector<MemberDigest> scan_members(const zip::Archive& archive, const ElfSink& on_elf) {
    std::vector<MemberDigest> digests;
    digests.reserve(archive.members().size());
    for (const auto& member : archive.members()) {
        if (member.is_directory) continue;
        digests.push_back(scan_one(archive, member, on_elf));
    }
    return digests;
}

std::vector<MemberDigest> scan_members_indexed(const zip::Archive& archive,
                                               const std::function<bool(const zip::Member&)>& wants_index,
                                               const IndexedSink& on_indexed) {
    std::vector<MemberDigest> digests;
    digests.reserve(archive.members().size());
    for (const auto& member : archive.members()) {
        if (member.is_directory) continue;
        digests.push_back(wants_index(member) ? scan_indexed(archive, member, on_indexed) : scan_one(archive, member, {}));
    }
    return digests;
}

}  // namespace wheelfix::wheel
