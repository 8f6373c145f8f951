// `wheelfix check`'s report (analysis/torch_check.hpp: per torch, the members'
// resolution and the misses grouped across members) as text for people; its JSON
// documents (check/1, check/2) are analysis/report_json.hpp's.
//
// Contract: render_check_text() prints, per torch, a table of the members' counts (all with
// -v, the ones with misses otherwise, none with -q), each miss with the members needing it and its near
// misses with their classification (and the known drift when the knowledge base
// has one), then the matrix "loads against: 2.9.0+cu130 yes, 2.10.0+cu130 NO (1 missing)".
// matrix_text() is that last line alone (retag --torch auto prints it).
// Several inputs (`check dist/*.whl`): render_checks_summary() is the closing
// summary of their texts (inputs without ELF shared objects count as loading and
// are also counted on their own).
#pragma once

#include "wheelfix/analysis/torch_releases.hpp"

#include "commands.hpp"
#include "style.hpp"

#include "wheelfix/analysis/torch_check.hpp"

#include <string>
#include <vector>

namespace wheelfix::cli {

using analysis::CheckReport;
using analysis::GroupedLibrary;
using analysis::GroupedSymbol;
using analysis::TorchResult;

std::string render_check_text(const CheckReport& report, const GlobalOptions& global);
std::string matrix_text(const CheckReport& report, const Palette& colour = Palette(false));
std::string render_checks_summary(const std::vector<CheckReport>& reports, std::size_t nothing_to_check,
                                  const GlobalOptions& global);
// The misses of every release of a matrix run, grouped over the releases that miss the
// same (every symbol with the members needing it, its near misses, forwardable drifts and
// known-drift notes, as render_check_text gives them for one torch).
std::string explain_releases_text(const analysis::ReleaseMatrix& run, const GlobalOptions& global);

}  // namespace wheelfix::cli
