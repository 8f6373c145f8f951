// Loading a `--torch PATH` (or `index PATH`) for the commands: a torch directory,
// a torch wheel or an index file (analysis::load_torch). For a wheel, -v reports on stderr what was
// inflated and what was kept: one summary line, then one line per library member.
#pragma once

#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/analysis/torch_check.hpp"

#include <string>

namespace wheelfix::cli {

abi::SymbolIndex load_torch(const std::string& path, const abi::IndexOptions& options, bool verbose);
// load_torch as the analysis layer's loader (analysis::check_releases, check_torches).
analysis::TorchLoader torch_loader(bool verbose);
// Each of index.notes on stderr as "wheelfix: note: ..." (what the loader skipped).
void print_notes(const abi::SymbolIndex& index);

}  // namespace wheelfix::cli
