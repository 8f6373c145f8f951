// Shim libraries: generated ELF shared objects that define the symbols an extension
// needs and a newer torch no longer exports — forwarding to the compatible
// successor, or failing loudly (DESIGN.md "Shim libraries").
//
// Contract: build_shim(spec) writes, with no compiler, a minimal ET_DYN for x86_64
// or aarch64 (ELF64 LE) with .dynsym/.dynstr/.gnu.hash/.gnu.version/.gnu.version_d,
// a version node named for the target torch ("WHEELFIX_TORCH_2.10.0"), NEEDED on the
// torch libraries holding the successors, and per symbol either
// - a forwarder: a trampoline that zeroes the appended parameters' registers and
//   jumps through a GOT slot bound (R_*_GLOB_DAT) to the successor, or
// - a stub: writes "wheelfix shim: <demangled> is not provided by torch <version>
//   (needed by <member>)\n" to stderr with the write syscall and aborts (exit status
//   134) — no libc needed.
// The file name and SONAME carry the torch version and a content hash
// ("libwheelfix_shim_torch2.10.0_<8 hex>.so"). The result passes readelf, eu-elflint
// and LIEF, and ld.so loads it with RTLD_NOW.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wheelfix::abi {

struct ShimSymbol {
    std::string name;                 // the mangled symbol the extension needs
    std::string demangled;
    std::string needed_by;            // member path, for the stub's message
    std::optional<std::string> target;          // successor's mangled name (forwarder)
    std::optional<std::string> target_library;  // SONAME exporting it (becomes NEEDED)
    std::size_t appended_zero_params = 0;
    std::size_t integer_params_before = 0;      // integer-class registers the old call uses
};

struct ShimSpec {
    std::string torch_version;        // "2.10.0+cu130"
    std::string machine;              // "x86_64" or "aarch64"
    std::vector<ShimSymbol> symbols;
};

struct ShimLibrary {
    std::string file_name;
    std::string soname;
    std::vector<std::uint8_t> bytes;
};

ShimLibrary build_shim(const ShimSpec& spec);

}  // namespace wheelfix::abi
