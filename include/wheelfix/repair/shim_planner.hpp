// The shim decisions over one wheel: which torch functions its extensions need
// that the target torch lacks, and for each a forwarder or a stub, built into one
// shim library (abi/shim.hpp). Shared by shim_wheel (shim_wheel.hpp) and repair;
// repair's and shim's foresight (foresight.hpp) run one ahead of the read.
//
// Contract: for each unresolved torch function symbol an extension imports, in this
// order of authority:
// - `maps` (--map OLD=NEW, mangled names) names its successor by hand: NEW must be
//   exported by the torch, and when both signatures parse they must be
//   ABI-compatible (abi::classify) — an incompatible map is an InputError;
// - the known-drift data file (abi/drifts.hpp, when built in) records the successor
//   and the facts mangling cannot tell (member function, return in memory);
// - otherwise the first forwardable near miss check found;
// it becomes a forwarder, unless the appended parameters cannot be placed in
// registers (then, and when there is no successor, a stub that names the symbol,
// the torch and the members needing it, and aborts). Data symbols, versioned
// references and non-torch misses cannot be shimmed and are reported.
// Refused (InputError): a wheel that already carries a wheelfix shim (shim the
// original instead), extensions of different machines, an incompatible --map.
#pragma once

#include "wheelfix/abi/check.hpp"
#include "wheelfix/abi/shim.hpp"
#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/repair/plan.hpp"
#include "wheelfix/repair/variant.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelfix::repair {

using SymbolMap = std::vector<std::pair<std::string, std::string>>;  // OLD -> NEW, mangled

enum class ShimDecision { forward, stub };

struct ShimmedSymbol {
    abi::ShimSymbol symbol;            // as handed to build_shim
    ShimDecision decision = ShimDecision::stub;
    std::vector<std::string> members;  // extensions needing it
    std::string source;                // "--map", "drift data", "near miss", "" for stubs
    std::string target_demangled;
    std::string reason;                // why it forwards (or why it cannot)
    std::vector<std::string> appended; // forwarder: each appended parameter as passed ("bool = true")
};

struct NotShimmed {
    std::string name;
    std::string demangled;
    std::vector<std::string> members;
    std::string reason;
};

struct ShimResult {
    std::filesystem::path output;
    std::string torch_version;
    std::string machine;
    std::optional<abi::ShimLibrary> shim;  // bytes cleared; nullopt when none was needed
    std::string shim_member;               // "sgl_kernel.libs/libwheelfix_shim_…so"
    std::vector<ShimmedSymbol> symbols;    // sorted by name
    std::vector<NotShimmed> not_shimmed;
    std::vector<std::string> missing_libraries;  // NEEDED torch libraries the torch lacks
    std::vector<std::pair<std::string, std::string>> requirements;  // shim: Requires-Dist before -> after ("" = added)
    std::vector<MemberChange> changed;
    std::size_t elf_members = 0;
    std::string plan;                      // with dry_run: the plan (plan.hpp describe_plan); nothing written
    std::optional<VariantOutcome> variant;  // shim of a variant wheel: its variant derived again (variant.hpp)
};

// The shim decisions over a whole wheel, gathered member by member during the
// caller's one read of it (shim_wheel and repair share it; repair's foresight,
// repair/foresight.hpp, runs one ahead of the read). take() checks one ELF member
// against the torch (examine(), which records nothing and may run on any thread,
// then take(examined) in member order) and says whether it needs the shim (its edits then
// wait for the shim's name: the name carries a hash of the content); finish(),
// after every member, decides forwarder or stub per missing torch function (the
// order of authority above), fills result's torch_version, machine, symbols,
// not_shimmed and missing_libraries, and builds the shim library (nullopt when
// nothing needs one) with the given RUNPATH. take() throws the InputErrors listed above (already
// shimmed, two machines); finish() those of --map.
// The shim's own RUNPATH: torch's libraries as pip installs them beside the
// "<dist>.libs" directory; repair passes a target profile's directories instead.
inline const std::string kShimRunpath = "$ORIGIN/../torch/lib";

// What take() learns of one member on its parse, owned (nothing points into the
// member's bytes): made by examine() on any thread, with no effect, and taken in
// member order.
struct ShimExamination {
    std::string member;
    bool dynamic = false;                // without a dynamic section: nothing to take
    std::string shim_needed;             // a NEEDED wheelfix shim (take() refuses it), or empty
    std::string machine;                 // elf::ElfFile::machine_name()
    abi::ElfCheck check;                 // abi::check_elf against the torch
    std::vector<bool> imports_function;  // per check.unresolved: imported as a function

    // Whether take() will say the member needs the shim (a torch function it can
    // hold is missing); what repair and shim speculate on, before the member's read.
    bool needs_shim() const;
};

class ShimPlanner {
public:
    ShimPlanner(const abi::SymbolIndex& index, std::string wheel_label, SymbolMap maps);
    ~ShimPlanner();
    ShimPlanner(const ShimPlanner&) = delete;
    ShimPlanner& operator=(const ShimPlanner&) = delete;

    bool take(const std::string& member, const elf::ElfFile& elf);  // take(examine(member, elf))
    ShimExamination examine(const std::string& member, const elf::ElfFile& elf) const;
    bool take(ShimExamination examined);
    std::optional<abi::ShimLibrary> finish(ShimResult& result, const std::string& runpath = kShimRunpath);

private:
    struct State;
    std::unique_ptr<State> state_;
};

// "OLD=NEW" -> {OLD, NEW}; InputError naming --map otherwise.
std::pair<std::string, std::string> parse_symbol_map(std::string_view text);

}  // namespace wheelfix::repair
