// CUDA modules: the extensions of a wheel judged together when they are variants of
// one module, as sgl-kernel ships `sgl_kernel/sm90/common_ops.abi3.so` and
// `sgl_kernel/sm100/common_ops.abi3.so` and loads the one that fits the GPU.
//
// Contract:
// - group_cuda_modules(elves) groups the ELF reports that hold fatbin entries (a
//   file without device code is not a CUDA module). Files with the same file name in
//   sibling directories (same parent directory, which is not the wheel root) are
//   variants of one module; every other file is a module of its own. Modules come in
//   the order of their first variant; variants in wheel order.
// - A module runs on an SM when any variant does (cuda/coverage.hpp decides per
//   file); module_support() says which variant and entry serve each SM asked for.
#pragma once

#include "wheelfix/analysis/elf_report.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace wheelfix::analysis {

struct ModuleSupport {
    std::uint32_t sm = 0;
    bool runs = false;
    std::string member;  // the variant that serves it, empty when none
    std::string how;     // "cubin sm_100a", "PTX compute_120 (JIT)"
};

struct CudaModule {
    std::string name;                   // "sgl_kernel/{sm100,sm90}/common_ops.abi3.so", or the file itself
    std::vector<std::size_t> variants;  // indices into the ElfReport list
    std::vector<ModuleSupport> blackwell;  // for kBlackwellSms
};

std::vector<CudaModule> group_cuda_modules(const std::vector<ElfReport>& elves);

std::vector<ModuleSupport> module_support(const CudaModule& module, const std::vector<ElfReport>& elves,
                                          std::span<const std::uint32_t> sms);

// Any SMs (a target profile's) per module, and for a module of several variants
// per variant file too: rows in module order, each module followed by its
// variants (is_module false), the view `inspect --target` shows.
struct CoverageRow {
    std::string name;  // the module's name, or the variant's member name
    bool is_module = true;
    std::vector<ModuleSupport> sms;
};
std::vector<CoverageRow> sm_coverage(const std::vector<CudaModule>& modules, const std::vector<ElfReport>& elves,
                                     std::span<const std::uint32_t> sms);

// Each kind of code in the module's variants once, as "cubin sm_90a (sm90), cubin sm_100a (sm100), ..."
// (the variant's directory names it when the module has several).
std::string module_code_summary(const CudaModule& module, const std::vector<ElfReport>& elves);

}  // namespace wheelfix::analysis
