// The release matrix of `check --torch-release` / `retag --torch auto`, rendered:
// text (an aligned table, rows the extension members, columns the releases, then
// one line per distinct miss naming the releases it holds for) and GitHub Markdown.
// Its "matrix" and "requirement" JSON objects are analysis/report_json.hpp's.
//
// Contract: cells read `ok`, `NO n` (n = missing symbols and libraries) or
// `not covered`; column headers are the releases' public versions, their CUDA
// builds and python tags are listed under the table; the CUDA note of a column
// (the wheel's +cuXYZ differs from the entry's build) is printed beside the
// verdict. torch_requirement_text() says what `--torch auto` derives, and that releases
// after the newest known one are unproven. Pure functions: nothing is decided or
// printed here; the CLI chooses whether `colour` is enabled.
#pragma once

#include "wheelfix/analysis/torch_matrix.hpp"
#include "wheelfix/util/palette.hpp"

#include <string>

namespace wheelfix::analysis {

std::string render_matrix_text(const TorchMatrix& matrix, const Palette& colour);
std::string render_matrix_markdown(const TorchMatrix& matrix, const std::string& input);
std::string torch_requirement_text(const TorchRequirement& requirement, const StableAbiUse& stable);

}  // namespace wheelfix::analysis
