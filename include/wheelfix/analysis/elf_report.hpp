// What `inspect` says about one ELF file: linkage, symbol-version floor, CUDA
// runtime and fatbin architectures, torch imports.
//
// Contract: analyze_elf(name, bytes, directory_depth) parses the image and fills
// every field from the file alone — no other file is read. A damaged image throws
// elf::ElfError or cuda::FatbinError (one-line what()); the caller turns that into
// an InputError naming the file. `directory_depth` is how many
// directories deep the member sits inside the wheel (0 for a top-level file); it
// lets RPATH entries that climb out of the wheel through $ORIGIN/.. be flagged.
// For a bare file outside a wheel pass std::nullopt: then only absolute entries
// are flagged. `present` makes `bytes` a partial image (elf/streamed_elf.hpp): the
// report is then the whole file's, or BytesNotKept says what to keep and read again.
#pragma once

#include "wheelfix/cuda/fatbin.hpp"
#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/policy/manylinux.hpp"
#include "wheelfix/util/byte_ranges.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace wheelfix::analysis {

struct SearchPathEntry {
    std::string path;
    bool absolute = false;        // not $ORIGIN-relative: depends on the build machine
    bool outside_wheel = false;   // $ORIGIN/.. climbs above the wheel root
};

struct TorchImport {
    std::string mangled;
    std::string demangled;
    std::string library;  // the torch library it most likely comes from
};

// Whether one GPU architecture can run this file's device code.
struct GpuSupport {
    std::uint32_t sm = 0;
    bool runs = false;
    std::string how;  // "cubin sm_100a", "PTX compute_120 (JIT)", or empty
};

struct ElfReport {
    std::string name;
    std::uint64_t size = 0;
    std::string elf_class;  // "ELF64"
    std::string endian;     // "little"
    std::string machine;    // platform-tag spelling: "x86_64", "s390x"
    std::string type;       // "DYN", "EXEC", "REL"
    std::optional<std::string> soname;
    std::vector<std::string> needed;
    std::optional<std::string> rpath;
    std::optional<std::string> runpath;
    std::vector<SearchPathEntry> search_path;  // entries of RUNPATH, else RPATH

    policy::NeededVersions needs;
    std::string honest_tag;  // "manylinux_2_17", "musllinux_1_1", or "" when none fits

    std::optional<int> cudart_major;    // from NEEDED libcudart.so.N
    std::vector<std::string> cuda_libraries;  // NEEDED CUDA libraries (cublas, nccl, ...)
    std::vector<cuda::FatbinEntry> fatbin;
    std::vector<GpuSupport> blackwell;  // sm_100, sm_103, sm_120, sm_121 when fatbin is present

    std::vector<TorchImport> torch_imports;  // sorted by library, then demangled name

    // A shim written by `wheelfix shim` (its version node is WHEELFIX_TORCH_<v>):
    // the torch it targets and the symbols it provides, demangled and sorted. Which
    // of them forward is visible in torch_imports (the successors they bind to).
    std::string shim_for_torch;
    std::vector<std::string> shim_provides;
    std::size_t undefined_symbols = 0;
    std::size_t defined_symbols = 0;
};

// Whether the file needs torch: it links one of torch's libraries (libc10*,
// libtorch*) or imports a symbol from torch's namespaces.
bool uses_torch(const ElfReport& report);
// Whether it links one of torch's libraries.
bool links_torch_library(const ElfReport& report);
// The report with `needed` as the member's NEEDED (a writer's edit of them, before it is
// written): cudart_major and cuda_libraries follow, as analyze_elf derives them.
void set_needed(ElfReport& report, std::vector<std::string> needed);

// The Blackwell compute capabilities inspect reports on.
inline constexpr std::uint32_t kBlackwellSms[] = {100, 103, 120, 121};

ElfReport analyze_elf(std::string name, std::span<const std::uint8_t> bytes, std::optional<int> directory_depth,
                      const ByteRanges* present = nullptr);
// The same on a parse the caller made (the plan executor's one parse of a member).
ElfReport analyze_elf(std::string name, const elf::ElfFile& elf, std::optional<int> directory_depth);
// Only what the loader reads: the header's fields, NEEDED, SONAME, the search path,
// the glibc/musl floor (`needs`, honest tags) and the CUDA libraries linked; no
// fatbin, symbols or shim fields. What repair plans a member's relink from, on a
// parse of its dynamic tables only (repair's speculation: repair/plan.hpp, step 2).
ElfReport analyze_linking(std::string name, const elf::ElfFile& elf, std::optional<int> directory_depth);
// Less still: what ld.so searches a NEEDED with (the header's fields, NEEDED, SONAME,
// RPATH, RUNPATH); what `check` keeps of each member (analysis/torch_check.hpp).
ElfReport analyze_search(std::string name, const elf::ElfFile& elf, std::optional<int> directory_depth);

// Classifies one RPATH/RUNPATH entry of a file `directory_depth` levels below the
// wheel root.
SearchPathEntry classify_search_path(std::string path, std::optional<int> directory_depth);

}  // namespace wheelfix::analysis
