// Reading an ELF file that streams past once (a wheel member being inflated),
// keeping only the byte ranges the readers need: memory bounded by those ranges,
// not by the file. One implementation for `check` (a library's dynamic tables) and
// `inspect` (those plus what analysis/elf_report reads).
//
// Contract: StreamedElf(size, needs) holds a SparseStream (util/sparse_stream.hpp)
// with an ELF learner that wants, as the bytes arrive:
//   ELF header            -> the program header table, the section header table,
//                            and the 64 KiB before the section header table (.shstrtab)
//   program headers       -> PT_DYNAMIC, the first kFirstLoadWindow bytes of the first
//                            PT_LOAD (where linkers place .dynsym, .dynstr, .gnu.hash,
//                            .gnu.version*; PT_DYNAMIC, which says where they are,
//                            usually comes later); with Needs::inspection also PT_INTERP,
//                            PT_NOTE and PT_GNU_PROPERTY (elf/gnu_property.hpp)
//   PT_DYNAMIC            -> DT_STRTAB (DT_STRSZ bytes), and DT_SYMTAB, DT_GNU_HASH,
//                            DT_HASH, DT_VERSYM, DT_VERNEED, DT_VERDEF up to
//                            kMaxTableGuess bytes each (when they lie ahead: patchelf
//                            moves them to the end of the file)
//   section header table  -> .shstrtab and the dynamic symbol, string, hash and
//                            version sections; with Needs::inspection also SHT_NOTE ones
// Other learners ride along on stream() (cuda/fatbin_scan.hpp for inspect). Ranges
// learned after their bytes went by are not recovered by the stream itself; nothing
// is checked while streaming. Instead the readers run on the partial image with
// kept() as the present ranges (parse(), or any reader taking a `present`), which
// either gives exactly what the whole file gives or throws BytesNotKept.
// read_streamed() turns that into a result: it runs the reader on the first pass
// and, on BytesNotKept, fetches every range wanted so far but not kept plus the
// missing one (a Fetch: zip/seekable_member.hpp reads a range of a wheel member
// for a few MiB of inflate) into the same image, where the learners learn from
// them (SparseStream::fill) and may want more, and runs the reader again, up to
// kMaxRounds times; past that (a layout nothing here anticipates) it fetches the
// file whole into the image and runs the reader on it as a whole file, so the
// answer is always the whole file's (WhenLost::read_whole), or, for bytes nobody
// checks (wheel/member_reader.hpp's far view), gives up: the last BytesNotKept
// comes out (WhenLost::give_up). It is the one fetch-and-retry loop: every reader
// of a partial image goes through it (wheel/member_reader.hpp MemberImage::read).
// Offsets and sizes read from the stream are clamped to the file size, so hostile
// headers cannot make it keep more than the file. is_elf() says whether the file
// starts with the ELF magic (elf::is_elf); when not, nothing but the first 64 bytes
// is kept.
#pragma once

#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/util/sparse_stream.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace wheelfix::elf {

class StreamedElf {
public:
    enum class Needs { dynamic_linking, inspection };
    static constexpr std::uint64_t kFirstLoadWindow = 16ull << 20;
    static constexpr std::uint64_t kMaxTableGuess = 16ull << 20;
    static constexpr int kMaxRounds = 8;

    StreamedElf(std::uint64_t size, Needs needs, const ByteRanges& want_first = {});
    StreamedElf(const StreamedElf&) = delete;
    StreamedElf& operator=(const StreamedElf&) = delete;

    void consume(std::span<const std::uint8_t> chunk) { stream_.consume(chunk); }
    SparseStream& stream() { return stream_; }
    Needs needs() const { return needs_; }

    bool is_elf() const;
    std::uint64_t size() const { return stream_.size(); }
    std::span<const std::uint8_t> image() const { return stream_.image(); }
    const ByteRanges& kept() const { return stream_.kept(); }
    const ByteRanges& wanted() const { return stream_.wanted(); }
    std::uint64_t kept_bytes() const { return stream_.kept().total(); }
    // ElfFile::parse over the partial image (BytesNotKept when it lacks something).
    ElfFile parse() const { return ElfFile::parse(image(), &kept()); }
    // After the stream: bytes of the file fetched again (SparseStream::fill).
    void fill(std::uint64_t begin, std::span<const std::uint8_t> bytes) { stream_.fill(begin, bytes); }
    // What a reader found missing, with everything wanted so far, less what is kept.
    ByteRanges to_fetch(const BytesNotKept& missing) const;

private:
    class Learner;
    Needs needs_;
    SparseStream stream_;

};

// Calls the sink with the file's bytes in `ranges`, in order, with their offsets.
using FetchSink = std::function<void(std::span<const std::uint8_t>, std::uint64_t)>;
using Fetch = std::function<void(const ByteRanges& ranges, const FetchSink& sink)>;

enum class WhenLost { read_whole, give_up };

// `read(image, present)` -> result; see the contract above. `streamed` has been fed
// the bytes it was shown already; it grows by what is fetched.
template <class Read>
auto read_streamed(StreamedElf& streamed, const Fetch& fetch, Read&& read, WhenLost lost = WhenLost::read_whole)
    -> decltype(read(std::span<const std::uint8_t>(), static_cast<const ByteRanges*>(nullptr))) {
    auto fill = [&](std::span<const std::uint8_t> chunk, std::uint64_t at) { streamed.fill(at, chunk); };
    for (int round = 1;; ++round) {
        try {
            return read(streamed.image(), &streamed.kept());
        } catch (const BytesNotKept& missing) {
            const ByteRanges ranges = round == StreamedElf::kMaxRounds ? ByteRanges() : streamed.to_fetch(missing);
            if (ranges.empty() && lost == WhenLost::give_up) throw;
            if (ranges.empty()) break;
            fetch(ranges, fill);
        }
    }
    if (!streamed.kept().covers(0, streamed.size())) {
        ByteRanges everything;
        everything.add(0, streamed.size());
        fetch(everything, fill);
    }
    return read(streamed.image(), nullptr);
}

}  // namespace wheelfix::elf
