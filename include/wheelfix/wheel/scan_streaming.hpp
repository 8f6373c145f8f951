// One pass over a wheel's members for readers that keep only parts of the ELF
// members (inspect): wheel/scan.hpp's pass, with ELF members streamed instead of
// collected whole.
//
// Contract: scan_members_streaming() reads every file member the caller picks exactly
// once, computing its size and SHA-256 while the bytes pass
// (MemberDigest, as scan_members() does, so RECORD can be checked from it). A
// member whose first bytes are the ELF magic (not a symlink entry) is read bounded
// (wheel/member_reader.hpp: its image keeps what `keeps` declares, its fetch reads
// the member again from its windows) and, once read and its CRC and size checked,
// handed to use(member, image). Members are read concurrently, on as many threads
// as the thread budget spares (util/parallel_tasks.hpp: largest first; alone, in
// archive order), unless one dominates (wheel/scan.hpp read_members: then one at a
// time, in archive order): `use` runs on the thread reading that member, so it may
// run at once for different members and must keep its results per member. The
// digests are returned in archive order, the same whatever the budget. So what an
// ELF member costs in memory is what its image keeps (plus the windows: at most
// 8 MiB), once per thread. Errors reading a member are InputErrors naming the
// archive and member; `use` may throw too; when several members fail, the first in
// archive order is the one thrown.
#pragma once

#include "wheelfix/wheel/member_reader.hpp"
#include "wheelfix/wheel/scan.hpp"
#include "wheelfix/zip/archive.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace wheelfix::wheel {

using ElfImageUse = std::function<void(const zip::Member&, MemberImage&)>;

// Only the members `read_it` picks are read: not a byte of the others, and they get
// no digest (for a caller that knows them already; pick every one to read all).
std::vector<MemberDigest> scan_members_streaming(const zip::Archive& archive, Keeps keeps, const ElfImageUse& use,
                                                 const std::function<bool(const zip::Member&)>& read_it);

}  // namespace wheelfix::wheel
