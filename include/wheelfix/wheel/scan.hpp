// One pass over a wheel's members: every byte is inflated once.
//
// Contract: scan_members() reads every file member of the archive exactly once,
// computing its size and SHA-256 while the bytes pass (so RECORD can be checked
// without a second read); the digests come in archive order. The members are read
// on the threads the thread budget spares, largest first (util/parallel_tasks.hpp;
// the same digests at any budget, and the error of the first bad member in archive
// order). Directory entries are left out; symlink entries are listed with their
// stored bytes hashed (a symlink's bytes are its target, as RECORD tools hash
// them). Errors reading a member (CRC, truncation) are InputErrors naming the
// archive and member.
//
// scan_sizes() is the pass for a writer that copies members as stored and does
// not prove their content (retag without --verify): only the members `hash_it`
// picks are inflated and hashed as above (concurrently, as verify's); every other file member gets its size
// from the central directory and no hash (MemberDigest::hashed is false), and not
// one of its bytes is read. verify_wheel() checks such a digest by size only.
//
// Every pass here (and scan_members_streaming) reports its progress as one
// ProgressTask, "reading <wheel>", over the inflated sizes the central directory
// declares (util/progress.hpp), advanced as the bytes pass.
#pragma once

#include "wheelfix/util/progress.hpp"
#include "wheelfix/zip/archive.hpp"
#include "wheelfix/wheel/member_reader.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace wheelfix::wheel {

struct MemberDigest {
    const zip::Member* member = nullptr;
    std::uint64_t size = 0;
    std::array<std::uint8_t, 32> sha256{};
    bool hashed = true;  // false: size from the central directory, sha256 unknown (scan_sizes)
    bool is_elf = false;

    std::string record_hash() const;  // "sha256=<urlsafe b64 nopad>"
};

// The progress task of one pass over `archive`: "reading <file name>", its total
// the inflated sizes of the central directory (an estimate: it is untrusted).
ProgressTask reading_progress(const zip::Archive& archive);

// read(i) for every member of `sizes`: on the threads the budget spares, largest
// first (util/parallel_tasks.hpp run_tasks), unless one member outweighs all the
// others four times over (a wheel of one big library): then one at a time, in
// order, so that the big one's own helper thread (its inflate's sink pipeline or
// hash follower) gets the spare CPU. Read concurrently instead, that helper is
// claimed only if the thread reading the small members has already ended: whether
// the big member is hashed beside its inflate or after it would depend on a race.
void read_members(const std::vector<std::uint64_t>& sizes, const std::function<void(std::size_t)>& read);

std::vector<MemberDigest> scan_members(const zip::Archive& archive);
std::vector<MemberDigest> scan_sizes(const zip::Archive& archive, const std::function<bool(const zip::Member&)>& hash_it);

// The same single pass for writers: a member for which `wants_index` is true and
// whose content starts with the ELF magic (its first bytes inflated to tell, not
// more) is read into a MemberImage (wheel/member_reader.hpp read_member): whole, or
// bounded when stream_into(member) gives it a sink (a writer's big ELF members), and
// handed to `on_indexed`, which may keep what it needs (plan a splice, or move the
// image out to keep it) before the next member is read; is_elf is set. Every other
// member is only hashed, streaming: a member that is not ELF is never held in
// memory, whatever its size (a wheel may carry gigabytes of data files).
using IndexedSink = std::function<void(const zip::Member&, MemberImage&)>;
using StreamSinkFor = std::function<StreamSink(const zip::Member&)>;
std::vector<MemberDigest> scan_members_indexed(const zip::Archive& archive,
                                               const std::function<bool(const zip::Member&)>& wants_index,
                                               const IndexedSink& on_indexed, const StreamSinkFor& stream_into);

}  // namespace wheelfix::wheel
