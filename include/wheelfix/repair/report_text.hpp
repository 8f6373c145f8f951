// The writers' records (variant.hpp's VariantOutcome, repair.hpp's RepairReport,
// retag.hpp's RetagResult, shim_planner.hpp's ShimResult) as text for people;
// their JSON documents are report_json.hpp's. One module per output format of one
// record: this is the text.
//
// Contract: pure functions, the same record giving the same lines; nothing is
// decided or printed here.
#pragma once

#include "wheelfix/repair/repair.hpp"
#include "wheelfix/repair/retag.hpp"
#include "wheelfix/repair/shim_planner.hpp"
#include "wheelfix/repair/variant.hpp"

#include <string>
#include <vector>

namespace wheelfix::repair {

// The variant a writer (repair, retag, shim) labelled its output as: "variant 'L'
// (variant.json schema S)" and a line per property, indented.
std::vector<std::string> variant_lines(const VariantOutcome& variant);

// `repair`'s one-screen summary of a wheel, section by section, one line each entry:
// what was wrong (empty when nothing was found), what was done (with `verbose` each
// graft's and relink's changes below it), what proves it (the members that load, the
// ones not proven and why), what is left (findings, members that do not load, stubs
// and symbols not shimmed, each demangled name once), and the closing verdict
// ("wrote NAME", "would write NAME (dry run)", not written or removed again, and why).
std::vector<std::string> wrong_lines(const RepairReport& report);
std::vector<std::string> done_lines(const RepairReport& report, bool verbose);
std::vector<std::string> load_lines(const RepairReport& report);
std::vector<std::string> left_lines(const RepairReport& report);
std::string repair_verdict(const RepairReport& report, const RepairOptions& options);

// `retag`'s text after its matrix: the file name before -> after, then one line each for
// what changed (version, dist-info, each torch pin, tags, the platform tags kept
// unchecked, the variant), and "wrote NAME" or the plan and "would write NAME".
std::string retag_text(const RetagResult& result, const RetagOptions& options);
// `shim`'s text: the shim written (or that nothing needed one), a line per symbol
// forwarded or stubbed (with `verbose` the members needing it and why), the symbols
// not shimmed, missing torch libraries, each member's changes, the pin, the variant,
// "wrote NAME" (not with `quiet`) or the plan, and "not fully repaired: ..." when stubs,
// unshimmed symbols or missing libraries are left.
std::string shim_text(const ShimResult& result, bool verbose, bool quiet);

}  // namespace wheelfix::repair
