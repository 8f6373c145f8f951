// What repair (and shim) will decide on the whole wheel, foreseen before the one
// pass, so that the members whose edits depend on it are edited, and a big one hashed
// and analysed, in that pass (plan.hpp, step 2) instead of being inflated again once
// the pass has decided.
//
// Why: the shim's file name carries a hash of its content, and its content is every
// torch function the wheel's extensions import and the torch lacks; a grafted
// library's name carries a hash of the file the whole wheel's NEEDED resolve to. Both
// are known for certain only after every member is read. Without them, those
// members' edits wait, and each is inflated once more for its splice: sgl-kernel
// 0.3.21 against torch 2.10.0 inflated 3.3 GB for a 1.6 GB payload.
//
// Contract: foresee(wheel, request) reads the wheel's library members (named like
// shared libraries, analysis::library_members), on the threads the budget spares:
// a big deflated one (kBoundedFrom: the pass will read it with bounded memory and
// speculate on it) with the reads its speculation makes (wheel/member_reader.hpp
// read_far_view); others as far as the loader's view needs (wheel/member_reader.hpp,
// what `check` reads). Of each it keeps its linkage (analysis::analyze_linking) and,
// with request.index, its ShimExamination. Then:
// - shim_links (with request.index): the members' examinations taken in archive
//   order by a ShimPlanner of its own, exactly as the pass takes them, give the shim
//   that planner would build (RUNPATH request.runpath); its links
//   (shim_wheel.hpp shim_links); nullopt when no member needs a shim;
// - grafts (with request.graft): plan_grafts on the members' linkage (no dpkg owner
//   asked, the copies' bytes dropped), for GraftPlan::links.
// Each part is nullopt, never an error, when anything on its way fails (an error in
// the input is the pass's to report, on what it reads whole); a member that cannot
// be read so is left out. Nothing here is trusted: an early edit made with these
// links stays only when the whole wheel gives the same (plan.hpp, step 4).
// WHEELFIX_TEST_NO_FORESIGHT=1 foresees nothing, so that tests can drive the paths
// that wait for the whole wheel (tests/e2e/test_repair_bounded.py).
#pragma once

#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/repair/graft.hpp"
#include "wheelfix/repair/relink.hpp"
#include "wheelfix/repair/shim_wheel.hpp"
#include "wheelfix/wheel/wheel.hpp"

#include <optional>
#include <string>

namespace wheelfix::repair {

struct ForesightRequest {
    const abi::SymbolIndex* index = nullptr;  // the torch: foresee the shim
    SymbolMap maps;
    std::string runpath = kShimRunpath;       // the shim's RUNPATH
    const GraftOptions* graft = nullptr;      // foresee the grafts
};

struct Foresight {
    std::optional<Links> shim_links;
    std::optional<GraftPlan> grafts;
};

Foresight foresee(const wheel::Wheel& wheel, const ForesightRequest& request);

// Whether a big member's graft links may wait for the whole wheel, so that foreseeing
// the grafts can save a second read: the wheel has a deflated library member of
// kBoundedFrom bytes or more and another library member it may NEED (early_links
// decides a member's links from its own search path unless it NEEDs a name a member
// of the wheel carries). Small members waiting are read again whole: cheap.
bool grafts_worth_foreseeing(const wheel::Wheel& wheel);

}  // namespace wheelfix::repair
