// Finding and ranking near misses (near_miss.hpp has the contract).
#include "near_miss.hpp"

#include "wheelfix/abi/demangle.hpp"

#include <algorithm>
#include <functional>
#include <tuple>

namespace wheelfix::abi::detail {

namespace {

std::string library_label(const LibraryExports& library) {
    return library.soname.empty() ? library.file_name : library.soname;
}

bool is_identifier(std::string_view text) {
    if (text.empty()) return false;
    return std::all_of(text.begin(), text.end(), [](char c) {
        return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    });
}

// Same name, other version: ld.so does not bind it either.
void add_version_mismatches(const std::string& mangled, const std::string& version, const SymbolIndex& index,
                            SignatureMemo& memo, std::vector<NearMiss>& out) {
    for (const LibraryExports& library : index.libraries)
        for (const ExportedSymbol& definition : find_symbol(library, mangled)) {
            Compatibility compatibility;
            compatibility.reason = "not forwardable: exported as " + mangled +
                                   (definition.default_version ? "@@" : "@") + definition.version +
                                   (version.empty() ? ", needed unversioned" : ", needed @" + version);
            out.push_back({mangled, memo.demangled(mangled), library_label(library), compatibility});
        }
}

bool better(const NearMiss& a, const NearMiss& b) {
    return std::tuple(!a.compatibility.forwardable, a.compatibility.appended_zero_params, a.library, a.name) <
           std::tuple(!b.compatibility.forwardable, b.compatibility.appended_zero_params, b.library, b.name);
}

}  // namespace

std::string last_component(std::string_view qualified_name) {
    // Drop trailing template arguments, balancing the angle brackets.
    while (qualified_name.ends_with(">")) {
        int depth = 0;
        std::size_t i = qualified_name.size();
        while (i-- > 0) {
            if (qualified_name[i] == '>') ++depth;
            if (qualified_name[i] == '<' && --depth == 0) break;
        }
        if (i == static_cast<std::size_t>(-1)) break;
        qualified_name = qualified_name.substr(0, i);
    }
    const std::size_t colons = qualified_name.rfind("::");
    std::string_view last = colons == std::string_view::npos ? qualified_name : qualified_name.substr(colons + 2);
    if (last.starts_with("~")) last.remove_prefix(1);
    return std::string(last);
}

std::optional<std::string> candidate_token(const Signature& wanted) {
    const std::string token = last_component(wanted.qualified_name);
    if (!is_identifier(token)) return std::nullopt;
    return std::to_string(token.size()) + token;
}

std::vector<NearMiss> near_misses(const std::string& mangled, const std::string& version, const SymbolIndex& index,
                                  SignatureMemo& memo) {
    std::vector<NearMiss> out;
    add_version_mismatches(mangled, version, index, memo, out);
    const std::optional<Signature>& wanted = memo.signature(mangled);
    if (!wanted) return out;
    const std::optional<std::string> token = candidate_token(*wanted);
    if (!token) return out;
    const std::boyer_moore_horspool_searcher holds(token->begin(), token->end());
    for (const LibraryExports& library : index.libraries)
        for (const ExportedSymbol& definition : library.symbols) {
            const std::string& name = definition.name;
            if (name == mangled || std::search(name.begin(), name.end(), holds) == name.end()) continue;
            const std::optional<Signature>& candidate = memo.signature(definition.name);
            if (!candidate || candidate->qualified_name != wanted->qualified_name) continue;
            out.push_back({definition.name, memo.demangled(definition.name), library_label(library),
                           classify(*wanted, *candidate)});
        }
    std::sort(out.begin(), out.end(), better);
    // One line per export: a library that defines a name under two versions
    // (sym@V1 and sym@@V2) would otherwise print the same near miss twice.
    std::stable_sort(out.begin(), out.end(), [](const NearMiss& a, const NearMiss& b) {
        return std::tie(a.name, a.library) < std::tie(b.name, b.library);
    });
    out.erase(std::unique(out.begin(), out.end(),
                          [](const NearMiss& a, const NearMiss& b) { return a.name == b.name && a.library == b.library; }),
              out.end());
    std::stable_sort(out.begin(), out.end(), better);
    return out;
}

}  // namespace wheelfix::abi::detail
