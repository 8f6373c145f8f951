// SM coverage: which fatbin entry (if any) lets a GPU of compute capability `sm`
// run a file's device code, and how to say so.
//
// The per-entry rule is cuda::entry_runs_on() (fatbin.hpp has it and its sources).
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
