// One pass over a wheel's members for readers that keep only parts of the ELF
// members (inspect): wheel/scan.hpp's pass, with ELF members streamed instead of
// collected whole.
//
// Contract: scan_members_streaming() reads every file member the caller picks exactly
// once, computing its size and SHA-256 while the bytes pass
// (MemberDigest, as scan_members() does, so RECORD can be checked from it). For a
// member whose first bytes are the ELF magic (not a symlink entry), `open(member)`
// is called at its first chunk and returns an ElfStream: `consume` sees every chunk
// of the member, the first included, as it passes; `finish` runs once the member
// has been read and its CRC and size checked, and is handed the member as a
// zip::SeekableMember, to read ranges of it again for a few MiB of inflate each.
// Members are read concurrently, on as many threads as the thread budget spares
// (util/parallel_tasks.hpp: largest first; alone, in archive order), unless one
// dominates (wheel/scan.hpp one_dominates: then one at a time, in archive order): `open`, and
// each stream's `consume` and `finish`, run on the thread reading that member, so
// they may run at once for different members and must keep their results per
// member. The digests are returned in archive order, the same whatever the budget.
// So what an ELF member costs in memory is what its ElfStream keeps (plus the seek
// index: at most 8 MiB), once per thread. Errors reading a member are InputErrors
// naming the archive and member; `finish` may throw too; when several members fail,
// the first in archive order is the one thrown.
#pragma once

#include "wheelfix/wheel/scan.hpp"
#include "wheelfix/zip/archive.hpp"
#include "wheelfix/zip/seekable_member.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace wheelfix::wheel {

struct ElfStream {
    std::function<void(std::span<const std::uint8_t>)> consume;
    std::function<void(const zip::SeekableMember&)> finish;
};
using ElfStreamOpener = std::function<ElfStream(const zip::Member&)>;

// Only the members `read_it` picks are read: not a byte of the others, and they get
// no digest (for a caller that knows them already; pick every one to read all).
std::vector<MemberDigest> scan_members_streaming(const zip::Archive& archive, const ElfStreamOpener& open,
                                                 const std::function<bool(const zip::Member&)>& read_it);

}  // namespace wheelfix::wheel
