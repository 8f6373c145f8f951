// What `check` resolves: the extensions of a wheel (or one ELF file), each reduced
// to its imports, and the wheel's own libraries as a search scope. Shared by
// `check` and `retag --torch auto`.
//
// Contract: add_wheel_member() takes one member's bytes as the caller reads them
// (so a command that reads every member anyway reads them once) and keeps it when
// it is named like a shared library, is ELF and has a dynamic section; its bytes
// can be dropped afterwards. An invalid ELF is an InputError naming wheel and
// member. read_targets() reads a wheel's library members, or one ELF file, and
// refuses an input with nothing to check unless refuse_empty is false (check of
// several inputs: a pure-python wheel in dist/ is not an error). check_against() resolves every target
// against one torch index (check.hpp), the wheel's own libraries in scope;
// needed_roots() names what the targets need, for IndexOptions::roots.
#pragma once

#include "check_report.hpp"

#include "wheelfix/abi/check.hpp"
#include "wheelfix/abi/symbol_index.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace wheelfix::cli {

struct Target {
    std::string member;
    abi::ElfImports imports;
};

struct Targets {
    std::vector<Target> elves;
    abi::SymbolIndex bundled;  // the input's own libraries
};

void add_wheel_member(Targets& targets, const std::string& wheel, const std::string& member,
                      std::span<const std::uint8_t> bytes);
Targets read_targets(const std::string& path, bool refuse_empty = true);
std::vector<std::string> needed_roots(const Targets& targets);
TorchResult check_against(const Targets& targets, const abi::SymbolIndex& index);

}  // namespace wheelfix::cli
