// StreamedElf: learn which byte ranges of an ELF file the dynamic tables occupy
// while the file streams past once, and keep only those (streamed_elf.hpp has the
// contract). The reads here touch only bytes already kept; every offset and size
// taken from the stream is clamped to the file before it becomes a range.
#include "streamed_elf.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

namespace wheelfix::abi::detail {

namespace {

constexpr std::uint64_t kShstrtabWindow = 64 * 1024;
constexpr std::uint64_t kMaxTableGuess = 256ull << 20;

std::uint64_t clamp_add(std::uint64_t a, std::uint64_t b) {
    return b > std::numeric_limits<std::uint64_t>::max() - a ? std::numeric_limits<std::uint64_t>::max() : a + b;
}

std::uint64_t clamp_mul(std::uint64_t a, std::uint64_t b) {
    if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return std::numeric_limits<std::uint64_t>::max();
    return a * b;
}

[[noreturn]] void cannot(const std::string& what) {
    throw elf::ElfError("cannot be indexed in one pass: " + what);
}

bool is_dynamic_table_section(std::uint32_t type) {
    return type == SHT_DYNSYM || type == SHT_DYNAMIC || type == SHT_GNU_versym || type == SHT_GNU_verneed ||
           type == SHT_GNU_verdef || type == SHT_GNU_HASH || type == SHT_HASH;
}

}  // namespace

// ---- RangeSet ----------------------------------------------------------------

void RangeSet::add(std::uint64_t begin, std::uint64_t end) {
    if (begin >= end) return;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> merged;
    merged.reserve(ranges_.size() + 1);
    bool placed = false;
    for (const auto& range : ranges_) {
        if (range.second < begin) {
            merged.push_back(range);
        } else if (end < range.first) {
            if (!placed) merged.emplace_back(begin, end);
            placed = true;
            merged.push_back(range);
        } else {
            begin = std::min(begin, range.first);
            end = std::max(end, range.second);
        }
    }
    if (!placed) merged.emplace_back(begin, end);
    ranges_ = std::move(merged);
}

bool RangeSet::covers(std::uint64_t begin, std::uint64_t end) const {
    if (begin >= end) return true;
    return std::any_of(ranges_.begin(), ranges_.end(),
                       [&](const auto& range) { return range.first <= begin && end <= range.second; });
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> RangeSet::intersect(std::uint64_t begin,
                                                                          std::uint64_t end) const {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> parts;
    for (const auto& range : ranges_) {
        const std::uint64_t from = std::max(begin, range.first);
        const std::uint64_t to = std::min(end, range.second);
        if (from < to) parts.emplace_back(from, to);
    }
    return parts;
}

std::uint64_t RangeSet::total() const {
    std::uint64_t sum = 0;
    for (const auto& range : ranges_) sum += range.second - range.first;
    return sum;
}

// ---- StreamedElf -------------------------------------------------------------

StreamedElf::StreamedElf(std::uint64_t size) : size_(size), image_(size) { want(0, 64); }

void StreamedElf::consume(std::span<const std::uint8_t> chunk) {
    const std::uint64_t begin = position_;
    if (chunk.size() > size_ - std::min(size_, begin)) throw elf::ElfError("member longer than its recorded size");
    position_ += chunk.size();
    if (not_elf_) return;
    keep(chunk, begin);
    for (std::uint64_t before = wanted_.total();; before = wanted_.total()) {
        learn();
        if (wanted_.total() == before || not_elf_) break;
        keep(chunk, begin);
    }
}

void StreamedElf::keep(std::span<const std::uint8_t> chunk, std::uint64_t chunk_begin) {
    for (const auto& [from, to] : wanted_.intersect(chunk_begin, chunk_begin + chunk.size())) {
        std::memcpy(image_.data() + from, chunk.data() + (from - chunk_begin), to - from);
        kept_.add(from, to);
    }
}

void StreamedElf::want(std::uint64_t begin, std::uint64_t size) {
    if (begin >= size_) return;
    wanted_.add(begin, begin + std::min(size, size_ - begin));
}

void StreamedElf::need(std::uint64_t begin, std::uint64_t size) {
    want(begin, size);
    needed_.add(std::min(begin, size_), std::min(clamp_add(begin, size), size_));
}

std::uint64_t StreamedElf::read(std::uint64_t offset, unsigned width) const {
    if (offset > size_ || width > size_ - offset) return 0;
    const std::uint8_t* at = image_.bytes().data() + offset;
    std::uint64_t value = 0;
    for (unsigned i = 0; i < width; ++i) {
        const unsigned shift = little_ ? 8 * i : 8 * (width - 1 - i);
        value |= static_cast<std::uint64_t>(at[i]) << shift;
    }
    return value;
}

void StreamedElf::learn() {
    if (!header_done_) learn_header();
    if (header_done_ && !program_headers_done_) learn_program_headers();
    if (program_headers_done_ && has_dynamic_ && !dynamic_done_) learn_dynamic();
    if (header_done_ && !sections_done_) learn_sections();
}

void StreamedElf::learn_header() {
    if (!kept_.covers(0, std::min<std::uint64_t>(size_, EI_NIDENT))) return;
    if (size_ < EI_NIDENT || std::memcmp(image_.bytes().data(), ELFMAG, SELFMAG) != 0) {
        not_elf_ = true;
        return;
    }
    const std::uint8_t* ident = image_.bytes().data();
    is64_ = ident[EI_CLASS] == ELFCLASS64;
    little_ = ident[EI_DATA] != ELFDATA2MSB;
    if (!kept_.covers(0, std::min<std::uint64_t>(size_, is64_ ? 64 : 52))) return;
    phoff_ = word(is64_ ? 32 : 28);
    shoff_ = word(is64_ ? 40 : 32);
    phentsize_ = read(is64_ ? 54 : 42, 2);
    phnum_ = read(is64_ ? 56 : 44, 2);
    shentsize_ = read(is64_ ? 58 : 46, 2);
    shnum_ = read(is64_ ? 60 : 48, 2);
    shstrndx_ = read(is64_ ? 62 : 50, 2);
    need(phoff_, clamp_mul(phnum_, phentsize_));
    if (shoff_ != 0) {
        need(shoff_, shnum_ == 0 ? shentsize_ : clamp_mul(shnum_, shentsize_));
        const std::uint64_t window = std::min(shoff_, kShstrtabWindow);
        want(shoff_ - window, window);
    }
    header_done_ = true;
}

void StreamedElf::learn_program_headers() {
    const std::uint64_t table_end = clamp_add(phoff_, clamp_mul(phnum_, phentsize_));
    if (!kept_.covers(phoff_, std::min(table_end, size_))) return;
    program_headers_done_ = true;
    if (phentsize_ < (is64_ ? 56u : 32u)) return;  // the ELF reader reports it
    for (std::uint64_t i = 0; i < phnum_; ++i) {
        const std::uint64_t at = phoff_ + i * phentsize_;
        const std::uint64_t type = read(at, 4);
        const std::uint64_t offset = is64_ ? read(at + 8, 8) : read(at + 4, 4);
        const std::uint64_t vaddr = is64_ ? read(at + 16, 8) : read(at + 8, 4);
        const std::uint64_t filesz = is64_ ? read(at + 32, 8) : read(at + 16, 4);
        if (type == PT_LOAD) loads_.push_back({offset, vaddr, filesz});
        if (type == PT_DYNAMIC && !has_dynamic_) {
            has_dynamic_ = true;
            dynamic_offset_ = offset;
            dynamic_size_ = filesz;
        }
    }
    if (!loads_.empty()) {
        const Load& first = *std::min_element(loads_.begin(), loads_.end(),
                                              [](const Load& a, const Load& b) { return a.offset < b.offset; });
        want(first.offset, first.filesz);
    }
    if (has_dynamic_) need(dynamic_offset_, dynamic_size_);
}

std::optional<std::uint64_t> StreamedElf::file_offset(std::uint64_t vaddr, std::uint64_t& segment_end) const {
    for (const Load& load : loads_) {
        if (vaddr < load.vaddr || vaddr - load.vaddr >= load.filesz) continue;
        segment_end = clamp_add(load.offset, load.filesz);
        return load.offset + (vaddr - load.vaddr);
    }
    return std::nullopt;
}

void StreamedElf::learn_dynamic() {
    if (!kept_.covers(dynamic_offset_, std::min(clamp_add(dynamic_offset_, dynamic_size_), size_))) return;
    dynamic_done_ = true;
    const std::uint64_t entry = is64_ ? 16 : 8;
    std::optional<std::uint64_t> strtab, strsz;
    std::vector<std::uint64_t> tables;
    for (std::uint64_t at = dynamic_offset_; at + entry <= dynamic_offset_ + dynamic_size_; at += entry) {
        const std::uint64_t tag = word(at);
        const std::uint64_t value = word(at + entry / 2);
        if (tag == DT_NULL) break;
        if (tag == DT_STRTAB) strtab = value;
        else if (tag == DT_STRSZ) strsz = value;
        else if (tag == DT_SYMTAB || tag == DT_GNU_HASH || tag == DT_HASH || tag == DT_VERSYM ||
                 tag == DT_VERNEED || tag == DT_VERDEF)
            tables.push_back(value);
    }
    std::uint64_t segment_end = 0;
    if (strtab && strsz)
        if (auto offset = file_offset(*strtab, segment_end)) need(*offset, *strsz);
    for (std::uint64_t address : tables)
        if (auto offset = file_offset(address, segment_end)) {
            want(*offset, std::min(segment_end - *offset, kMaxTableGuess));
            table_starts_.push_back(*offset);
        }
}

void StreamedElf::learn_sections() {
    if (shoff_ == 0 || shentsize_ < (is64_ ? 64u : 40u)) {
        sections_done_ = true;
        return;
    }
    if (shnum_ == 0) {  // extended numbering: the count is section 0's sh_size
        if (!kept_.covers(shoff_, std::min(clamp_add(shoff_, shentsize_), size_))) return;
        shnum_ = word(shoff_ + (is64_ ? 32 : 20));
        if (shnum_ == 0) {
            sections_done_ = true;
            return;
        }
        need(shoff_, clamp_mul(shnum_, shentsize_));
    }
    if (!kept_.covers(shoff_, std::min(clamp_add(shoff_, clamp_mul(shnum_, shentsize_)), size_))) return;
    sections_done_ = true;
    for (std::uint64_t i = 0; i < shnum_; ++i) {
        const std::uint64_t at = shoff_ + i * shentsize_;
        const std::uint64_t type = read(at + 4, 4);
        const std::uint64_t offset = word(at + (is64_ ? 24 : 16));
        const std::uint64_t size = word(at + (is64_ ? 32 : 20));
        const std::uint64_t link = read(at + (is64_ ? 40 : 24), 4);
        if (i == shstrndx_) want(offset, size);
        if (!is_dynamic_table_section(static_cast<std::uint32_t>(type))) continue;
        need(offset, size);
        if (link != 0 && link < shnum_) {
            const std::uint64_t linked = shoff_ + link * shentsize_;
            need(word(linked + (is64_ ? 24 : 16)), word(linked + (is64_ ? 32 : 20)));
        }
    }
}

void StreamedElf::check_kept() const {
    if (not_elf_) return;
    if (!header_done_) cannot("the ELF header is incomplete");
    if (!program_headers_done_) cannot("the program header table lies outside the file");
    if (has_dynamic_ && !dynamic_done_) cannot("PT_DYNAMIC lies outside the file");
    for (const auto& [from, to] : needed_.intersect(0, size_))
        if (!kept_.covers(from, to))
            cannot("bytes " + std::to_string(from) + ".." + std::to_string(to) +
                   " were needed only after they had streamed past");
    for (std::uint64_t start : table_starts_)
        if (!kept_.covers(start, std::min(start + 16, size_)))
            cannot("a dynamic table at offset " + std::to_string(start) + " lay before the point where it was known");
}

void StreamedElf::check_symbols(const elf::ElfFile& elf) const {
    if (not_elf_ || !elf.has_dynamic()) return;
    for (const elf::SectionHeader& section : elf.sections())
        if (is_dynamic_table_section(section.type) && section.type != SHT_NOBITS &&
            !kept_.covers(section.offset, std::min(clamp_add(section.offset, section.size), size_)))
            cannot(std::string(section.name.empty() ? "a dynamic section" : section.name) + " was not kept");
}

}  // namespace wheelfix::abi::detail
