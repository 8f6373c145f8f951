// A wheel's library members as the dynamic loader sees them, read only as far as
// that needs: what `check` reads (analysis/torch_check.hpp), and what repair reads
// ahead of its one pass to foresee its shim (repair/foresight.hpp).
//
// Contract: read_loader_view(archive, member, wheel_label, tail_reads_left) streams
// the member into an elf::StreamedElf keeping what the loader reads
// (Needs::dynamic_linking: program headers, the dynamic segment and its tables), so
// memory does not grow with the member:
// - a member of kStopEarlyFrom bytes or more is inflated only until the loader's
//   view of it (elf::ElfFile::parse_as_loader) reads from what is kept: tried at
//   the first MiB, then each time the stream passes the end of what the last try
//   found missing; then inflating stops, so the CRC-32 of the unread rest is not
//   checked. When those tables come last (nvcc output, where .dynamic follows the
//   device code, or after patchelf) and lie kTailFrom bytes or more ahead and within
//   FarReader::kRing of the end, they are read from the member's end
//   (zip::FarReader::open_confirmed), once a member and at most
//   `tail_reads_left` times over the caller's members, and the stream stops there
//   too; what lay behind the stream is read on to the end and fetched again;
// - smaller members are read whole (CRC-checked), and what the parse still lacks is
//   fetched again from the member's windows (elf::read_streamed).
// The view's parse() gives the ElfFile over the kept image (the loader's view when
// the read stopped early); `bytes` is null when the member is not ELF. A member
// that is ELF but invalid is an InputError "<wheel_label>: <member>: invalid ELF: ...";
// errors of the member's bytes are InputErrors naming the archive and member.
//
// read_loader_views(archive, members, use) reads each of `members` so, on the
// threads the thread budget spares, largest first (util/parallel_tasks.hpp), and
// hands each view to use(i, view) on the thread that read it; when several fail,
// the error of the first in the list is the one thrown. library_members(archive)
// lists what check reads: file members named like shared libraries, in archive order.
#pragma once

#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/elf/streamed_elf.hpp"
#include "wheelfix/zip/archive.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace wheelfix::analysis {

// Library members from this size on are read only as far as the loader's view needs.
inline constexpr std::uint64_t kStopEarlyFrom = std::uint64_t(16) << 20;
// What the loader's view still lacks this far ahead of the stream or more (PT_DYNAMIC
// and its tables behind nvcc's device code) is read from the member's end instead
// (zip/far_read.hpp), for a few MiB of inflate; the stream goes on from where it
// was only if something before that end is still missing.
inline constexpr std::uint64_t kTailFrom = std::uint64_t(64) << 20;
inline constexpr int kMaxTailReads = 16;  // a wheel's members together

struct LoaderView {
    std::unique_ptr<elf::StreamedElf> bytes;  // null: not ELF
    bool stopped_early = false;               // parsed as the loader sees it (no section headers)

    elf::ElfFile parse() const;
};

LoaderView read_loader_view(const zip::Archive& archive, const zip::Member& member, const std::string& wheel_label,
                            std::atomic<int>& tail_reads_left);

std::vector<const zip::Member*> library_members(const zip::Archive& archive);

void read_loader_views(const zip::Archive& archive, const std::vector<const zip::Member*>& members,
                       const std::function<void(std::size_t index, LoaderView& view)>& use);

}  // namespace wheelfix::analysis
