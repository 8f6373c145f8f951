// One pass over a wheel's members: every byte is inflated once.
//
// Contract of every pass here: each file member it reads is read exactly once, its
// size and SHA-256 computed while the bytes pass (so RECORD can be checked without
// a second read); the digests come in archive order. Directory entries are left
// out; symlink entries are listed with their stored bytes hashed (a symlink's bytes
// are its target, as RECORD tools hash them). Errors reading a member (CRC,
// truncation) are InputErrors naming the archive and member. Each pass reports its
// progress as one ProgressTask, "reading <wheel>", over the inflated sizes the
// central directory declares (util/progress.hpp), advanced as the bytes pass.
//
// scan_members(), scan_sizes() and scan_members_streaming() read their members on
// the threads the thread budget spares, largest first (util/parallel_tasks.hpp),
// unless one member outweighs all the others four times over (a wheel of one big
// library): then one at a time, in archive order. The digests are the same at any
// budget, and when several members fail, the first in archive order is thrown.
#pragma once

#include "wheelfix/wheel/member_reader.hpp"
#include "wheelfix/zip/archive.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace wheelfix::wheel {

struct MemberDigest {
    const zip::Member* member = nullptr;
    std::uint64_t size = 0;
    std::array<std::uint8_t, 32> sha256{};
    bool hashed = true;  // false: size from the central directory, sha256 unknown (scan_sizes)
    bool is_elf = false;
};

using MemberPick = std::function<bool(const zip::Member&)>;
using ElfImageUse = std::function<void(const zip::Member&, MemberImage&)>;

std::vector<MemberDigest> scan_members(const zip::Archive& archive);

// The pass for a writer that copies members as stored and does not prove their
// content (retag without --verify): only the members `hash_it` picks are inflated
// and hashed; every other file member gets its size from the central directory and
// no hash (MemberDigest::hashed is false), and not one of its bytes is read.
// verify_wheel() checks such a digest by size only.
std::vector<MemberDigest> scan_sizes(const zip::Archive& archive, const MemberPick& hash_it);

// The pass for readers that keep only parts of the ELF members (inspect): only the
// members `read_it` picks are read (not a byte of the others, and they get no
// digest). A member whose first bytes are the ELF magic (not a symlink entry) is
// read bounded (wheel/member_reader.hpp: its image keeps what `keeps` declares, its
// fetch reads the member again from its windows) and, once read and its CRC and
// size checked, handed to use(member, image). `use` runs on the thread reading that
// member, so it may run at once for different members and must keep its results
// per member; it may throw. An ELF member costs in memory what its image keeps
// (plus the windows: at most 8 MiB), once per thread.
std::vector<MemberDigest> scan_members_streaming(const zip::Archive& archive, Keeps keeps, const ElfImageUse& use,
                                                 const MemberPick& read_it);

// The pass for writers, one member at a time in archive order: a member `wants_index`
// picks whose content starts with the ELF magic (its first bytes inflated to tell,
// not more) is read into a MemberImage (wheel/member_reader.hpp read_member): whole,
// or bounded when stream_into(member) gives it a sink (a writer's big ELF members),
// and handed to `on_indexed`, which may keep what it needs (plan a splice, or move
// the image out to keep it) before the next member is read; is_elf is set. Every
// other member is only hashed, streaming: a member that is not ELF is never held in
// memory, whatever its size (a wheel may carry gigabytes of data files).
using StreamSinkFor = std::function<StreamSink(const zip::Member&)>;
std::vector<MemberDigest> scan_members_indexed(const zip::Archive& archive, const MemberPick& wants_index,
                                               const ElfImageUse& on_indexed, const StreamSinkFor& stream_into);

}  // namespace wheelfix::wheel
