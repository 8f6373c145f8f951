// The check pipeline (torch_check.hpp has the contract): targets read once, each
// torch loaded as far as the targets' NEEDED closure reaches, misses grouped.
#include "wheelfix/analysis/torch_check.hpp"

#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/policy/library_classes.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/text.hpp"
#include "wheelfix/wheel/member_reader.hpp"
#include "wheelfix/zip/archive.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace wheelfix::analysis {

namespace {

void group_unresolved(TorchResult& result) {
    std::map<std::pair<std::string, std::string>, GroupedSymbol> groups;
    for (const abi::ElfCheck& check : result.members)
        for (const abi::Unresolved& unresolved : check.unresolved) {
            auto [it, fresh] = groups.try_emplace({unresolved.name, unresolved.version}, GroupedSymbol{unresolved, {}});
            it->second.needed_by.push_back(check.member);
        }
    for (auto& [key, group] : groups) result.unresolved.push_back(std::move(group));
    std::sort(result.unresolved.begin(), result.unresolved.end(), [](const GroupedSymbol& a, const GroupedSymbol& b) {
        return std::tie(a.symbol.demangled, a.symbol.name) < std::tie(b.symbol.demangled, b.symbol.name);
    });
}

void group_libraries(TorchResult& result) {
    std::map<std::string, std::vector<std::string>> groups;
    for (const abi::ElfCheck& check : result.members)
        for (const std::string& name : check.missing_libraries) groups[name].push_back(check.member);
    for (auto& [name, members] : groups) result.missing_libraries.push_back({name, std::move(members)});
    std::map<std::string, std::vector<std::string>> uncovered;
    for (const abi::ElfCheck& check : result.members)
        for (const std::string& name : check.not_covered) uncovered[name].push_back(check.member);
    for (auto& [name, members] : uncovered) result.not_covered.push_back({name, std::move(members)});
}

TorchResult build_torch_result(const abi::SymbolIndex& index, std::vector<abi::ElfCheck> members) {
    TorchResult result;
    result.source = index.source;
    result.label = index.label();
    result.torch_version = index.torch_version;
    result.cuda_version = index.cuda_version;
    result.partial = index.partial;
    result.members = std::move(members);
    group_unresolved(result);
    group_libraries(result);
    return result;
}

// The system's libraries, for abi::check_imports: the platform's allowed libraries
// (either libc family) and the GPU driver, by policy's library classes.
bool is_system_library(std::string_view needed) {
    for (const bool musl : {false, true}) {
        const policy::NamedClass named = policy::classify_name(policy::library_classes(), needed, musl).named;
        if (named == policy::NamedClass::system || named == policy::NamedClass::driver) return true;
    }
    return false;
}

void add_target(Targets& targets, const std::string& member, const elf::ElfFile& elf) {
    if (!elf.has_dynamic()) return;
    targets.elves.push_back({member, abi::imports_of(elf), analyze_search(member, elf, std::nullopt)});
    targets.bundled.libraries.push_back(abi::exports_of(base_name(member), elf));
}

// The library members, each read as far as its loader's view needs
// (wheel/member_reader.hpp) on the threads the budget spares, each into its own Targets;
// joined in member order, so the result is the serial one whatever the budget.
Targets read_wheel_targets(const std::string& path) {
    const zip::Archive archive = zip::Archive::open(path);
    const auto libraries = library_members(archive);
    std::vector<Targets> found(libraries.size());
    wheel::read_loader_views(archive, libraries, [&](std::size_t i, wheel::MemberImage& view) {
        if (!view.is_elf()) return;
        try {
            add_target(found[i], libraries[i]->name, view.parse());  // imports and exports are copies
        } catch (const elf::ElfError& error) {
            throw InputError(path, libraries[i]->name + ": invalid ELF: " + error.what());
        }
    });
    Targets targets;
    for (Targets& one : found) {
        for (auto& target : one.elves) targets.elves.push_back(std::move(target));
        for (auto& library : one.bundled.libraries) targets.bundled.libraries.push_back(std::move(library));
    }
    return targets;
}

Targets read_elf_target(const std::string& path) {
    const MappedFile mapped(path);
    const auto bytes = mapped.bytes();
    if (!elf::is_elf(bytes)) throw InputError(path, "not a wheel and not an ELF file");
    Targets targets;
    try {
        add_target(targets, path, elf::ElfFile::parse(bytes));
    } catch (const elf::ElfError& error) {
        throw InputError(path, std::string("invalid ELF: ") + error.what());
    }
    if (targets.elves.empty()) throw InputError(path, "has no dynamic section: nothing to resolve");
    return targets;
}

}  // namespace

Targets read_targets(const std::string& path, bool refuse_empty) {
    Targets targets = wheelfix::starts_like_zip(path) ? read_wheel_targets(path) : read_elf_target(path);
    if (refuse_empty && targets.elves.empty()) throw InputError(path, "holds no ELF shared objects: nothing to check");
    return targets;
}

std::vector<std::string> needed_roots(const Targets& targets) {
    std::set<std::string> names;
    for (const Target& target : targets.elves) names.insert(target.imports.needed.begin(), target.imports.needed.end());
    return {names.begin(), names.end()};
}

std::vector<std::string> needed_roots(const std::vector<Targets>& inputs) {
    std::set<std::string> names;
    for (const Targets& targets : inputs)
        for (std::string& root : needed_roots(targets)) names.insert(std::move(root));
    return {names.begin(), names.end()};
}

std::vector<std::pair<std::size_t, std::size_t>> CheckReport::same_miss_runs() const {
    auto key = [](const TorchResult& torch) {
        std::string text;
        for (const GroupedLibrary& library : torch.missing_libraries) text += "L" + library.name + "\n";
        for (const GroupedSymbol& group : torch.unresolved) text += group.symbol.name + "@" + group.symbol.version + "\n";
        return text + "A" + torch.not_admitted;
    };
    std::vector<std::pair<std::size_t, std::size_t>> runs;
    for (std::size_t i = 0; i < torches.size();) {
        std::size_t j = i;
        while (j + 1 < torches.size() && key(torches[j + 1]) == key(torches[i])) ++j;
        runs.emplace_back(i, j);
        i = j + 1;
    }
    return runs;
}

std::string CheckReport::first_resolving(std::size_t from, const std::string& symbol) const {
    for (std::size_t k = from + 1; k < torches.size(); ++k) {
        const auto& unresolved = torches[k].unresolved;
        if (std::none_of(unresolved.begin(), unresolved.end(),
                         [&](const GroupedSymbol& other) { return other.symbol.name == symbol; }))
            return torches[k].label;
    }
    return {};
}

std::string TorchResult::uncovered_reason(const std::string& library) const {
    return partial ? "the index is partial: no " + library : "the index does not cover it";
}

TorchResult check_against(const Targets& targets, const abi::SymbolIndex& index, abi::SignatureMemo* memo) {
    std::vector<abi::MemberImports> members;
    for (const Target& target : targets.elves) members.push_back({target.member, &target.imports});
    return build_torch_result(index, abi::check_imports(members, index, &targets.bundled, is_system_library, memo));
}

abi::SymbolIndex load_torch(const std::string& path, const abi::IndexOptions& options, abi::WheelReadStats* stats) {
    if (!wheelfix::starts_like_zip(path)) return abi::load_index(path, options);
    return abi::load_index_from_wheel(path, options, stats);
}

bool CheckReport::loads_everywhere() const {
    return std::all_of(torches.begin(), torches.end(), [](const TorchResult& torch) { return torch.loads(); });
}
}  // namespace wheelfix::analysis
