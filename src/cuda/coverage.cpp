// best_entry_for: choose the entry a GPU would run, preferring real code to JIT.
#include "wheelfix/cuda/coverage.hpp"

namespace wheelfix::cuda {

namespace {

// Lower rank is preferred: exact cubin, compatible cubin, PTX.
int rank(const FatbinEntry& entry, std::uint32_t sm) {
    if (entry.kind == EntryKind::cubin) return entry.sm == sm ? 0 : 1;
    return 2;
}

}  // namespace

std::optional<std::size_t> best_entry_index(std::span<const FatbinEntry> entries, std::uint32_t sm) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& entry = entries[i];
        if (!entry_runs_on(entry, sm)) continue;
        if (!best) {
            best = i;
            continue;
        }
        int mine = rank(entry, sm), theirs = rank(entries[*best], sm);
        if (mine < theirs || (mine == theirs && mine > 0 && entry.sm > entries[*best].sm)) best = i;
    }
    return best;
}

std::optional<FatbinEntry> best_entry_for(std::span<const FatbinEntry> entries, std::uint32_t sm) {
    auto index = best_entry_index(entries, sm);
    if (!index) return std::nullopt;
    return entries[*index];
}

std::string describe_entry(const FatbinEntry& entry) {
    if (entry.kind == EntryKind::ptx) return "PTX " + entry.arch_name() + " (JIT)";
    return std::string(entry.kind_name()) + " " + entry.arch_name();
}

}  // namespace wheelfix::cuda
