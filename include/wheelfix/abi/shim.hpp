// Shim libraries: generated ELF shared objects that define the symbols an extension
// needs and a newer torch no longer exports — forwarding to the compatible
// successor, or failing loudly (docs/decisions.md, "Shim libraries without a compiler").
//
// Contract: build_shim(spec) writes, with no compiler, a minimal ET_DYN for x86_64
// or aarch64 (ELF64 LE) with .dynsym/.dynstr/.gnu.hash/.hash/.gnu.version/
// .gnu.version_d, a version node named for the target torch ("WHEELFIX_TORCH_2.10.0")
// that every defined symbol carries, NEEDED on the torch libraries holding the
// successors (and DT_RUNPATH `spec.runpath` when given), and per symbol either
// - a forwarder: a trampoline that sets the appended parameters' registers to
//   their values (appended_values: each from a rule in the data, abi/appended.hpp;
//   one value per appended parameter, or a ShimError) and jumps through a GOT slot
//   bound (R_*_GLOB_DAT) to the successor, or
// - a stub: writes "wheelfix shim: <demangled> is not provided by torch <version>
//   (needed by <member>)\n" to stderr with the write syscall and aborts (tgkill
//   SIGABRT, then exit_group(134) should SIGABRT be caught) — no libc needed.
// Segments are laid out for 64 KiB pages (p_align 0x10000) so the same file loads on
// 4 KiB and 64 KiB kernels. The file name and SONAME carry the torch's public version
// and the first 8 hex digits of a SHA-256 over the canonical spec
// ("libwheelfix_shim_torch2.10.0_<8 hex>.so"): equal specs give byte-identical files,
// different specs different names. The result passes readelf, eu-elflint and LIEF,
// and ld.so loads it with RTLD_NOW.
// A spec that cannot be honoured — an unknown machine, an appended parameter that
// would be passed on the stack, a forwarder to a symbol the shim itself defines,
// duplicate names — is a ShimError; forwarder_obstacle() tells beforehand.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::abi {

class ShimError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct ShimSymbol {
    std::string name;                 // the mangled symbol the extension needs
    std::string demangled;
    std::string needed_by;            // member path(s), for the stub's message
    std::optional<std::string> target;          // successor's mangled name (forwarder)
    std::optional<std::string> target_library;  // SONAME exporting it (becomes NEEDED)
    std::size_t appended_params = 0;            // parameters the successor appends
    std::vector<std::uint16_t> appended_values;  // what the forwarder passes for each
    std::size_t integer_params_before = 0;      // integer-class registers the old call's
                                                // explicit parameters use
    // Hidden leading arguments, which the mangled name does not always reveal:
    bool passes_this = false;        // non-static member function: `this` comes first
    bool returns_in_memory = false;  // class returned through a hidden pointer (rdi on
                                     // x86_64, shifting the others; x8 on aarch64)
};

struct ShimSpec {
    std::string torch_version;        // "2.10.0+cu130"
    std::string machine;              // "x86_64" or "aarch64"
    std::vector<ShimSymbol> symbols;
    std::string runpath;              // the shim's own DT_RUNPATH, empty for none
};

struct ShimLibrary {
    std::string file_name;
    std::string soname;
    std::string version_node;         // "WHEELFIX_TORCH_2.10.0"
    std::vector<std::uint8_t> bytes;
};

ShimLibrary build_shim(const ShimSpec& spec);

// Why no forwarder can be built for `symbol` on `machine` (an appended parameter
// would go on the stack, an unknown machine), or nullopt when one can.
std::optional<std::string> forwarder_obstacle(const ShimSymbol& symbol, std::string_view machine);

// The argument registers of the appended parameters (set by a forwarder), as indices into the machine's integer
// argument registers (rdi, rsi, rdx, rcx, r8, r9 / x0..x7). ShimError as above.
std::vector<unsigned> zeroed_registers(const ShimSymbol& symbol, std::string_view machine);

}  // namespace wheelfix::abi
