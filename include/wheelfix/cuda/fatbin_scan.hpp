// Keeping the bytes cuda::parse_fatbin_section reads while an ELF file streams past,
// before its section headers (at the end of the file) say where .nv_fatbin is.
//
// Contract: FatbinScanner is a SparseStream learner (util/sparse_stream.hpp). It
// spots every fatbin container magic (0xBA55ED50, at any offset) in the raw chunks
// and from each one walks the container the way the parser does, wanting only what
// the parser reads: the 16-byte container header, the first 64 bytes of each entry
// header (payloads are skipped), and the zero padding between entries and between
// containers (vouched zero, so it costs no memory), plus the zero run right before
// the magic (a section may begin with padding). Memory is therefore proportional to
// the number of entries, not to the size of the section. Walks that find something
// the parser would reject stop there, having kept what the parser needs to say so.
// Once the section headers are known, parse_fatbin_section(section image, kept
// ranges, section offset) gives the whole-section answer or throws BytesNotKept
// (a layout this scan did not anticipate: the caller reads the file again). A
// hostile stream full of magics is capped (kMaxContainers walked in all,
// kMaxActiveWalks at a time): past that, nothing more is walked and the parser's
// BytesNotKept says so.
#pragma once

#include "wheelfix/util/sparse_stream.hpp"

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace wheelfix::cuda {

class FatbinScanner : public SparseStream::Learner {
public:
    static constexpr std::uint64_t kMaxContainers = 1 << 18;
    static constexpr std::size_t kMaxActiveWalks = 4096;

    void see(SparseStream& stream, std::span<const std::uint8_t> chunk, std::uint64_t at) override;
    void learn(SparseStream& stream) override;

private:
    enum class Step { container_header, entries, padding_after };
    struct Walk {
        Step step = Step::container_header;
        std::uint64_t at = 0;         // the container or entry header the parser reads next
        std::uint64_t scanned = 0;    // zeros verified from `at` up to here
        std::uint64_t window = 64;    // how far to look ahead for the end of a zero run
        std::uint64_t payload_end = 0;
    };
    enum class Progress { advanced, waiting, finished };
    // Wants [begin, end): advanced when it is kept, waiting while it may come, finished when it never can.
    static Progress need(SparseStream& stream, std::uint64_t begin, std::uint64_t end);

    struct Joined;
    void found_magic(SparseStream& stream, std::uint64_t offset, std::uint64_t zero_run_start, std::uint64_t chunk_at);
    Progress advance(SparseStream& stream, Walk& walk);
    Progress read_container_header(SparseStream& stream, Walk& walk);
    Progress read_entry_header(SparseStream& stream, Walk& walk);
    Progress skip_padding(SparseStream& stream, Walk& walk, std::uint64_t end);

    std::vector<Walk> walks_;
    std::uint64_t containers_found_ = 0;
    std::array<std::uint8_t, 3> tail_{};  // the last bytes of earlier chunks
    std::size_t tail_size_ = 0;
    std::uint64_t tail_run_start_ = 0;    // where the zero run ending at the tail starts
};

}  // namespace wheelfix::cuda
