// Will a wheel's extensions load against a given torch? Resolution the way ld.so
// does it, and an explanation of every miss.
//
// Contract: check_elf(name, elf, index) resolves every undefined dynamic symbol of
// one extension: through the NEEDED libraries found in the index by SONAME/file
// name (breadth-first, as ld.so's search scope), honouring symbol versions (a
// versioned reference needs that version; an unversioned one takes the default).
// Weak undefined symbols that do not resolve are not errors. What resolves nowhere
// in the index and is not torch's is counted apart by who may define it: `system`
// when that is a library `is_system` says is the system's (the platform's allowed
// libraries and the GPU driver: policy's classes, which the caller passes): a
// reference versioned against one, or an unversioned one when every NEEDED library
// outside the index is the system's; else `elsewhere` (versioned against, or possibly
// from, a library neither torch nor the system provides, such as libcudart.so.12, or
// the interpreter's Py* functions). Without `is_system` no library is the system's.
// For each unresolved torch symbol: its demangled name and the near misses the
// index exports — same qualified function name, different parameter list — each
// classified by signature.hpp's rules (forwardable and why, or not and why), best
// first: forwardable ones, then by name. An export with the very name but another
// version is listed as a near miss too ("not forwardable: exported as …").
//
// check_imports() does the same from an ElfImports, the owned copy of what
// resolution needs (imports_of()), so a caller can drop a member's bytes before
// checking it against several torches. `bundled` holds libraries that ship with the
// extension (other ELF members of the same wheel): they join the search scope when
// NEEDED names them. A NEEDED name found in neither is `missing` when it looks like
// a torch library (is_torch_library) and left to the system otherwise; an
// unversioned reference that resolves nowhere is unresolved unless some NEEDED
// library is outside the index (then counted as above). A NEEDED name the index
// lists as not covered, or a torch library a partial index (an index file) lacks,
// is `not_covered`, and the torch references that do not resolve are then counted
// as uncovered.
#pragma once

#include "wheelfix/abi/signature.hpp"
#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/elf/elf_file.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace wheelfix::abi {

struct NearMiss {
    std::string name;        // mangled export
    std::string demangled;
    std::string library;     // soname / file of the library exporting it
    Compatibility compatibility;
};

struct Unresolved {
    std::string name;        // mangled
    std::string demangled;
    std::string version;     // requested version, empty if none
    bool is_torch = false;   // in torch's namespaces (c10, at, torch, caffe2, c10d)
    std::vector<NearMiss> near_misses;  // best first
};

struct ElfCheck {
    std::string member;
    std::vector<std::string> missing_libraries;  // NEEDED torch libraries the index lacks
    // NEEDED libraries the index says it does not cover (SymbolIndex::not_covered): neither
    // missing nor resolved; the torch symbols left unresolved are counted, not listed.
    std::vector<std::string> not_covered;
    std::size_t uncovered_symbols = 0;
    std::size_t resolved = 0;
    std::size_t system = 0;                      // left to the system's libraries
    std::size_t elsewhere = 0;                   // left to other libraries outside the index, or the interpreter
    std::size_t weak_missing = 0;                // weak references nothing defines (not errors)
    std::vector<Unresolved> unresolved;          // torch and other non-system misses
};

struct ImportedSymbol {
    std::string name;
    std::string version;       // requested version, empty if none
    std::string version_file;  // the verneed file it is versioned against
    bool weak = false;
};

struct ElfImports {
    std::vector<std::string> needed;
    std::vector<ImportedSymbol> symbols;  // undefined dynamic symbols, in table order
};

ElfImports imports_of(const elf::ElfFile& elf);

// What explaining misses learns about names (parsed signatures, demangled forms), kept
// while one wheel is checked against many indexes (an atlas's releases), so each name is
// parsed once however many releases miss it or list it as a near miss. The ElfChecks are
// the same with or without one. Not shared between threads.
class SignatureMemo {
public:
    const std::optional<Signature>& signature(const std::string& mangled);
    const std::string& demangled(const std::string& mangled);

private:
    std::unordered_map<std::string, std::optional<Signature>> signatures_;
    std::unordered_map<std::string, std::string> demangled_;
};

// Every export check_imports() can look at when checking these imports: their names
// (resolution; the same name under another version) and the candidate token of each
// torch symbol's near misses. An index holding every library but only these exports
// gives check_imports() the very ElfCheck the whole index gives (Atlas::select).
SymbolSelection consulted_by(const std::vector<const ElfImports*>& imports);

using SystemLibrary = std::function<bool(std::string_view needed_name)>;
ElfCheck check_imports(std::string member, const ElfImports& imports, const SymbolIndex& index,
                       const SymbolIndex* bundled = nullptr, const SystemLibrary& is_system = {},
                       SignatureMemo* memo = nullptr);
// Several members against one index: check_imports() of each, in order, the near
// misses of a symbol several of them miss found once.
struct MemberImports {
    std::string member;
    const ElfImports* imports = nullptr;
};
std::vector<ElfCheck> check_imports(const std::vector<MemberImports>& members, const SymbolIndex& index,
                                    const SymbolIndex* bundled = nullptr, const SystemLibrary& is_system = {},
                                    SignatureMemo* memo = nullptr);
ElfCheck check_elf(std::string member, const elf::ElfFile& elf, const SymbolIndex& index);

// True for file names of torch's own libraries: libc10*, libtorch*, libcaffe2*, libshm*.
bool is_torch_library(std::string_view file_name);
// torch's stable C ABI: unmangled aoti_torch_* and torch_* functions.
bool is_stable_abi_symbol(std::string_view name);
// Every name torch defines for extensions: mangled C++ of torch's namespaces (c10,
// at, torch, caffe2, c10d), the stable C functions, libtorch_python's THP*
// functions. An unresolved one is always "missing", never "system".
bool is_torch_symbol(std::string_view name);

}  // namespace wheelfix::abi
