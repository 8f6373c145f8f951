// `wheelfix check`'s report (torch_check.hpp: per torch, the members' resolution and
// the misses grouped across members) as text for people; its JSON documents
// (check/1, check/2) are report_json.hpp's, its JUnit document check_junit.hpp's.
// One module per output format of one record: this is the text.
//
// Contract: render_checks_text() is a whole CheckRun against torches: per input
// (under its name when there are several; one without ELF shared objects said to
// have nothing to check), per torch, a table of the members' counts (all with
// Detail::verbose, the ones with misses with Detail::normal, none with
// Detail::quiet), each miss with the members needing it and its near misses with
// their classification (and the known drift when the knowledge base has one), then
// the line "symbols resolve against: 2.9.0+cu130 yes, 2.10.0+cu130 NO (1 missing)";
// several inputs end with a summary (those without ELF shared objects count as
// loading, and on their own too). Pure functions: nothing is decided or printed
// here; the CLI chooses the detail and whether `colour` is enabled.
#pragma once

#include "wheelfix/analysis/torch_check.hpp"
#include "wheelfix/analysis/torch_releases.hpp"
#include "wheelfix/util/palette.hpp"

#include <string>
#include <vector>

namespace wheelfix::analysis {

// How much the text says: -q, the default, -v (-v wins over -q: every member's row).
enum class Detail { quiet, normal, verbose };

std::string render_checks_text(const CheckRun& run, Detail detail, const Palette& colour);
// The misses of every release of a matrix run, grouped over the releases that miss the
// same (every symbol with the members needing it, its near misses, forwardable drifts and
// known-drift notes, as render_checks_text gives them for one torch).
std::string explain_releases_text(const ReleaseMatrix& run, Detail detail, const Palette& colour);

}  // namespace wheelfix::analysis
