// The torch matrix and the requirement derived from it (torch_matrix.hpp has the contract).
#include "wheelfix/analysis/torch_matrix.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/wheel/version.hpp"

#include <algorithm>
#include <optional>
#include <set>

namespace wheelfix::analysis {

namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    while (true) {
        const std::size_t at = text.find(separator);
        std::string_view part = text.substr(0, at);
        while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
        while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
        if (!part.empty()) parts.push_back(part);
        if (at == std::string_view::npos) break;
        text.remove_prefix(at + 1);
    }
    return parts;
}

wheel::Version release_version(const abi::AtlasRelease& release) {
    return wheel::Version::parse(release.torch_version.substr(0, release.torch_version.find('+')));
}

bool prefix_matches(const std::vector<std::uint64_t>& release, const std::vector<std::uint64_t>& prefix) {
    if (prefix.size() > release.size()) return false;
    return std::equal(prefix.begin(), prefix.end(), release.begin());
}

// One PEP 440 clause (">=2.6", "<2.10", "==2.9.*", "!=2.9.0", "~=2.6") against a release.
bool clause_matches(std::string_view clause, const wheel::Version& release) {
    std::size_t op_length = 0;
    while (op_length < clause.size() && std::string_view("<>=!~").find(clause[op_length]) != std::string_view::npos)
        ++op_length;
    const std::string_view op = clause.substr(0, op_length);
    std::string_view operand = clause.substr(op_length);
    while (!operand.empty() && operand.front() == ' ') operand.remove_prefix(1);
    const bool wildcard = operand.ends_with(".*");
    if (wildcard) operand.remove_suffix(2);
    auto version = wheel::Version::try_parse(operand);
    if (!version || (wildcard && op != "==" && op != "!="))
        throw InputError("--torch-release", "cannot read '" + std::string(clause) + "'");
    const wheel::Version bare = wheel::Version::parse(release.public_part());
    if (op == "==") return wildcard ? prefix_matches(bare.release(), version->release()) : bare == *version;
    if (op == "!=") return wildcard ? !prefix_matches(bare.release(), version->release()) : !(bare == *version);
    if (op == ">=") return bare >= *version;
    if (op == "<=") return bare <= *version;
    if (op == ">") return bare > *version;
    if (op == "<") return bare < *version;
    if (op == "~=") {
        std::vector<std::uint64_t> series = version->release();
        if (series.size() < 2) throw InputError("--torch-release", "'~=' needs MAJOR.MINOR: '" + std::string(clause) + "'");
        series.pop_back();
        return bare >= *version && prefix_matches(bare.release(), series);
    }
    throw InputError("--torch-release", "unknown operator in '" + std::string(clause) + "'");
}

std::string available_list(const std::vector<abi::AtlasRelease>& releases) {
    std::string out;
    std::set<std::string> seen;
    for (const abi::AtlasRelease& release : releases)
        if (seen.insert(release.torch_version).second) out += (out.empty() ? "" : ", ") + release.torch_version;
    return out.empty() ? "(none)" : out;
}

std::string first_release_text(const std::string& torch_version) {
    return torch_version.substr(0, torch_version.find('+'));
}

// "2.10.0" -> "2.10"; "2.9.1" stays.
std::string bound_text(const std::string& torch_version) {
    std::string text = first_release_text(torch_version);
    const auto version = wheel::Version::try_parse(text);
    if (version && version->release().size() == 3 && version->release()[2] == 0)
        return std::to_string(version->release()[0]) + "." + std::to_string(version->release()[1]);
    return text;
}

std::string next_minor(const std::string& torch_version) {
    const auto version = wheel::Version::try_parse(first_release_text(torch_version));
    if (!version || version->release().size() < 2) return {};
    return std::to_string(version->release()[0]) + "." + std::to_string(version->release()[1] + 1);
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
        const auto clauses = split(spec, ',');
        for (const abi::AtlasRelease& release : of_arch) {
            const wheel::Version version = release_version(release);
            if (std::all_of(clauses.begin(), clauses.end(),
                            [&](std::string_view clause) { return clause_matches(clause, version); }))
                selected.push_back(release);
        }
    } else {
        for (std::string_view wanted : split(spec, ',')) {
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

Verdict TorchMatrix::column_verdict(std::size_t column) const {
    Verdict worst = Verdict::ok;
    for (const auto& row : cells) {
        if (row[column].verdict == Verdict::no) return Verdict::no;
        if (row[column].verdict == Verdict::not_covered) worst = Verdict::not_covered;
    }
    return worst;
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
    return "wheel +" + std::string(wheel_local_cuda) + ", entry " + column + " (same C++ ABI across CUDA builds)";
}

TorchRequirement requirement_from(const TorchMatrix& matrix, bool open_upper) {
    TorchRequirement requirement;
    const std::size_t count = matrix.columns.size();
    // The newest run of columns that load.
    std::optional<std::size_t> run_end;
    for (std::size_t i = count; i-- > 0;)
        if (matrix.column_verdict(i) == Verdict::ok) {
            run_end = i;
            break;
        }
    if (!run_end) return requirement;
    std::size_t run_start = *run_end;
    while (run_start > 0 && matrix.column_verdict(run_start - 1) == Verdict::ok) --run_start;
    for (std::size_t i = 0; i < run_start; ++i)
        if (matrix.column_verdict(i) == Verdict::ok) requirement.contiguous = false;
    requirement.any = true;
    requirement.lowest = first_release_text(matrix.columns[run_start].torch_version);
    requirement.highest = first_release_text(matrix.columns[*run_end].torch_version);
    requirement.highest_column = *run_end;
    if (*run_end + 1 < count) {
        requirement.upper = bound_text(matrix.columns[*run_end + 1].torch_version);
    } else {
        requirement.later_unproven = true;
        if (!open_upper) requirement.upper = next_minor(matrix.columns[*run_end].torch_version);
    }
    requirement.specifier = "torch>=" + requirement.lowest + (requirement.upper.empty() ? "" : ",<" + requirement.upper);
    return requirement;
}

bool is_stable_abi_symbol(std::string_view name) {
    if (name.starts_with("_Z")) return false;
    return name.starts_with("aoti_torch_") || name.starts_with("torch_call_dispatcher") ||
           name.starts_with("torch_library_") || name.starts_with("torch_new_list_") ||
           name.starts_with("torch_list_") || name.starts_with("torch_get_") || name.starts_with("torch_set_") ||
           name.starts_with("torch_parse_") || name.starts_with("torch_stable_") || name.starts_with("torch_dispatcher_");
}

TorchMatrix quick_matrix(const abi::Atlas& atlas, const std::vector<TorchRangeInput>& members, std::string_view arch,
                         std::string_view python_tag) {
    TorchMatrix matrix;
    for (const TorchRangeInput& member : members)
        if (!member.torch_symbols.empty()) matrix.members.push_back(member.member);
    if (matrix.members.empty()) return matrix;
    std::vector<abi::AtlasRelease> releases;
    for (const abi::AtlasRelease& release : atlas.releases())
        if (release.arch == arch || release.arch.empty()) releases.push_back(release);
    matrix.cells.assign(matrix.members.size(), std::vector<MatrixCell>(releases.size()));
    for (const abi::AtlasRelease& release : releases)
        matrix.columns.push_back({release.torch_version, release.cuda_version, release.arch, std::string(python_tag), "", ""});
    // Every member's names in one pass over the atlas's symbols.
    std::vector<std::string> names;
    for (const TorchRangeInput& member : members) names.insert(names.end(), member.torch_symbols.begin(), member.torch_symbols.end());
    const std::vector<std::vector<std::uint32_t>> all_defining = atlas.nodes_defining(names);
    std::size_t row = 0;
    std::size_t first_name = 0;
    for (const TorchRangeInput& member : members) {
        if (member.torch_symbols.empty()) continue;
        const std::vector<std::vector<std::uint32_t>> defining(all_defining.begin() + static_cast<std::ptrdiff_t>(first_name),
                                                               all_defining.begin() + static_cast<std::ptrdiff_t>(first_name + member.torch_symbols.size()));
        first_name += member.torch_symbols.size();
        for (std::size_t column = 0; column < releases.size(); ++column) {
            std::vector<std::string> not_covered;
            const auto reached = atlas.reachable_nodes(releases[column], python_tag, member.needed, not_covered);
            MatrixCell& cell = matrix.cells[row][column];
            for (std::size_t i = 0; i < defining.size(); ++i) {
                const bool found = std::any_of(defining[i].begin(), defining[i].end(), [&](std::uint32_t node) {
                    return std::find(reached.begin(), reached.end(), node) != reached.end();
                });
                if (found) continue;
                if (cell.missing++ == 0) cell.first_missing = member.torch_symbols[i];
            }
            if (!not_covered.empty()) cell.verdict = Verdict::not_covered;  // what is missing may be in it
            else if (cell.missing > 0) cell.verdict = Verdict::no;
            cell.not_covered = not_covered;
        }
        ++row;
    }
    return matrix;
}

StableAbiUse stable_abi_use(const std::vector<const abi::ElfImports*>& imports) {
    std::set<std::string> stable;
    std::set<std::string> cpp;
    for (const abi::ElfImports* elf : imports) {
        const bool links_torch = std::any_of(elf->needed.begin(), elf->needed.end(),
                                             [](const std::string& name) { return abi::is_torch_library(name); });
        if (!links_torch) continue;
        for (const abi::ImportedSymbol& symbol : elf->symbols) {
            if (is_stable_abi_symbol(symbol.name)) stable.insert(symbol.name);
            else if (symbol.name.starts_with("_ZN3c10") || symbol.name.starts_with("_ZN2at") ||
                     symbol.name.starts_with("_ZN5torch") || symbol.name.starts_with("_ZNK3c10") ||
                     symbol.name.starts_with("_ZNK2at") || symbol.name.starts_with("_ZNK5torch") ||
                     symbol.name.starts_with("_ZN6caffe2") || symbol.name.starts_with("_ZNK6caffe2"))
                cpp.insert(symbol.name);
        }
    }
    return {{stable.begin(), stable.end()}, {cpp.begin(), cpp.end()}};
}

}  // namespace wheelfix::analysis
