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

std::uint16_t read_u16(std::span<const std::uint8_t> b, std::size_t at) {
    return static_cast<std::uint16_t>(b[at] | (b[at + 1] << 8));
}

std::uint32_t read_u32(std::span<const std::uint8_t> b, std::size_t at) {
    return static_cast<std::uint32_t>(read_u16(b, at)) |
           (static_cast<std::uint32_t>(read_u16(b, at + 2)) << 16);
}

std::uint64_t read_u64(std::span<const std::uint8_t> b, std::size_t at) {
    return static_cast<std::uint64_t>(read_u32(b, at)) |
           (static_cast<std::uint64_t>(read_u32(b, at + 4)) << 32);
}

bool all_zero(std::span<const std::uint8_t> b) {
    for (std::uint8_t byte : b)
        if (byte != 0) return false;
    return true;
}

ArchVariant variant_from_flags(std::uint64_t flags) {
    if (flags & fatbin_flag::arch_specific) return ArchVariant::arch_specific;
    if (flags & fatbin_flag::family_specific) return ArchVariant::family_specific;
    return ArchVariant::plain;
}

// One entry whose header starts at `at` inside `container` (which starts at
// section offset `base`). Returns the entry; its header and payload sizes are
// known to fit in `container` from `at` on.
FatbinEntry read_entry(std::span<const std::uint8_t> container, std::size_t at, std::uint64_t base) {
    const std::uint64_t left = container.size() - at;
    if (left < 16)
        throw FatbinError(fmt::format("fatbin entry header at offset {} truncated", base + at));
    FatbinEntry e;
    e.kind = static_cast<EntryKind>(read_u16(container, at));
    e.header_size = read_u32(container, at + 4);
    e.payload_size = read_u64(container, at + 8);
    e.offset = base + at;
    if (e.header_size < entry_header_min)
        throw FatbinError(fmt::format("fatbin entry at offset {} has header size {} (at least {} needed)",
                                      e.offset, e.header_size, entry_header_min));
    if (e.header_size > left)
        throw FatbinError(fmt::format("fatbin entry at offset {}: header size {} past the container end",
                                      e.offset, e.header_size));
    if (e.payload_size > left - e.header_size)
        throw FatbinError(fmt::format("fatbin entry at offset {}: payload size {} past the container end",
                                      e.offset, e.payload_size));
    e.version_minor = read_u16(container, at + 24);
    e.version_major = read_u16(container, at + 26);
    e.sm = read_u32(container, at + 28);
    e.flags = read_u64(container, at + 40);
    e.variant = variant_from_flags(e.flags);
    e.compressed = (e.flags & (fatbin_flag::compressed_lz4 | fatbin_flag::compressed_zstd)) != 0;
    e.uncompressed_size = e.payload_size;
    if (e.compressed && e.header_size >= uncompressed_size_end)
        e.uncompressed_size = read_u64(container, at + 56);
    return e;
}

// The entries filling one container's payload; trailing zero padding is allowed.
void read_entries(std::span<const std::uint8_t> payload, std::uint64_t base,
                  std::vector<FatbinEntry>& out) {
    std::size_t at = 0;
    while (at < payload.size() && !all_zero(payload.subspan(at))) {
        FatbinEntry e = read_entry(payload, at, base);
        at += static_cast<std::size_t>(e.header_size + e.payload_size);
        out.push_back(e);
    }
}

// Reads the container at `at`; returns the offset just past it.
std::size_t read_container(std::span<const std::uint8_t> bytes, std::size_t at,
                           std::vector<FatbinEntry>& out) {
    const std::uint64_t left = bytes.size() - at;
    if (left < container_header_min)
        throw FatbinError(fmt::format("fatbin container header at offset {} truncated", at));
    const std::uint32_t magic = read_u32(bytes, at);
    if (magic != fatbin_magic)
        throw FatbinError(fmt::format("bad fatbin magic 0x{:08X} at offset {}", magic, at));
    const std::uint64_t header_size = read_u16(bytes, at + 6);
    const std::uint64_t payload_size = read_u64(bytes, at + 8);
    if (header_size < container_header_min || header_size > left)
        throw FatbinError(fmt::format("fatbin container at offset {} has header size {}", at, header_size));
    if (payload_size > left - header_size)
        throw FatbinError(fmt::format("fatbin container at offset {}: payload size {} past the section end",
                                      at, payload_size));
    const std::size_t payload_at = at + static_cast<std::size_t>(header_size);
    read_entries(bytes.subspan(payload_at, static_cast<std::size_t>(payload_size)), payload_at, out);
    return payload_at + static_cast<std::size_t>(payload_size);
}

std::size_t skip_zeros(std::span<const std::uint8_t> bytes, std::size_t at) {
    while (at < bytes.size() && bytes[at] == 0) ++at;
    return at;
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

bool same_family_at_least(std::uint32_t built_for, std::uint32_t gpu) {
    return built_for / 10 == gpu / 10 && built_for % 10 <= gpu % 10;
}

bool variant_allows(ArchVariant variant, std::uint32_t built_for, std::uint32_t gpu) {
    switch (variant) {
        case ArchVariant::arch_specific: return built_for == gpu;
        case ArchVariant::family_specific: return same_family_at_least(built_for, gpu);
        case ArchVariant::plain: break;
    }
    return same_family_at_least(built_for, gpu);
}

}  // namespace

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

std::vector<FatbinEntry> parse_fatbin_section(std::span<const std::uint8_t> bytes) {
    std::vector<FatbinEntry> entries;
    std::size_t at = skip_zeros(bytes, 0);
    while (at < bytes.size()) {
        at = read_container(bytes, at, entries);
        at = skip_zeros(bytes, at);
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
