// The shim repair will make, foreseen before its one pass, so that the members that
// need it are edited, and a big one hashed and analysed, in that pass (plan.hpp,
// step 2) instead of being inflated again once the pass has named the shim.
//
// Why: the shim's file name carries a hash of its content, and its content is every
// torch function the wheel's extensions import and the torch lacks, known for
// certain only after every member is read. Without the name, those members' edits
// wait, and each is inflated once more for its splice: sgl-kernel 0.3.21 against
// torch 2.10.0 inflated 3.3 GB for a 1.6 GB payload.
//
// Contract: foresee_shim_links(wheel, index, maps, runpath) reads the wheel's
// library members as far as the loader's view of each needs
// (analysis/loader_view.hpp: what `check` reads, 64 MB of sgl-kernel's 1.6 GB, on
// the threads the budget spares), hands each, in archive order, to a ShimPlanner of
// its own exactly as repair hands its members to its one during the pass, and
// returns the links that shim would give an extension (shim_link_options: its
// SONAME as NEEDED, "{root}/<dist>.libs" on the search path). nullopt when no
// member needs a shim, and when anything on the way fails: an error in the input
// is the pass's to report, on what it reads whole. Nothing here is trusted: repair
// edits members early with these links and compares them with the shim the pass
// decides; a member edited with other links is planned again (and read again).
#pragma once

#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/repair/relink.hpp"
#include "wheelfix/repair/shim_wheel.hpp"
#include "wheelfix/wheel/wheel.hpp"

#include <optional>
#include <string>

namespace wheelfix::repair {

std::optional<RelinkOptions> foresee_shim_links(const wheel::Wheel& wheel, const abi::SymbolIndex& index,
                                                const SymbolMap& maps, const std::string& runpath);

}  // namespace wheelfix::repair
