// StreamedElf: learn which byte ranges of an ELF file the readers need while the
// file streams past once, and keep only those (streamed_elf.hpp has the contract).
// The reads here touch only bytes already kept; every offset and size taken from
// the stream is clamped to the file before it becomes a range.
#include "wheelfix/elf/streamed_elf.hpp"

#include "elf_parser.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

namespace wheelfix::elf {

namespace {

constexpr std::uint64_t kShstrtabWindow = 64 * 1024;
// Notes are a few dozen bytes; a larger area claimed by a header is fetched on demand.
constexpr std::uint64_t kNoteWindow = 64 * 1024;
// No table the parser accepts is larger (kMaxDynamicSymbols 64-byte ELF64 symbols
// is the largest): a section header claiming more keeps no more than this.
constexpr std::uint64_t kMaxKeptTable = kMaxDynamicSymbols * 64;

std::uint64_t clamp_add(std::uint64_t a, std::uint64_t b) {
    return b > std::numeric_limits<std::uint64_t>::max() - a ? std::numeric_limits<std::uint64_t>::max() : a + b;
}

std::uint64_t clamp_mul(std::uint64_t a, std::uint64_t b) {
    if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return std::numeric_limits<std::uint64_t>::max();
    return a * b;
}

bool is_dynamic_table_section(std::uint32_t type) {
    return type == SHT_DYNSYM || type == SHT_DYNAMIC || type == SHT_GNU_versym || type == SHT_GNU_verneed ||
           type == SHT_GNU_verdef || type == SHT_GNU_HASH || type == SHT_HASH;
}

}  // namespace

// The ELF rules of the contract, as a learner over the stream's kept bytes.
class StreamedElf::Learner : public SparseStream::Learner {
public:
    explicit Learner(StreamedElf::Needs needs) : needs_(needs) {}

    void learn(SparseStream& stream) override {
        stream_ = &stream;
        if (stopped_) return;
        try {
            if (!header_done_) learn_header();
            if (header_done_ && !program_headers_done_) learn_program_headers();
            if (program_headers_done_ && has_dynamic_ && !dynamic_done_) learn_dynamic();
            if (header_done_ && !sections_done_) learn_sections();
        } catch (const ElfError&) {
            stopped_ = true;  // a table past the end of the file: the parser refuses it
        }
    }

private:
    struct Load {
        std::uint64_t offset, vaddr, filesz;
    };

    bool kept(std::uint64_t begin, std::uint64_t end) const {
        return stream_->has(std::min(begin, size()), std::min(end, size()));
    }
    std::uint64_t size() const { return stream_->size(); }
    void want(std::uint64_t begin, std::uint64_t length) { stream_->want(begin, length); }

    // The image read as the parser reads it, with the parser's record layouts (only
    // kept bytes are read; a read past the end of the file is an ElfError).
    ElfBytes in() const {
        return ElfBytes(stream_->image(), is64_ ? Class::elf64 : Class::elf32, little_ ? Endian::little : Endian::big);
    }

    void learn_header() {
        if (!kept(0, EI_NIDENT)) return;
        const auto image = stream_->image();
        if (size() < EI_NIDENT || std::memcmp(image.data(), ELFMAG, SELFMAG) != 0) {
            stopped_ = true;
            return;
        }
        is64_ = image[EI_CLASS] == ELFCLASS64;
        little_ = image[EI_DATA] != ELFDATA2MSB;
        if (!kept(0, is64_ ? 64 : 52)) return;
        const HeaderTables tables = read_header_tables(in());
        phoff_ = tables.program_headers.offset;
        phentsize_ = tables.program_headers.entsize;
        phnum_ = tables.program_headers.count;
        shoff_ = tables.section_headers.offset;
        shentsize_ = tables.section_headers.entsize;
        shnum_ = tables.section_headers.count;
        shstrndx_ = tables.shstrndx;
        want(phoff_, clamp_mul(phnum_, phentsize_));
        if (shoff_ != 0) {
            want(shoff_, shnum_ == 0 ? shentsize_ : clamp_mul(shnum_, shentsize_));
            const std::uint64_t window = std::min(shoff_, kShstrtabWindow);
            want(shoff_ - window, window);
        }
        header_done_ = true;
    }

    void learn_program_headers() {
        if (!kept(phoff_, clamp_add(phoff_, clamp_mul(phnum_, phentsize_)))) return;
        program_headers_done_ = true;
        if (phentsize_ < (is64_ ? 56u : 32u)) return;  // the ELF reader reports it
        for (std::uint64_t i = 0; i < phnum_; ++i) {
            const ProgramHeader ph = read_program_header(in(), phoff_ + i * phentsize_);
            if (ph.type == PT_LOAD) loads_.push_back({ph.offset, ph.vaddr, ph.filesz});
            const bool inspecting = needs_ == StreamedElf::Needs::inspection;
            if (inspecting && ph.type == PT_INTERP) want(ph.offset, ph.filesz);
            if (inspecting && (ph.type == PT_NOTE || ph.type == PT_GNU_PROPERTY))
                want(ph.offset, std::min(ph.filesz, kNoteWindow));
            if (ph.type == PT_DYNAMIC && !has_dynamic_) {
                has_dynamic_ = true;
                dynamic_offset_ = ph.offset;
                dynamic_size_ = ph.filesz;
            }
        }
        if (!loads_.empty()) {
            const Load& first = *std::min_element(loads_.begin(), loads_.end(),
                                                  [](const Load& a, const Load& b) { return a.offset < b.offset; });
            want(first.offset, std::min(first.filesz, StreamedElf::kFirstLoadWindow));
        }
        if (has_dynamic_) want(dynamic_offset_, dynamic_size_);
    }

    std::optional<std::uint64_t> file_offset(std::uint64_t vaddr, std::uint64_t& segment_end) const {
        for (const Load& load : loads_) {
            if (vaddr < load.vaddr || vaddr - load.vaddr >= load.filesz) continue;
            segment_end = clamp_add(load.offset, load.filesz);
            return load.offset + (vaddr - load.vaddr);
        }
        return std::nullopt;
    }

    void learn_dynamic() {
        if (!kept(dynamic_offset_, clamp_add(dynamic_offset_, dynamic_size_))) return;
        dynamic_done_ = true;
        const std::uint64_t entry = is64_ ? 16 : 8;
        std::optional<std::uint64_t> strtab, strsz;
        std::vector<std::uint64_t> tables;
        const std::uint64_t end = std::min(clamp_add(dynamic_offset_, dynamic_size_), size());
        const ElfBytes bytes = in();
        for (std::uint64_t at = dynamic_offset_; at < end && entry <= end - at; at += entry) {
            const std::uint64_t tag = bytes.word(at, "d_tag");
            const std::uint64_t value = bytes.word(at + entry / 2, "d_val");
            if (tag == DT_NULL) break;
            if (tag == DT_STRTAB) strtab = value;
            else if (tag == DT_STRSZ) strsz = value;
            else if (tag == DT_SYMTAB || tag == DT_GNU_HASH || tag == DT_HASH || tag == DT_VERSYM ||
                     tag == DT_VERNEED || tag == DT_VERDEF)
                tables.push_back(value);
        }
        std::uint64_t segment_end = 0;
        if (strtab && strsz && *strsz <= kMaxDynamicStrings)  // the parser refuses a larger one unread
            if (auto offset = file_offset(*strtab, segment_end)) want(*offset, *strsz);
        for (std::uint64_t address : tables)
            if (auto offset = file_offset(address, segment_end))
                want(*offset, std::min(segment_end - *offset, StreamedElf::kMaxTableGuess));
    }

    std::uint64_t headers_the_file_holds() const {
        return shoff_ < size() ? (size() - shoff_) / shentsize_ : 0;
    }

    void learn_sections() {
        if (shoff_ == 0 || shentsize_ < (is64_ ? 64u : 40u)) {
            sections_done_ = true;
            return;
        }
        if (shnum_ == 0) {  // extended numbering: the count is section 0's sh_size
            if (!kept(shoff_, clamp_add(shoff_, shentsize_))) return;
            // A count the file cannot hold is cut to the headers it holds: the loop
            // below runs over bytes, never over a number read from the file (the ELF
            // reader reports the table past the end).
            shnum_ = std::min(read_section_header(in(), shoff_).size, headers_the_file_holds());
            if (shnum_ == 0) {
                sections_done_ = true;
                return;
            }
            want(shoff_, clamp_mul(shnum_, shentsize_));
        }
        if (!kept(shoff_, clamp_add(shoff_, clamp_mul(shnum_, shentsize_)))) return;
        sections_done_ = true;
        for (std::uint64_t i = 0; i < shnum_; ++i) {
            const SectionHeader section = read_section_header(in(), shoff_ + i * shentsize_);
            if (i == shstrndx_) want(section.offset, std::min(section.size, kMaxDynamicStrings));
            if (section.type == SHT_NOTE && needs_ == StreamedElf::Needs::inspection)
                want(section.offset, std::min(section.size, kNoteWindow));
            if (!is_dynamic_table_section(section.type)) continue;
            want(section.offset, std::min(section.size, kMaxKeptTable));
            if (section.link != 0 && section.link < shnum_) {
                const SectionHeader strings = read_section_header(in(), shoff_ + section.link * shentsize_);
                want(strings.offset, std::min(strings.size, kMaxDynamicStrings));
            }
        }
    }

    StreamedElf::Needs needs_;
    SparseStream* stream_ = nullptr;
    bool stopped_ = false;  // not ELF, or a header read past the end of the file
    bool is64_ = true;
    bool little_ = true;
    bool header_done_ = false;
    bool program_headers_done_ = false;
    bool dynamic_done_ = false;
    bool sections_done_ = false;
    std::uint64_t phoff_ = 0, phentsize_ = 0, phnum_ = 0;
    std::uint64_t shoff_ = 0, shentsize_ = 0, shnum_ = 0, shstrndx_ = 0;
    std::uint64_t dynamic_offset_ = 0, dynamic_size_ = 0;
    bool has_dynamic_ = false;
    std::vector<Load> loads_;
};

StreamedElf::StreamedElf(std::uint64_t size, Needs needs, const ByteRanges& want_first)
    : needs_(needs), stream_(size) {
    stream_.want(0, 64);
    for (const auto& [begin, end] : want_first.ranges()) stream_.want(begin, end - begin);
    stream_.add(std::make_unique<Learner>(needs));
}

ByteRanges StreamedElf::to_fetch(const BytesNotKept& missing) const {
    ByteRanges wanted = stream_.wanted();
    if (missing.begin() < size()) wanted.add(missing.begin(), std::min(missing.end(), size()));
    ByteRanges gaps;
    for (const auto& [begin, end] : wanted.ranges()) {
        for (std::uint64_t at = begin; at < end;) {
            const auto [gap_begin, gap_end] = kept().first_gap(at, end);
            if (gap_begin >= gap_end) break;
            gaps.add(gap_begin, gap_end);
            at = gap_end;
        }
    }
    return gaps;
}

bool StreamedElf::is_elf() const {
    return size() >= SELFMAG && kept().covers(0, SELFMAG) && std::memcmp(image().data(), ELFMAG, SELFMAG) == 0;
}

}  // namespace wheelfix::elf
