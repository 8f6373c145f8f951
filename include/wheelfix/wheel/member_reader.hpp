// How a wheel member's bytes are obtained, and what is known of them: one image
// type (MemberImage) for every way wheelfix reads an ELF member, and the readers
// that yield it. The pass over a whole wheel (its order, threads, progress and
// digests) is wheel/scan.hpp's; how it reads one member, and what that gives, is here.
//
// The ways (ReadWay), each with its cost, its memory and what its view is trusted for:
// - whole: inflated whole, CRC-checked (the plan engine's members under
//   repair::kBoundedFrom, and stored ones). Cost: one inflate; memory: the member.
//   Every byte is there: read() runs once. Trusted.
// - bounded: streamed once, CRC-checked, a window recorded every few MiB
//   (zip/seekable_member.hpp) while an elf::StreamedElf keeps what `Keeps` declares;
//   what the readers still lack is inflated again from the nearest window. Cost: one
//   inflate, plus a few MiB per range fetched; memory: the kept ranges and the windows
//   (8 MiB at most). Trusted. The plan engine's big members (repair/plan.hpp step 2),
//   inspect's members, an edited member's new content (edited_fetch).
// - loader_view (read_loader_view): streamed from the start into a StreamedElf keeping
//   what the loader reads (Keeps::loader), so memory does not grow with the member.
//   One of kStopEarlyFrom bytes or more is inflated only until the loader's view
//   (elf::ElfFile::parse_as_loader) reads from what is kept: tried at the first MiB,
//   then each time the stream passes the end of what the last try found missing; the
//   CRC-32 of the unread rest is not checked. Tables that come last (nvcc output,
//   patchelf) kTailFrom bytes or more ahead and within zip::FarReader::kRing of the
//   end are read from the member's end (zip::FarReader::open_confirmed), once a member
//   and at most `tail_reads_left` times over the caller's members; what lay behind
//   the stream is read on to the end and fetched again. Smaller members are read whole
//   (CRC-checked), what the parse still lacks fetched from the windows. parse() gives
//   the loader's view when the read stopped early, else the ElfFile over the kept
//   image; read() runs once. Trusted for what the loader reads (`check`,
//   analysis/torch_check.hpp, and repair's foresight of small members).
// - far_view (read_far_view): the first kFarViewHead inflated bytes (where linkers put
//   the dynamic tables) into a StreamedElf keeping what the loader reads, and the
//   ranges wanted past them through zip::FarReader: PT_DYNAMIC's with a locator of its
//   dynamic array (from the program headers), so that the decode stops there; others
//   (the section headers, at the end) decoding to the end. Cost: the head's inflate
//   plus FarReader's (a few percent of a full inflate on real libraries); memory: the
//   head, the kept ranges and a ring per far read (zip::FarReader::kRing at most).
//   Never trusted: nothing is CRC-checked, so a caller uses it only where a wrong
//   answer costs a second read, never a wrong byte (repair's speculation and
//   foresight of big members, whose answers the real pass confirms).
//
// Contract of MemberImage::read(read): read(image, present) runs on what is known
// (present null: every byte is there); on BytesNotKept, the range missing and all
// the image's learners want and it lacks are fetched into it and read runs again
// (elf::read_streamed, the one fetch-and-retry loop), up to
// elf::StreamedElf::kMaxRounds times; past that (a layout nothing here
// anticipates) a trusted image fetches the member whole into itself, so the answer
// is the whole file's (memory is then the member's), and a far view gives up:
// the last BytesNotKept comes out. An image without a fetch (a loader view) runs
// read once.
//
// read_loader_view(archive, member, wheel_label, tail_reads_left): a member that is
// not ELF gives an empty image (is_elf() false); one that is ELF but invalid is an
// InputError "<wheel_label>: <member>: invalid ELF: ..."; errors of the member's
// bytes are InputErrors naming the archive and member.
// read_loader_views(archive, members, use) reads each of `members` so, on the
// threads the thread budget spares, largest first (util/parallel_tasks.hpp), at
// most kMaxTailReads far reads over them all, and hands each view to use(i, view)
// on the thread that read it; when several fail, the error of the first in the
// list is the one thrown.
// read_far_view(archive, member, use): use(elf) runs on each parse of the far view,
// until one reads nothing missing. False, never an error, when the member is not a
// deflated ELF file, a wanted range lies where neither read reaches, or the ELF, an
// edit use() plans, the member's bytes or the inflate fail on the partial image (a
// pass that reads every byte reports them).
#pragma once

#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/elf/streamed_elf.hpp"
#include "wheelfix/util/byte_edit.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/zip/archive.hpp"
#include "wheelfix/zip/inflate_index.hpp"
#include "wheelfix/zip/seekable_member.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace wheelfix::wheel {

enum class ReadWay { whole, bounded, loader_view, far_view };

// What a streamed image keeps: the loader's view (elf::StreamedElf's
// Needs::dynamic_linking: headers, the dynamic segment and its tables), or the
// analysis' (Needs::inspection, and cuda/fatbin_scan.hpp's fatbin headers: what
// analysis::analyze_elf reads), so that a reader finds it kept instead of fetching
// the member again range by range.
enum class Keeps { loader, analysis };
std::unique_ptr<elf::StreamedElf> keeping(std::uint64_t size, Keeps keeps);

// Library members from this size on are read only as far as the loader's view needs.
inline constexpr std::uint64_t kStopEarlyFrom = std::uint64_t(16) << 20;
// The loader view's read from the member's end (above): for what lies this far ahead.
inline constexpr std::uint64_t kTailFrom = std::uint64_t(64) << 20;
inline constexpr int kMaxTailReads = 16;  // a wheel's members together
// A far view's head: the bytes read from the start before any far read.
inline constexpr std::uint64_t kFarViewHead = std::uint64_t(16) << 20;

class MemberImage {
public:
    // Nothing read: not ELF.
    MemberImage() = default;
    // whole: every byte in `inflated.data` (kept with its index, for a splice).
    explicit MemberImage(zip::InflatedMember&& inflated);
    // bounded, from the plan engine's pass: `index` came from inflate_indexed with
    // InflateOptions::window_every (its windows move into the image's reader; its
    // blocks, size and CRC-32 stay, for a splice), `kept` took every byte.
    MemberImage(const zip::Archive& archive, const zip::Member& member, zip::InflatedMember&& index,
                std::shared_ptr<elf::StreamedElf> kept);
    // bounded, read through `windows` (which must outlive this image).
    MemberImage(std::shared_ptr<elf::StreamedElf> kept, const zip::SeekableMember& windows);
    // Any streamed way: `kept` took the bytes it was shown, `fetch` reads the others.
    MemberImage(ReadWay way, std::shared_ptr<elf::StreamedElf> kept, elf::Fetch fetch);

    ReadWay way() const { return way_; }
    bool trusted() const { return way_ != ReadWay::far_view; }
    bool is_elf() const;
    std::uint64_t size() const;
    // The image (the whole member's bytes, or a partial image of its size) and the
    // ranges of it that hold the member's bytes (null: all of them).
    std::span<const std::uint8_t> image() const;
    const ByteRanges* present() const;
    // The ElfFile over what is known (the loader's view of a loader view that
    // stopped early); BytesNotKept when it lacks something.
    elf::ElfFile parse() const;
    // The member's bytes in `ranges`, held or fetched (not into the image).
    void fetch(const ByteRanges& ranges, const elf::FetchSink& sink) const;
    // The contract above.
    template <class Read>
    auto read(Read&& read) -> decltype(read(std::span<const std::uint8_t>(), static_cast<const ByteRanges*>(nullptr))) {
        if (!kept_ || !fetch_) return read(image(), present());
        return elf::read_streamed(*kept_, fetch_, std::forward<Read>(read),
                                  trusted() ? elf::WhenLost::read_whole : elf::WhenLost::give_up);
    }

    // The plan engine's index of a whole or bounded member (for its splice), and a
    // bounded one's windows (null otherwise).
    const zip::InflatedMember& index() const { return index_; }
    const zip::SeekableMember* windows() const { return windows_.get(); }

private:
    friend MemberImage read_loader_view(const zip::Archive&, const zip::Member&, const std::string&, std::atomic<int>&);

    ReadWay way_ = ReadWay::whole;
    zip::InflatedMember index_;
    std::shared_ptr<elf::StreamedElf> kept_;
    std::unique_ptr<zip::SeekableMember> windows_;
    elf::Fetch fetch_;
    bool stopped_early_ = false;
};

// The reader of an edited member's new content (the fetch of its image, a bounded
// one): each range's bytes from `original` (held or fetched) or from the edit that
// put them there, delivered in order with their new offsets. `original` and
// `edits` (valid for it: util/byte_edit.hpp) must outlive the fetch.
elf::Fetch edited_fetch(const MemberImage& original, const ByteEdits& edits);

// How the plan engine's pass reads a member it keeps (wheel/scan.hpp
// scan_members_indexed): whole without a `sink` (zip::inflate_indexed keeping the
// bytes, their SHA-256 computed beside the inflate), else bounded: inflated once by
// the default inflater without keeping its bytes, each chunk taken by the image (what
// `keeps` declares kept) and then handed to `sink`, in order, its SHA-256 computed as
// they pass and a window recorded every zip::SeekableMember::spacing(size) bytes (the
// image's fetch). `may_lag`, `hashing` and `start` are zip::InflateOptions' sink_may_lag,
// sink_hashing and sink_start. The image's index() has the size, CRC-32 and SHA-256.
struct StreamSink {
    zip::InflateSink sink;
    Keeps keeps = Keeps::loader;
    std::uint64_t may_lag = 0;
    std::function<void(std::span<const std::uint8_t>, Sha256&)> hashing = {};
    std::function<void()> start = {};
};
MemberImage read_member(const zip::Archive& archive, const zip::Member& member, const StreamSink& streamed);

MemberImage read_loader_view(const zip::Archive& archive, const zip::Member& member, const std::string& wheel_label,
                             std::atomic<int>& tail_reads_left);

void read_loader_views(const zip::Archive& archive, const std::vector<const zip::Member*>& members,
                       const std::function<void(std::size_t index, MemberImage& view)>& use);

using FarViewUse = std::function<void(const elf::ElfFile& elf)>;
bool read_far_view(const zip::Archive& archive, const zip::Member& member, const FarViewUse& use);

}  // namespace wheelfix::wheel
