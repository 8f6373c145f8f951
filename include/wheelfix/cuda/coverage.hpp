// SM coverage: which fatbin entry (if any) lets a GPU of compute capability `sm`
// run a file's device code, and how to say so.
//
// The per-entry rule is cuda::entry_runs_on() (fatbin.hpp), from NVIDIA's CUDA
// compatibility rules (CUDA Programming Guide, "Binary/PTX compatibility"; the CUDA
// 12.9 "family-specific architecture features" notes), checked against nvcc 13.0:
// - a plain cubin sm_XY runs on the same major at minor >= Y (sm_80 on sm_86,
//   sm_100 on sm_103), never across majors (sm_90 not on sm_100, sm_100 not on
//   sm_120: Blackwell's 10.x and 12.x are different majors);
// - a family cubin sm_XYf runs on its family: same major, minor >= Y (sm_100f on
//   sm_100 and sm_103, sm_120f on sm_120 and sm_121). `-gencode
//   arch=compute_100f,code=sm_100f` gives exactly one cubin, SM 100, flag 0x200000;
// - an arch-specific cubin sm_XYa runs only on sm_XY;
// - PTX compute_XY is JIT-compiled by the driver for any sm >= XY; compute_XYf
//   PTX only within its family, compute_XYa PTX only on XY;
// - LTO IR never runs as it is (it needs a device link first).
// This lives in cuda/ because it is a fact about fatbins, not a policy choice;
// analysis/profile_findings.hpp and analysis/modules.hpp apply it.
//
// Contract: best_entry_for(entries, sm) returns the entry the driver would use:
// a cubin built for exactly sm (first in file order), else a compatible cubin
// (family or same-major older; the newest one), else the newest PTX that JITs for
// sm; nullopt when nothing runs. best_entry_index() is the same choice as an index
// into `entries` (for callers that pool the entries of several files). describe_entry() spells an entry for people:
// "cubin sm_100a", "PTX compute_120 (JIT)".
#pragma once

#include "wheelfix/cuda/fatbin.hpp"

#include <optional>
#include <span>
#include <string>

namespace wheelfix::cuda {

std::optional<FatbinEntry> best_entry_for(std::span<const FatbinEntry> entries, std::uint32_t sm);
std::optional<std::size_t> best_entry_index(std::span<const FatbinEntry> entries, std::uint32_t sm);

std::string describe_entry(const FatbinEntry& entry);

}  // namespace wheelfix::cuda
