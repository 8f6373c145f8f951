// Fatbin section walker: containers, then the entries inside each container.
//
// Every size read from the section is checked against what is left before it is
// used, with subtraction on the remaining count (never `offset + size`, which can
// wrap), so a hostile section ends in a FatbinError and never reads out of bounds.
// Entry headers are only read for the fields documented in fatbin.hpp; a header
// shorter than the last field we read (@48) is rejected as lying.
#include "wheelfix/cuda/fatbin.hpp"

#include <fmt/format.h>

namespace wheelfix::cuda {

namespace {

constexpr std::uint64_t container_header_min = 16;
constexpr std::uint64_t entry_header_min = 48;      // up to and including the flags
constexpr std::uint64_t uncompressed_size_end = 64; // u64 @56

// The section being walked: reads of a partial image (util/byte_ranges.hpp) first
// require their bytes present; `file_offset` is where the section starts in it.
struct Walk {
    std::span<const std::uint8_t> section;
    const ByteRanges* present = nullptr;
    std::uint64_t file_offset = 0;

    void require(std::uint64_t at, std::uint64_t size) const {
        require_present(present, file_offset + at, file_offset + at + size);
    }
    // The first non-zero byte in [at, end), or `end`; the zeros and that byte are
    // read. Over a partial image the scan stops at the first byte not present and
    // names a small range from there as missing.
    std::uint64_t skip_zeros(std::uint64_t at, std::uint64_t end) const {
        std::uint64_t limit = end;
        if (present != nullptr) limit = present->first_gap(file_offset + at, file_offset + end).first - file_offset;
        std::uint64_t next = at;
        while (next < limit && section[next] == 0) ++next;
        if (next == limit && limit < end) {
            const std::uint64_t missing = file_offset + limit;
            throw BytesNotKept(missing, missing + std::min<std::uint64_t>(64, end - limit));
        }
        return next;
    }
};

ArchVariant variant_from_flags(std::uint64_t flags) {
    if (flags & fatbin_flag::arch_specific) return ArchVariant::arch_specific;
    if (flags & fatbin_flag::family_specific) return ArchVariant::family_specific;
    return ArchVariant::plain;
}

// One entry whose header starts at section offset `at` inside the container
// payload that ends at `end`. Returns the entry; its header and payload sizes are
// known to fit before `end`.
FatbinEntry read_entry(const Walk& walk, std::uint64_t at, std::uint64_t end) {
    const std::uint64_t left = end - at;
    if (left < 16)
        throw FatbinError(fmt::format("fatbin entry header at offset {} truncated", at));
    const auto section = walk.section;
    walk.require(at, 16);
    FatbinEntry e;
    e.kind = static_cast<EntryKind>(read_le(section, at, 2));
    e.header_size = read_le(section, at + 4, 4);
    e.payload_size = read_le(section, at + 8, 8);
    e.offset = at;
    if (e.header_size < entry_header_min)
        throw FatbinError(fmt::format("fatbin entry at offset {} has header size {} (at least {} needed)",
                                      e.offset, e.header_size, entry_header_min));
    if (e.header_size > left)
        throw FatbinError(fmt::format("fatbin entry at offset {}: header size {} past the container end",
                                      e.offset, e.header_size));
    if (e.payload_size > left - e.header_size)
        throw FatbinError(fmt::format("fatbin entry at offset {}: payload size {} past the container end",
                                      e.offset, e.payload_size));
    walk.require(at + 24, entry_header_min - 24);
    e.version_minor = read_le(section, at + 24, 2);
    e.version_major = read_le(section, at + 26, 2);
    e.sm = read_le(section, at + 28, 4);
    e.flags = read_le(section, at + 40, 8);
    e.variant = variant_from_flags(e.flags);
    e.compressed = (e.flags & (fatbin_flag::compressed_lz4 | fatbin_flag::compressed_zstd)) != 0;
    e.uncompressed_size = e.payload_size;
    if (e.compressed && e.header_size >= uncompressed_size_end) {
        walk.require(at + 56, 8);
        e.uncompressed_size = read_le(section, at + 56, 8);
    }
    return e;
}

// The entries filling one container's payload [at, end); trailing zero padding is allowed.
void read_entries(const Walk& walk, std::uint64_t at, std::uint64_t end, std::vector<FatbinEntry>& out) {
    while (at < end && walk.skip_zeros(at, end) < end) {
        FatbinEntry e = read_entry(walk, at, end);
        at += e.header_size + e.payload_size;
        out.push_back(e);
    }
}

// Reads the container at section offset `at`; returns the offset just past it.
std::uint64_t read_container(const Walk& walk, std::uint64_t at, std::vector<FatbinEntry>& out) {
    const auto bytes = walk.section;
    const std::uint64_t left = bytes.size() - at;
    if (left < container_header_min)
        throw FatbinError(fmt::format("fatbin container header at offset {} truncated", at));
    walk.require(at, container_header_min);
    const std::uint32_t magic = read_le(bytes, at, 4);
    if (magic != fatbin_magic)
        throw FatbinError(fmt::format("bad fatbin magic 0x{:08X} at offset {}", magic, at));
    const std::uint64_t header_size = read_le(bytes, at + 6, 2);
    const std::uint64_t payload_size = read_le(bytes, at + 8, 8);
    if (header_size < container_header_min || header_size > left)
        throw FatbinError(fmt::format("fatbin container at offset {} has header size {}", at, header_size));
    if (payload_size > left - header_size)
        throw FatbinError(fmt::format("fatbin container at offset {}: payload size {} past the section end",
                                      at, payload_size));
    const std::uint64_t payload_at = at + header_size;
    read_entries(walk, payload_at, payload_at + payload_size, out);
    return payload_at + payload_size;
}

const char* arch_prefix(EntryKind kind) {
    switch (kind) {
        case EntryKind::cubin: return "sm_";
        case EntryKind::ptx: return "compute_";
        case EntryKind::ltoir: return "lto_";
    }
    return nullptr;
}

const char* variant_suffix(ArchVariant variant) {
    switch (variant) {
        case ArchVariant::arch_specific: return "a";
        case ArchVariant::family_specific: return "f";
        case ArchVariant::plain: break;
    }
    return "";
}

bool variant_allows(ArchVariant variant, std::uint32_t built_for, std::uint32_t gpu) {
    if (variant == ArchVariant::arch_specific) return built_for == gpu;
    return built_for / 10 == gpu / 10 && built_for % 10 <= gpu % 10;  // plain and family-specific alike
}

}  // namespace

std::uint64_t read_le(std::span<const std::uint8_t> bytes, std::uint64_t at, unsigned width) {
    std::uint64_t value = 0;
    for (unsigned i = 0; i < width; ++i) value |= static_cast<std::uint64_t>(bytes[at + i]) << (8 * i);
    return value;
}

std::string FatbinEntry::arch_name() const {
    const char* prefix = arch_prefix(kind);
    if (prefix == nullptr)
        return fmt::format("kind{}_{}{}", static_cast<unsigned>(kind), sm, variant_suffix(variant));
    return fmt::format("{}{}{}", prefix, sm, variant_suffix(variant));
}

const char* FatbinEntry::kind_name() const {
    switch (kind) {
        case EntryKind::cubin: return "cubin";
        case EntryKind::ptx: return "ptx";
        case EntryKind::ltoir: return "ltoir";
    }
    return "unknown";
}

std::vector<FatbinEntry> parse_fatbin_section(std::span<const std::uint8_t> bytes, const ByteRanges* present,
                                              std::uint64_t file_offset) {
    const Walk walk{bytes, present, file_offset};
    std::vector<FatbinEntry> entries;
    std::uint64_t at = walk.skip_zeros(0, bytes.size());
    while (at < bytes.size()) {
        at = read_container(walk, at, entries);
        at = walk.skip_zeros(at, bytes.size());
    }
    return entries;
}

bool entry_runs_on(const FatbinEntry& entry, std::uint32_t sm) {
    switch (entry.kind) {
        case EntryKind::cubin:
            return variant_allows(entry.variant, entry.sm, sm);
        case EntryKind::ptx:
            if (entry.variant == ArchVariant::plain) return entry.sm <= sm;
            return variant_allows(entry.variant, entry.sm, sm);
        case EntryKind::ltoir:
            break;
    }
    return false;
}

}  // namespace wheelfix::cuda
