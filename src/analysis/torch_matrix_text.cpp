// Rendering the release matrix (torch_matrix_text.hpp has the contract).
#include "wheelfix/analysis/torch_matrix_text.hpp"

#include "wheelfix/util/table.hpp"
#include "wheelfix/util/text.hpp"

#include <fmt/format.h>

namespace wheelfix::analysis {

namespace {

std::string header(const MatrixColumn& column) {
    return public_version(column.torch_version);
}

std::string cell_text(const MatrixCell& cell) {
    if (cell.verdict == Verdict::no) return "NO " + std::to_string(cell.missing);
    if (cell.verdict == Verdict::runtime || cell.verdict == Verdict::not_admitted) return "NO " + cell.first_missing;
    return std::string(verdict_name(cell.verdict));
}

std::string coloured(const MatrixCell& cell, const Palette& colour) {
    const std::string text = cell_text(cell);
    if (cell.verdict == Verdict::ok) return colour.good(text);
    if (cell.verdict == Verdict::no || cell.verdict == Verdict::runtime || cell.verdict == Verdict::not_admitted)
        return colour.bad(text);
    return colour.warn(text);
}

// Column indexes as releases: runs of three or more adjacent columns as "first … last".
std::vector<std::string> runs_text(const TorchMatrix& matrix, const std::vector<std::size_t>& columns) {
    std::vector<std::string> out;
    for (const auto& [first, last] : adjacent_runs(columns)) {
        if (last - first >= 2) {
            out.push_back(header(matrix.columns[first]) + " … " + header(matrix.columns[last]));
        } else {
            for (std::size_t k = first; k <= last; ++k) out.push_back(header(matrix.columns[k]));
        }
    }
    return out;
}

std::string releases_text(const std::vector<std::string>& releases) { return join(releases, ", "); }

// "2.9.0 2.9.1: cu128 cp312" lines: the builds the columns come from, grouped.
std::string builds_text(const TorchMatrix& matrix) {
    std::vector<std::pair<std::string, std::vector<std::size_t>>> groups;
    for (const MatrixColumn& column : matrix.columns) {
        std::string build = column.build + (column.arch.empty() ? "" : " " + column.arch) +
                            (column.python_tag.empty() ? "" : " " + column.python_tag);
        if (!column.cuda_note.empty()) build += "; " + column.cuda_note;
        if (groups.empty() || groups.back().first != build) groups.push_back({build, {}});
        groups.back().second.push_back(static_cast<std::size_t>(&column - matrix.columns.data()));
    }
    std::string out;
    for (const auto& [build, columns] : groups)
        out += "  " + releases_text(runs_text(matrix, columns)) + ": " + build + "\n";
    return out;
}

}  // namespace

std::string render_matrix_text(const TorchMatrix& matrix, const Palette& colour) {
    std::vector<std::string> head{"member"};
    for (const MatrixColumn& column : matrix.columns) head.push_back(header(column));
    Table table(head);
    for (std::size_t row = 0; row < matrix.members.size(); ++row) {
        std::vector<std::string> cells{matrix.members[row]};
        for (const MatrixCell& cell : matrix.cells[row]) cells.push_back(coloured(cell, colour));
        table.add_row(cells);
    }
    std::vector<std::string> verdicts{"(wheel)"};
    for (std::size_t column = 0; column < matrix.columns.size(); ++column)
        verdicts.push_back(coloured(matrix.column_summary(column), colour));
    table.add_row(verdicts);
    std::string out = table.render_text();
    out += "builds:\n" + builds_text(matrix);
    for (const TorchMatrix::Miss& miss : matrix.misses()) {
        const std::string releases = releases_text(runs_text(matrix, miss.columns));
        if (miss.verdict == Verdict::not_covered) {
            out += fmt::format("{} on {}: {} (the atlas lacks it for this python tag)\n", miss.member, releases,
                               colour.warn("not covered: " + miss.what));
            continue;
        }
        if (miss.verdict == Verdict::runtime || miss.verdict == Verdict::not_admitted) {
            out += fmt::format("{} on {}: {} {}\n", miss.member, releases, colour.bad("NO"), miss.what);
            continue;
        }
        out += fmt::format("{} on {}: {} first missing {}\n", miss.member, releases, colour.bad("NO"), miss.what);
        if (!miss.near_miss.empty()) out += fmt::format("    near miss {}\n", miss.near_miss);
    }
    return out;
}

std::string render_matrix_markdown(const TorchMatrix& matrix, const std::string& input) {
    std::vector<std::string> head{"member"};
    for (const MatrixColumn& column : matrix.columns) head.push_back(header(column));
    Table table(head);
    for (std::size_t row = 0; row < matrix.members.size(); ++row) {
        std::vector<std::string> cells{"`" + matrix.members[row] + "`"};
        for (const MatrixCell& cell : matrix.cells[row])
            cells.push_back((cell.verdict == Verdict::ok ? "✅ " : "❌ ") + cell_text(cell));
        table.add_row(cells);
    }
    std::string out = "### `" + input + "` against torch releases\n\n" + table.render_markdown() + "\n";
    for (const TorchMatrix::Miss& miss : matrix.misses())
        out += "- `" + miss.member + "` on " + releases_text(runs_text(matrix, miss.columns)) + ": " +
               (miss.verdict == Verdict::runtime || miss.verdict == Verdict::not_admitted ? "NO, " + miss.what + "\n" :
               (miss.verdict == Verdict::not_covered ? "not covered: " : "NO, first missing `") + miss.what +
               (miss.verdict == Verdict::not_covered ? "" : "`") +
               (miss.near_miss.empty() ? "" : ", near miss `" + miss.near_miss + "`") + "\n");
    return out;
}

std::string torch_requirement_text(const TorchRequirement& requirement, const StableAbiUse& stable) {
    std::string out;
    if (stable.uses_stable())
        out += stable.stable_only()
                   ? fmt::format("stable ABI  only torch's stable C functions ({}, e.g. {}): the range runs from the "
                                 "newest release that introduced one to where the CUDA runtime changes\n",
                                 stable.stable.size(), stable.stable.front())
                   : fmt::format("stable ABI  {} stable C functions, but also {} C++ symbols: judged as C++\n",
                                 stable.stable.size(), stable.cpp.size());
    if (!requirement.stable_floor.empty())
        out += fmt::format("stable from torch {}: {} by torch's own stable ABI version list; never below it\n",
                           requirement.stable_floor, requirement.stable_floor_function);
    if (!requirement.built_for.empty())
        out += fmt::format("built for   torch {} ({}): a C++ extension is pinned to that minor; class layouts and "
                           "inline code change between minors without a symbol changing\n",
                           requirement.built_for, requirement.built_for_source);
    if (!requirement.author.empty()) out += "author      torch" + requirement.author + " (METADATA): never widened\n";
    if (!requirement.any) return out + "no pin      " + requirement.finding + "\n";
    out += fmt::format("requirement {}  (symbols resolve on {}", requirement.specifier,
                       requirement.lowest == requirement.highest ? requirement.lowest
                                                                 : requirement.lowest + " … " + requirement.highest);
    if (requirement.later_unproven) out += "; releases after " + requirement.highest + " are unproven";
    out += ")\n";
    if (requirement.symbol_level_only)
        out += "            --pin range: symbol-level only; symbols resolving does not prove the extension works "
               "on every release of it\n";
    if (!requirement.contiguous)
        out += "            not contiguous: older releases resolve too, separated by one that does not; pinned the "
               "newest contiguous range\n";
    return out;
}

}  // namespace wheelfix::analysis
