// The partial views of one member, and how each is read: the one place that reads a
// member's bytes for a view without the whole pass over the wheel (that pass, which
// reads each member whole or as a bounded stream, is wheel/scan.hpp's, driven by the
// plan engine, repair/plan.hpp). Two views:
// - the loader's view (read_loader_view): streamed from the start, stopping once the
//   loader's view parses, the member's end read through zip::FarReader's confirmed
//   entry when the tables lie there; checked where it matters (what `check` reads,
//   analysis/torch_check.hpp, and repair's foresight of small members);
// - the far view (read_far_view): the member's head and the ranges its readers want
//   past it through zip::FarReader's unconfirmed entries, for a fraction of a full
//   inflate; never trusted (repair's speculation and foresight of big members, whose
//   answers the real pass confirms).
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
// read_far_view(archive, member, use) reads the deflated member's first kFarViewHead
// inflated bytes (where linkers put the dynamic tables: elf/streamed_elf.hpp's
// first-load window) into a StreamedElf keeping what the loader reads, and the ranges
// its readers then want past them through zip::FarReader (which enters the deflate
// stream near them without inflating what comes before: PT_DYNAMIC's range with a
// locator that recognizes its dynamic array, from the program headers' PT_DYNAMIC
// entry, so that the decode stops there; others, the section headers at the end,
// decoding to the end), as many rounds as read_streamed would take: use(elf) runs on
// each parse of that partial image, until one reads nothing missing. False, never an
// error, when the member is not a deflated ELF file, a wanted range lies where
// neither read reaches, or the ELF, an edit use() plans, the member's bytes or the
// inflate fail on the partial image (a pass that reads every byte reports them).
// Nothing read so is CRC-checked: a caller uses it only where a wrong answer costs a
// second read, never a wrong byte. Cost: one inflate of the head, plus FarReader's (a
// few percent of a full inflate on real libraries); memory: the head, the kept
// ranges and a ring per far read (zip::FarReader::kRing at most).
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
// A far view's head: the bytes read from the start before any far read.
inline constexpr std::uint64_t kFarViewHead = std::uint64_t(16) << 20;

struct LoaderView {
    std::unique_ptr<elf::StreamedElf> bytes;  // null: not ELF
    bool stopped_early = false;               // parsed as the loader sees it (no section headers)

    elf::ElfFile parse() const;
};

LoaderView read_loader_view(const zip::Archive& archive, const zip::Member& member, const std::string& wheel_label,
                            std::atomic<int>& tail_reads_left);

using FarViewUse = std::function<void(const elf::ElfFile& elf)>;
bool read_far_view(const zip::Archive& archive, const zip::Member& member, const FarViewUse& use);

std::vector<const zip::Member*> library_members(const zip::Archive& archive);

void read_loader_views(const zip::Archive& archive, const std::vector<const zip::Member*>& members,
                       const std::function<void(std::size_t index, LoaderView& view)>& use);

}  // namespace wheelfix::analysis
