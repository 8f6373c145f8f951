// Will a wheel's extensions load against a given torch? Resolution the way ld.so
// does it, and an explanation of every miss.
//
// Contract: check_elf(name, elf, index) resolves every undefined dynamic symbol of
// one extension: through the NEEDED libraries found in the index by SONAME/file
// name (breadth-first, as ld.so's search scope), honouring symbol versions (a
// versioned reference needs that version; an unversioned one takes the default).
// Weak undefined symbols that do not resolve are not errors. References versioned
// against system libraries (libc, libstdc++, libgcc_s, libm, CUDA libraries not in
// the index) are counted apart as `system`: they are the system's business.
// For each unresolved torch symbol: its demangled name and the near misses the
// index exports — same qualified function name, different parameter list — each
// classified by signature.hpp's rules (forwardable and why, or not and why).
#pragma once

#include "wheelfix/abi/signature.hpp"
#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/elf/elf_file.hpp"

#include <string>
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
    std::size_t resolved = 0;
    std::size_t system = 0;                      // left to the system's libraries
    std::vector<Unresolved> unresolved;          // torch and other non-system misses
};

ElfCheck check_elf(std::string member, const elf::ElfFile& elf, const SymbolIndex& index);

}  // namespace wheelfix::abi
