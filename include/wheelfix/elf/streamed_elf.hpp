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
//                            usually comes later); with Needs::inspection also PT_INTERP
//   PT_DYNAMIC            -> DT_STRTAB (DT_STRSZ bytes), and DT_SYMTAB, DT_GNU_HASH,
//                            DT_HASH, DT_VERSYM, DT_VERNEED, DT_VERDEF up to
//                            kMaxTableGuess bytes each (when they lie ahead: patchelf
//                            moves them to the end of the file)
//   section header table  -> .shstrtab and the dynamic symbol, string, hash and
//                            version sections
// Other learners ride along on stream() (cuda/fatbin_scan.hpp for inspect). Ranges
// learned after their bytes went by are not recovered; nothing is checked while
// streaming. Instead the readers run on the partial image with kept() as the present
// ranges (parse(), or any reader taking a `present`), which either gives exactly
// what the whole file gives or throws BytesNotKept. read_streamed() turns that into
// a result: it runs the reader on the first pass and, on BytesNotKept, streams the
// file again with every range wanted so far plus the missing one wanted from the
// first byte, up to kMaxPasses readings; past that (a layout nothing here
// anticipates) it reads the file whole, so the answer is always the whole file's.
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
    static constexpr int kMaxPasses = 3;

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

private:
    class Learner;
    Needs needs_;
    SparseStream stream_;

};

// Feeds the whole file, in order, to the sink it is given (a second reading).
using Restream = std::function<void(const std::function<void(std::span<const std::uint8_t>)>&)>;
// Adds the learners a reading needs besides the ELF one (called for every later reading).
using PassSetup = std::function<void(StreamedElf&)>;

// `read(image, present)` -> result; see the contract above. `first` has been fed
// the whole file already.
template <class Read>
auto read_streamed(StreamedElf& first, const Restream& restream, const PassSetup& setup, Read&& read)
    -> decltype(read(std::span<const std::uint8_t>(), static_cast<const ByteRanges*>(nullptr))) {
    std::unique_ptr<StreamedElf> later;
    StreamedElf* pass = &first;
    for (int reading = 1;; ++reading) {
        try {
            return read(pass->image(), &pass->kept());
        } catch (const BytesNotKept& missing) {
            if (reading == StreamedElf::kMaxPasses) break;
            ByteRanges wanted = pass->wanted();
            wanted.add(missing.begin(), missing.end());
            auto next = std::make_unique<StreamedElf>(first.size(), first.needs(), wanted);
            if (setup) setup(*next);
            restream([&](std::span<const std::uint8_t> chunk) { next->consume(chunk); });
            later = std::move(next);
            pass = later.get();
        }
    }
    std::vector<std::uint8_t> whole;
    whole.reserve(static_cast<std::size_t>(first.size()));
    restream([&](std::span<const std::uint8_t> chunk) { whole.insert(whole.end(), chunk.begin(), chunk.end()); });
    return read(std::span<const std::uint8_t>(whole), nullptr);
}

}  // namespace wheelfix::elf
