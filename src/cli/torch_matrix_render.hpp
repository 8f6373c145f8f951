// The release matrix of `check --torch-release` / `retag --torch auto`, rendered:
// text (an aligned table, rows the extension members, columns the releases, then
// one line per distinct miss naming the releases it holds for), GitHub Markdown,
// and the "matrix" object of the JSON documents (check/1 and retag/1 gain it).
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
#include "wheelfix/util/json.hpp"

#include <string>

namespace wheelfix::cli {

std::string render_matrix_text(const analysis::TorchMatrix& matrix, const Palette& colour);
std::string render_matrix_markdown(const analysis::TorchMatrix& matrix, const std::string& input);
void write_matrix_json(JsonWriter& json, const analysis::TorchMatrix& matrix);
std::string torch_requirement_text(const analysis::TorchRequirement& requirement, const analysis::StableAbiUse& stable);
void write_requirement_json(JsonWriter& json, const analysis::TorchRequirement& requirement,
                            const analysis::StableAbiUse& stable);

}  // namespace wheelfix::cli
