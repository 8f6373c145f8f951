// CUDA fat binaries (.nv_fatbin / __nv_relfatbin sections) as nvcc 12/13 writes them.
//
// Layout, verified against nvcc 13.0.88 output (tests/data/fatbin/build.sh builds the
// evidence; docs/decisions.md, "Fatbin facts", is the summary):
//
//   container: u32 magic 0xBA55ED50 @0, u16 version @4 (1), u16 header size @6 (16),
//              u64 payload size @8; the entries fill the payload.
//   entry:     u16 kind @0 (1 PTX, 2 cubin, 8 LTO IR -- not 4), u16 @2 (0x0101),
//              u32 header size @4, u64 payload size @8, u32 compressed size @16,
//              u16 minor @24, u16 major @26 (PTX ISA / cubin format version),
//              u32 sm @28 (75, 90, 100, 103, 120, 121...), u32 @32 offset and
//              u32 @36 length of an object name inside the header (-G only, e.g.
//              "src/scale.cu"; 0 otherwise), u64 flags @40,
//              u64 uncompressed size @56 (0 when the payload is stored as is).
//              The payload starts right after the entry header.
//   header sizes seen: 64 (cubins before Blackwell), 80 (PTX), 96 (the cubin nvcc's
//              device-link step adds), 112 (Blackwell cubins), 120 (LTO IR), 120 and
//              128 (`-G` debug cubins: the header carries the object's name, so its
//              size follows the name) -- walk by the header size, never assume one.
//   flags:     0x1 64-bit, 0x2 debug (-G), 0x10 Linux; 0x100000 arch-specific
//              (`sm_XXa` / `compute_XXa`), 0x200000 family-specific (`sm_XXf` /
//              `compute_XXf`), neither on plain sm_XX; 0x1000000 on Blackwell
//              cubins; 0x10000 on LTO IR; compression: 0x8000 zstd (payload starts
//              28 B5 2F FD; `--compress-mode=default|balance|size`, and PTX, -rdc
//              and -G cubins by default) or 0x2000 (the older LZ4 format,
//              `--compress-mode=speed`). Cubins of non-rdc objects are stored
//              uncompressed unless `-Xfatbin=-compress-all` or a compress mode asks.
//   sections:  a linked .so concatenates one container per object (nvcc-driven
//              links add a device-link container first). -rdc objects keep their
//              fatbin in `__nv_relfatbin`; cuobjdump reads `.nv_fatbin` when present
//              and `__nv_relfatbin` otherwise, and lists no LTO IR.
// Fatbin data is little endian whatever the host ELF is.
//
// Contract: parse_fatbin_section(bytes) returns every entry of every container in
// the section, in order, or throws FatbinError (std::runtime_error, one line) when a
// magic is wrong or a size or count lies about the bytes available. Zero bytes
// between containers (alignment padding) are skipped, and so is zero padding at
// the end of a container's payload. Nothing is decompressed: only headers are read.
// An entry of an unknown kind is returned with its raw kind value.
// Given `present`, it reads the section inside a partial image (util/
// byte_ranges.hpp): `bytes` starts at image offset `file_offset`, every byte it
// reads must be `present`, else BytesNotKept; the result, when there is one, is
// the one the whole section gives. cuda/fatbin_scan.hpp keeps those bytes while
// a file streams past.
#pragma once

#include "wheelfix/util/byte_ranges.hpp"

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace wheelfix::cuda {

class FatbinError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Entry kinds; any other value read from a file is kept as it is.
enum class EntryKind : std::uint16_t { ptx = 1, cubin = 2, ltoir = 8 };

// The arch variant encoded in the flags: plain sm_XX, arch-specific sm_XXa
// (runs only on that exact SM), or family-specific sm_XXf (runs on the family).
enum class ArchVariant : std::uint8_t { plain, arch_specific, family_specific };

namespace fatbin_flag {
inline constexpr std::uint64_t is_64bit = 0x1;
inline constexpr std::uint64_t debug = 0x2;
inline constexpr std::uint64_t linux_host = 0x10;
inline constexpr std::uint64_t compressed_lz4 = 0x2000;
inline constexpr std::uint64_t compressed_zstd = 0x8000;
inline constexpr std::uint64_t lto = 0x10000;
inline constexpr std::uint64_t arch_specific = 0x100000;
inline constexpr std::uint64_t family_specific = 0x200000;
inline constexpr std::uint64_t blackwell_cubin = 0x1000000;
}  // namespace fatbin_flag

inline constexpr std::uint32_t fatbin_magic = 0xBA55ED50;

// The little-endian value of the `width` (1-8) bytes at `at`, which must lie in `bytes`.
std::uint64_t read_le(std::span<const std::uint8_t> bytes, std::uint64_t at, unsigned width);

struct FatbinEntry {
    EntryKind kind = EntryKind::cubin;
    std::uint32_t sm = 0;             // 90, 100, 120, ...
    ArchVariant variant = ArchVariant::plain;
    std::uint16_t version_major = 0;  // PTX ISA or cubin format version
    std::uint16_t version_minor = 0;
    std::uint64_t flags = 0;
    bool compressed = false;
    std::uint32_t header_size = 0;
    std::uint64_t payload_size = 0;
    std::uint64_t uncompressed_size = 0;  // payload size once inflated (= payload_size if stored)
    std::uint64_t offset = 0;         // of the entry header, from the section start

    // "sm_100a", "sm_120f", "compute_120" (PTX), "lto_100" (LTO IR), "kind7_100".
    std::string arch_name() const;
    const char* kind_name() const;    // "cubin", "ptx", "ltoir", "unknown"
};

std::vector<FatbinEntry> parse_fatbin_section(std::span<const std::uint8_t> bytes, const ByteRanges* present = nullptr,
                                              std::uint64_t file_offset = 0);

// Whether an entry can run on a GPU of compute capability `sm` (e.g. 100, 120;
// major = sm / 10, minor = sm % 10), by NVIDIA's CUDA compatibility rules (CUDA
// Programming Guide, "Binary/PTX compatibility"; the CUDA 12.9 family-specific
// architecture notes), checked against nvcc 13.0:
// - cubin: plain sm_XY runs on the same major with minor >= Y, never across majors
//   (sm_100 not on sm_120: Blackwell's 10.x and 12.x are different majors); family
//   sm_XYf likewise (sm_100f on sm_100 and sm_103); arch-specific sm_XYa only on XY.
// - PTX (JIT-compiled by the driver): plain compute_XY on any sm >= XY;
//   compute_XYf on the same major with minor >= Y; compute_XYa only on XY.
// - LTO IR and unknown kinds: never (LTO IR needs a device link first).
bool entry_runs_on(const FatbinEntry& entry, std::uint32_t sm);

}  // namespace wheelfix::cuda
