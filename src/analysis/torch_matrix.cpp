// The torch matrix and the requirement derived from it (torch_matrix.hpp has the contract).
#include "wheelfix/analysis/torch_matrix.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/text.hpp"
#include "wheelfix/wheel/version.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

namespace wheelfix::analysis {

namespace {

wheel::Version release_version(const abi::AtlasRelease& release) {
    return wheel::Version::parse(public_version(release.torch_version));
}

bool prefix_matches(const std::vector<std::uint64_t>& release, const std::vector<std::uint64_t>& prefix) {
    if (prefix.size() > release.size()) return false;
    return std::equal(prefix.begin(), prefix.end(), release.begin());
}

std::string available_list(const std::vector<abi::AtlasRelease>& releases) {
    std::string out;
    std::set<std::string> seen;
    for (const abi::AtlasRelease& release : releases)
        if (seen.insert(release.torch_version).second) out += (out.empty() ? "" : ", ") + release.torch_version;
    return out.empty() ? "(none)" : out;
}

}  // namespace

std::vector<abi::AtlasRelease> select_releases(const std::vector<abi::AtlasRelease>& available, std::string_view spec,
                                               std::string_view arch) {
    std::vector<abi::AtlasRelease> of_arch;
    for (const abi::AtlasRelease& release : available)
        if (arch.empty() || release.arch.empty() || release.arch == arch) of_arch.push_back(release);
    if (of_arch.empty())
        throw InputError("--torch-release", "the atlas has no release for " + std::string(arch.empty() ? "any arch" : arch) +
                                                " (it has: " + available_list(available) + ")");
    std::vector<abi::AtlasRelease> selected;
    const bool specifier = spec.find_first_of("<>=!~") != std::string_view::npos;
    if (spec == "all") {
        selected = of_arch;
    } else if (specifier) {
        const auto set = wheel::SpecifierSet::try_parse(spec);
        if (!set) throw InputError("--torch-release", "cannot read '" + std::string(spec) + "' as a PEP 440 specifier");
        for (const abi::AtlasRelease& release : of_arch)
            if (set->contains(release_version(release))) selected.push_back(release);
    } else {
        for (std::string wanted : split_nonempty(spec, ',')) {
            wanted.erase(0, wanted.find_first_not_of(' '));
            wanted.erase(wanted.find_last_not_of(' ') + 1);
            if (wanted.empty()) continue;
            const auto version = wheel::Version::try_parse(wanted);
            if (!version) throw InputError("--torch-release", "'" + std::string(wanted) + "' is not a torch version");
            bool found = false;
            for (const abi::AtlasRelease& release : of_arch) {
                const bool exact = release.torch_version == wanted;
                if (exact || prefix_matches(release_version(release).release(), version->release())) {
                    if (std::none_of(selected.begin(), selected.end(), [&](const abi::AtlasRelease& r) {
                            return r.torch_version == release.torch_version && r.arch == release.arch;
                        }))
                        selected.push_back(release);
                    found = true;
                }
            }
            if (!found)
                throw InputError("--torch-release", "torch " + std::string(wanted) + " is not in the atlas (it has: " +
                                                        available_list(of_arch) + ")");
        }
        std::sort(selected.begin(), selected.end(), [](const abi::AtlasRelease& a, const abi::AtlasRelease& b) {
            return abi::torch_version_less(a.torch_version, b.torch_version);
        });
    }
    if (selected.empty())
        throw InputError("--torch-release", "no release of the atlas matches '" + std::string(spec) +
                                                "' (it has: " + available_list(of_arch) + ")");
    return selected;
}

std::string_view verdict_name(Verdict verdict) {
    switch (verdict) {
    case Verdict::ok: return "ok";
    case Verdict::no: return "NO";
    case Verdict::runtime: return "runtime";
    case Verdict::not_admitted: return "not admitted";
    case Verdict::not_covered: return "not covered";
    }
    return "?";
}

MatrixCell cell_of(const abi::ElfCheck& check) {
    MatrixCell cell;
    cell.missing = check.unresolved.size() + check.missing_libraries.size();
    cell.not_covered = check.not_covered;
    if (cell.missing > 0) {
        cell.verdict = Verdict::no;
        if (!check.unresolved.empty()) {
            const abi::Unresolved& first = check.unresolved.front();
            cell.first_missing = first.demangled.empty() ? first.name : first.demangled;
            if (!first.near_misses.empty())
                cell.near_miss = first.near_misses.front().demangled.empty() ? first.near_misses.front().name
                                                                             : first.near_misses.front().demangled;
        } else {
            cell.first_missing = check.missing_libraries.front();
        }
    } else if (!check.not_covered.empty()) {
        cell.verdict = Verdict::not_covered;
        cell.first_missing = check.not_covered.front();
    }
    return cell;
}

TorchMatrix build_matrix(std::vector<MatrixColumn> columns, const std::vector<std::vector<abi::ElfCheck>>& checks) {
    TorchMatrix matrix;
    matrix.columns = std::move(columns);
    if (checks.empty()) return matrix;
    for (const abi::ElfCheck& check : checks.front()) matrix.members.push_back(check.member);
    matrix.cells.assign(matrix.members.size(), std::vector<MatrixCell>(checks.size()));
    for (std::size_t column = 0; column < checks.size(); ++column)
        for (std::size_t row = 0; row < checks[column].size() && row < matrix.members.size(); ++row)
            matrix.cells[row][column] = cell_of(checks[column][row]);
    return matrix;
}

std::string public_version(std::string_view torch_version) {
    return std::string(torch_version.substr(0, torch_version.find('+')));
}

Verdict TorchMatrix::column_verdict(std::size_t column) const {
    Verdict worst = Verdict::ok;
    for (const auto& row : cells) {
        if (row[column].verdict == Verdict::no) return Verdict::no;
        if (row[column].verdict == Verdict::runtime) worst = Verdict::runtime;
        else if (row[column].verdict == Verdict::not_admitted && worst != Verdict::runtime) worst = Verdict::not_admitted;
        else if (row[column].verdict == Verdict::not_covered && worst == Verdict::ok) worst = Verdict::not_covered;
    }
    return worst;
}

MatrixCell TorchMatrix::column_summary(std::size_t column) const {
    MatrixCell summary;
    summary.verdict = column_verdict(column);
    if (column < wheel_missing.size()) summary.missing = wheel_missing[column];
    else
        for (const auto& row : cells) summary.missing += row[column].missing;
    if (summary.verdict == Verdict::runtime || summary.verdict == Verdict::not_admitted)
        for (const auto& row : cells)
            if (row[column].verdict == summary.verdict) summary.first_missing = row[column].first_missing;
    return summary;
}

std::vector<TorchMatrix::Miss> TorchMatrix::misses() const {
    std::vector<Miss> found;
    for (std::size_t row = 0; row < members.size(); ++row)
        for (std::size_t column = 0; column < columns.size(); ++column) {
            const MatrixCell& cell = cells[row][column];
            if (cell.verdict == Verdict::ok) continue;
            Miss miss{members[row], cell.verdict,
                      cell.verdict == Verdict::runtime || cell.verdict == Verdict::not_admitted ? cell.runtime_note
                                                                                                : cell.first_missing,
                      cell.near_miss, {}};
            auto same = std::find_if(found.begin(), found.end(), [&](const Miss& other) {
                return std::tie(other.member, other.verdict, other.what, other.near_miss) ==
                       std::tie(miss.member, miss.verdict, miss.what, miss.near_miss);
            });
            if (same == found.end()) same = found.insert(found.end(), std::move(miss));
            same->columns.push_back(column);
        }
    return found;
}

std::vector<std::pair<std::size_t, std::size_t>> adjacent_runs(const std::vector<std::size_t>& columns) {
    std::vector<std::pair<std::size_t, std::size_t>> runs;
    for (std::size_t i = 0; i < columns.size();) {
        std::size_t j = i;
        while (j + 1 < columns.size() && columns[j + 1] == columns[j] + 1) ++j;
        runs.emplace_back(columns[i], columns[j]);
        i = j + 1;
    }
    return runs;
}

bool TorchMatrix::loads_everywhere() const {
    for (std::size_t column = 0; column < columns.size(); ++column)
        if (column_verdict(column) != Verdict::ok) return false;
    return true;
}

std::string cuda_note(std::string_view wheel_local_cuda, std::string_view column_cuda_version) {
    if (wheel_local_cuda.empty() || column_cuda_version.empty()) return {};
    std::string column = "cu";
    for (char c : column_cuda_version)
        if (c != '.') column += c;
    if (column == wheel_local_cuda) return {};
    return "wheel +" + std::string(wheel_local_cuda) + ": verdict from the " + column +
           " build; builds of one release can export different symbols";
}

bool links_torch(const abi::ElfImports& imports) {
    return std::any_of(imports.needed.begin(), imports.needed.end(),
                       [](const std::string& name) { return abi::is_torch_library(name); });
}

StableAbiUse stable_abi_use(const std::vector<const abi::ElfImports*>& imports) {
    std::set<std::string> stable;
    std::set<std::string> cpp;
    for (const abi::ElfImports* elf : imports) {
        if (!links_torch(*elf)) continue;
        for (const abi::ImportedSymbol& symbol : elf->symbols) {
            if (abi::is_stable_abi_symbol(symbol.name)) stable.insert(symbol.name);
            else if (abi::is_torch_symbol(symbol.name)) cpp.insert(symbol.name);
        }
    }
    return {{stable.begin(), stable.end()}, {cpp.begin(), cpp.end()}};
}

}  // namespace wheelfix::analysis
