// Resolving an extension's undefined dynamic symbols against a symbol index the
// way ld.so does (check.hpp has the contract): the search scope is the extension's
// NEEDED libraries and theirs, breadth-first, each found by SONAME or file name;
// a reference binds to the first library in scope with a matching definition.
// Version matching follows glibc's check_match: a versioned reference takes the
// definition of that version, or an unversioned one; an unversioned reference
// takes any definition that is not a hidden (sym@VER) version.
#include "wheelfix/abi/check.hpp"

#include "near_miss.hpp"

#include "wheelfix/abi/demangle.hpp"

#include <elf.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>

namespace wheelfix::abi {

namespace {

struct Scope {
    std::vector<const LibraryExports*> libraries;  // breadth-first order
    std::vector<std::string> unknown;              // NEEDED names neither index holds
};

Scope search_scope(const std::vector<std::string>& needed, const SymbolIndex& index, const SymbolIndex* bundled) {
    Scope scope;
    std::deque<std::string> queue(needed.begin(), needed.end());
    std::set<std::string> seen;
    std::set<const LibraryExports*> added;
    while (!queue.empty()) {
        const std::string name = queue.front();
        queue.pop_front();
        if (!seen.insert(name).second) continue;
        const LibraryExports* library = index.find_library(name);
        if (library == nullptr && bundled != nullptr) library = bundled->find_library(name);
        if (library == nullptr) {
            scope.unknown.push_back(name);
            continue;
        }
        if (!added.insert(library).second) continue;
        scope.libraries.push_back(library);
        queue.insert(queue.end(), library->needed.begin(), library->needed.end());
    }
    return scope;
}

bool version_matches(const ImportedSymbol& reference, const ExportedSymbol& definition) {
    if (reference.version.empty()) return definition.version.empty() || definition.default_version;
    return definition.version == reference.version || definition.version.empty();
}

bool defined_in(const ImportedSymbol& reference, const LibraryExports& library) {
    for (const ExportedSymbol& definition : find_symbol(library, reference.name))
        if (version_matches(reference, definition)) return true;
    return false;
}

bool resolves(const ImportedSymbol& reference, const Scope& scope) {
    for (const LibraryExports* library : scope.libraries)
        if (defined_in(reference, *library)) return true;
    return false;
}

// The interpreter's C API: defined by the python that imports the extension.
bool is_python_api(std::string_view name) { return name.starts_with("Py") || name.starts_with("_Py"); }

bool versioned_outside(const ImportedSymbol& reference, const Scope& scope) {
    if (reference.version_file.empty()) return false;
    for (const LibraryExports* library : scope.libraries)
        if (library->soname == reference.version_file || library->file_name == reference.version_file) return false;
    return true;
}

// The near misses of each (name, version) already explained against the index at hand.
using Explained = std::map<std::pair<std::string, std::string>, std::vector<NearMiss>>;

Unresolved unresolved_entry(const ImportedSymbol& reference, const SymbolIndex& index, SignatureMemo& memo,
                            Explained& explained) {
    Unresolved entry;
    entry.name = reference.name;
    entry.demangled = memo.demangled(reference.name);
    entry.version = reference.version;
    entry.is_torch = is_torch_symbol(reference.name);
    if (!entry.is_torch) return entry;
    auto [found, fresh] = explained.try_emplace({reference.name, reference.version});
    if (fresh) found->second = detail::near_misses(reference.name, reference.version, index, memo);
    entry.near_misses = found->second;
    return entry;
}

ElfCheck check_one(std::string member, const ElfImports& imports, const SymbolIndex& index, const SymbolIndex* bundled,
                   const SystemLibrary& is_system, SignatureMemo& memo, Explained& explained) {
    ElfCheck result;
    result.member = std::move(member);
    const Scope scope = search_scope(imports.needed, index, bundled);
    for (const std::string& name : scope.unknown) {
        const bool uncovered = (index.partial && is_torch_library(name)) ||
                               std::any_of(index.not_covered.begin(), index.not_covered.end(),
                                           [&](const std::string& library) { return library == name; });
        if (uncovered) result.not_covered.push_back(name);
        else if (is_torch_library(name)) result.missing_libraries.push_back(name);
    }
    const auto system = [&](const std::string& name) { return is_system && is_system(name); };
    const bool outside_libraries = !scope.unknown.empty();
    const bool only_system_outside = std::all_of(scope.unknown.begin(), scope.unknown.end(), system);
    for (const ImportedSymbol& reference : imports.symbols) {
        const bool torch = is_torch_symbol(reference.name);
        if (resolves(reference, scope)) ++result.resolved;
        else if (versioned_outside(reference, scope)) ++(system(reference.version_file) ? result.system : result.elsewhere);
        else if (reference.weak) ++result.weak_missing;
        else if (!torch && is_python_api(reference.name)) ++result.elsewhere;
        else if (!torch && outside_libraries) ++(only_system_outside ? result.system : result.elsewhere);
        else if (!result.not_covered.empty()) ++result.uncovered_symbols;
        else result.unresolved.push_back(unresolved_entry(reference, index, memo, explained));
    }
    return result;
}

}  // namespace

bool is_torch_library(std::string_view file_name) {
    for (std::string_view prefix : {"libc10", "libtorch", "libcaffe2", "libshm"})
        if (file_name.starts_with(prefix)) return true;
    return false;
}

bool is_stable_abi_symbol(std::string_view name) {
    return !name.starts_with("_Z") && (name.starts_with("aoti_torch_") || name.starts_with("torch_"));
}

bool is_torch_symbol(std::string_view name) {
    if (is_stable_abi_symbol(name)) return true;
    if (name.starts_with("THP") && !name.starts_with("_Z")) return true;  // libtorch_python's C functions
    return is_torch_namespace(top_namespace(name));
}

ElfImports imports_of(const elf::ElfFile& elf) {
    ElfImports imports;
    for (std::string_view needed : elf.needed()) imports.needed.emplace_back(needed);
    for (const elf::Symbol& symbol : elf.dynamic_symbols()) {
        if (symbol.defined() || symbol.name.empty() || symbol.binding == STB_LOCAL) continue;
        imports.symbols.push_back({std::string(symbol.name), std::string(symbol.version),
                                   std::string(symbol.version_file), symbol.binding == STB_WEAK});
    }
    return imports;
}

SymbolSelection consulted_by(const std::vector<const ElfImports*>& imports) {
    std::set<std::string> names, tokens;
    for (const ElfImports* one : imports)
        for (const ImportedSymbol& reference : one->symbols) {
            if (!names.insert(reference.name).second || !is_torch_symbol(reference.name)) continue;
            // As unresolved_entry() asks near_misses(): by the token of the parsed signature.
            if (const std::optional<Signature> wanted = parse_signature(reference.name))
                if (std::optional<std::string> token = detail::candidate_token(*wanted)) tokens.insert(std::move(*token));
        }
    return {{names.begin(), names.end()}, {tokens.begin(), tokens.end()}};
}

const std::optional<Signature>& SignatureMemo::signature(const std::string& mangled) {
    auto found = signatures_.find(mangled);
    if (found == signatures_.end()) found = signatures_.emplace(mangled, parse_signature(mangled)).first;
    return found->second;
}

const std::string& SignatureMemo::demangled(const std::string& mangled) {
    auto found = demangled_.find(mangled);
    if (found == demangled_.end()) found = demangled_.emplace(mangled, demangle(mangled)).first;
    return found->second;
}

ElfCheck check_imports(std::string member, const ElfImports& imports, const SymbolIndex& index,
                       const SymbolIndex* bundled, const SystemLibrary& is_system, SignatureMemo* memo) {
    SignatureMemo own;
    Explained explained;
    return check_one(std::move(member), imports, index, bundled, is_system, memo != nullptr ? *memo : own, explained);
}

std::vector<ElfCheck> check_imports(const std::vector<MemberImports>& members, const SymbolIndex& index,
                                    const SymbolIndex* bundled, const SystemLibrary& is_system, SignatureMemo* memo) {
    SignatureMemo own;
    Explained explained;
    std::vector<ElfCheck> checks;
    for (const MemberImports& one : members)
        checks.push_back(
            check_one(one.member, *one.imports, index, bundled, is_system, memo != nullptr ? *memo : own, explained));
    return checks;
}

ElfCheck check_elf(std::string member, const elf::ElfFile& elf, const SymbolIndex& index) {
    return check_imports(std::move(member), imports_of(elf), index);
}

}  // namespace wheelfix::abi
