// The release matrix of `check --torch-release` / `retag --torch auto`, rendered:
// text (an aligned table, rows the extension members, columns the releases, then
// one line per distinct miss naming the releases it holds for) and GitHub Markdown.
// Its "matrix" and "requirement" JSON objects are analysis/report_json.hpp's.
//
// Contract: cells read `ok`, `NO n` (n = missing symbols and libraries) or
// `not covered`; column headers are the releases' public versions, their CUDA
// builds and python tags are listed under the table; the CUDA note of a column
// (the wheel's +cuXYZ differs from the entry's build) is printed beside the
// verdict. requirement_text() says what `--torch auto` derives, and that releases
// after the newest known one are unproven.
#pragma once

#include "style.hpp"

#include "wheelfix/analysis/torch_matrix.hpp"

#include <string>

namespace wheelfix::cli {

std::string render_matrix_text(const analysis::TorchMatrix& matrix, const Palette& colour);
std::string render_matrix_markdown(const analysis::TorchMatrix& matrix, const std::string& input);
std::string torch_requirement_text(const analysis::TorchRequirement& requirement, const analysis::StableAbiUse& stable);

}  // namespace wheelfix::cli
