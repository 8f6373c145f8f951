// ShimPlanner: every extension checked against the torch during the caller's one
// read of the wheel, forwarder or stub decided per missing torch function, and the
// shim library built (shim_planner.hpp has the contract).
#include "wheelfix/repair/shim_planner.hpp"

#include "wheelfix/abi/appended.hpp"
#include "wheelfix/abi/check.hpp"
#include "wheelfix/abi/demangle.hpp"
#include "wheelfix/abi/drifts.hpp"
#include "wheelfix/abi/signature.hpp"
#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/text.hpp"

#include <elf.h>

#include <algorithm>
#include <map>
#include <set>
#include <variant>

namespace wheelfix::repair {

// Named, not anonymous: ShimPlanner::State, declared in the header, holds a Collector.
namespace shim_planning {

constexpr std::string_view kShimPrefix = "libwheelfix_shim_";
// Near misses outside the drift data are forwarded as what their mangling shows; it
// cannot show a non-const member function's `this`, which would shift the registers.
constexpr const char* kFreeFunctionAssumed = " (assumed not a non-const member function: mangling cannot tell)";

// One missing torch function, over all the members that need it.
struct Need {
    abi::Unresolved unresolved;
    std::vector<std::string> members;
};

const elf::Symbol* undefined_symbol(const elf::ElfFile& elf, std::string_view name) {
    for (const auto& symbol : elf.dynamic_symbols())
        if (!symbol.defined() && symbol.name == name) return &symbol;
    return nullptr;
}

bool is_function(const elf::Symbol* symbol) {
    return symbol && (symbol->type == STT_FUNC || symbol->type == STT_GNU_IFUNC);
}

// Whether a symbol the torch lacks can go into the shim, or why not.
enum class ShimFit { fits, not_torch, not_function, versioned };

ShimFit shim_fit(const abi::Unresolved& unresolved, bool imports_function) {
    if (!unresolved.is_torch) return ShimFit::not_torch;
    if (!imports_function) return ShimFit::not_function;
    if (!unresolved.version.empty()) return ShimFit::versioned;
    return ShimFit::fits;
}

// What one read of the wheel gathers, member by member.
class Collector {
public:
    explicit Collector(std::string wheel_label) : label_(std::move(wheel_label)) {}

    // Whether the member needs the shim.
    bool take(ShimExamination examined) {
        if (!examined.dynamic) return false;
        refuse_shimmed(examined);
        const std::string& member = examined.member;
        missing_libraries.insert(examined.check.missing_libraries.begin(), examined.check.missing_libraries.end());
        bool needs_shim = false;
        for (std::size_t i = 0; i < examined.check.unresolved.size(); ++i)
            needs_shim |= classify(member, examined.imports_function[i], std::move(examined.check.unresolved[i]));
        if (needs_shim) note_machine(member, examined.machine);
        return needs_shim;
    }

    std::map<std::string, Need> needs;
    std::map<std::string, NotShimmed> not_shimmed;
    std::set<std::string> missing_libraries;
    std::string machine;

private:
    void refuse_shimmed(const ShimExamination& examined) const {
        if (!examined.shim_needed.empty())
            throw InputError(label_, examined.member + " already needs the wheelfix shim " + examined.shim_needed +
                                         "; shim the original wheel instead");
    }

    void note_machine(const std::string& member, const std::string& member_machine) {
        if (machine.empty()) machine = member_machine;
        if (machine != member_machine)
            throw InputError(label_, "extensions for two machines (" + machine + ", and " + member_machine + " in " +
                                         member + "): one shim cannot serve both");
    }

    void skip(const std::string& member, const abi::Unresolved& unresolved, std::string reason) {
        auto& entry = not_shimmed[unresolved.name];
        entry.name = unresolved.name;
        entry.demangled = unresolved.demangled;
        entry.members.push_back(member);
        entry.reason = std::move(reason);
    }

    // Returns whether the symbol goes into the shim.
    bool classify(const std::string& member, bool imports_function, abi::Unresolved unresolved) {
        switch (shim_fit(unresolved, imports_function)) {
        case ShimFit::not_torch: return false;
        case ShimFit::not_function:
            skip(member, unresolved, "not a function (data, TLS or untyped symbol): a shim can only provide code");
            return false;
        case ShimFit::versioned:
            skip(member, unresolved, "referenced with version " + unresolved.version + ", which a shim cannot define");
            return false;
        case ShimFit::fits: break;
        }
        auto& need = needs[unresolved.name];
        need.members.push_back(member);
        if (need.members.size() == 1) need.unresolved = std::move(unresolved);
        return true;
    }

    std::string label_;
};

// The library exporting `name` as a default-version function, or nullptr.
const abi::LibraryExports* exporting_library(const abi::SymbolIndex& index, std::string_view name) {
    for (const auto& library : index.libraries)
        for (const auto& symbol : abi::find_symbol(library, name))
            if (symbol.default_version && symbol.type != STT_OBJECT && symbol.type != STT_TLS) return &library;
    return nullptr;
}

std::string library_name(const abi::LibraryExports& library) {
    return library.soname.empty() ? library.file_name : library.soname;
}

// Integer-class argument registers the explicit parameters use, or nullopt when a
// parameter's class is not known well enough to place what follows it.
std::optional<std::size_t> integer_registers(const abi::Signature& signature) {
    std::size_t count = 0;
    for (const auto& param : signature.params) {
        switch (param.klass) {
            case abi::ParamClass::integer:
                if (param.width_bits > 64) return std::nullopt;
                ++count;
                break;
            case abi::ParamClass::pointer:
            case abi::ParamClass::reference:
            case abi::ParamClass::boolean: ++count; break;
            case abi::ParamClass::floating: break;
            default: return std::nullopt;
        }
    }
    return count;
}

struct Successor {
    std::string name;
    std::string library;
    std::size_t appended = 0;
    std::string source;
    std::string reason;
    std::optional<bool> passes_this;        // known facts override what mangling says
    std::optional<bool> returns_in_memory;
};

// The value of each parameter `successor` appends, from the rules in the data
// (abi/appended.hpp), with the rules' text; an error naming the first parameter
// no rule covers (its value cannot be guessed: the symbol is not forwardable).
struct AppendedValues {
    std::vector<std::uint16_t> values;
    std::vector<std::string> passed;  // "bool = true"
    std::string text;                 // "appended parameter 4 (bool) = true: <why>"
};
std::variant<AppendedValues, std::string> appended_values(const Successor& successor) {
    AppendedValues found;
    if (successor.appended == 0) return found;
    auto signature = abi::parse_signature(successor.name);
    if (!signature || signature->params.size() < successor.appended)
        return std::string("cannot read the successor's parameters, so not which ones are appended");
    for (std::size_t position = signature->params.size() - successor.appended + 1; position <= signature->params.size();
         ++position) {
        const auto& spelling = signature->params[position - 1].spelling;
        const auto* rule = abi::appended_rule(successor.name, position);
        if (!rule)
            return "appended parameter " + std::to_string(position) + " (" + spelling +
                   ") has no rule in the appended-parameter data (torch_appended.txt): its value cannot be guessed";
        found.values.push_back(rule->value);
        found.passed.push_back(spelling + " = " + rule->spelling);
        found.text += (found.text.empty() ? "" : "; ") + std::string("appended parameter ") + std::to_string(position) +
                      " (" + spelling + ") = " + rule->spelling + ": " + rule->why;
    }
    return found;
}

// Fills `shimmed` as a forwarder to `successor`; returns why it cannot be one.
std::optional<std::string> make_forwarder(ShimmedSymbol& shimmed, const Successor& successor,
                                          const std::string& machine) {
    auto& symbol = shimmed.symbol;
    auto old_signature = abi::parse_signature(symbol.name);
    auto values = appended_values(successor);
    if (auto* missing = std::get_if<std::string>(&values)) return *missing;
    auto& appended = std::get<AppendedValues>(values);
    symbol.target = successor.name;
    symbol.target_library = successor.library;
    symbol.appended_params = successor.appended;
    symbol.appended_values = appended.values;
    symbol.passes_this = successor.passes_this.value_or(old_signature && old_signature->has_this);
    symbol.returns_in_memory = successor.returns_in_memory.value_or(false);
    if (successor.appended > 0) {
        auto registers = old_signature ? integer_registers(*old_signature) : std::nullopt;
        if (!registers) return "cannot tell which registers the old parameters use, so not where the appended ones go";
        symbol.integer_params_before = *registers;
    }
    if (auto obstacle = abi::forwarder_obstacle(symbol, machine)) return obstacle;
    shimmed.decision = ShimDecision::forward;
    shimmed.source = successor.source;
    shimmed.target_demangled = abi::demangle(successor.name);
    shimmed.reason = successor.reason + (appended.text.empty() ? "" : "; " + appended.text);
    shimmed.appended = appended.passed;
    return std::nullopt;
}

void make_stub(ShimmedSymbol& shimmed, std::string reason) {
    auto& symbol = shimmed.symbol;
    symbol.target.reset();
    symbol.target_library.reset();
    symbol.appended_params = 0;
    symbol.appended_values.clear();
    symbol.integer_params_before = 0;
    symbol.passes_this = false;
    symbol.returns_in_memory = false;
    shimmed.decision = ShimDecision::stub;
    shimmed.source.clear();
    shimmed.target_demangled.clear();
    shimmed.reason = std::move(reason);
    shimmed.appended.clear();
}

Successor mapped_successor(const std::string& old_name, const std::string& new_name, const abi::SymbolIndex& index) {
    const auto* library = exporting_library(index, new_name);
    if (!library)
        throw InputError("--map", old_name + "=" + new_name + ": torch " + index.torch_version + " does not export " +
                                      new_name);
    Successor successor{new_name, library_name(*library), 0, "--map", "named by --map", {}, {}};
    auto old_signature = abi::parse_signature(old_name);
    auto new_signature = abi::parse_signature(new_name);
    if (!old_signature || !new_signature) {
        successor.reason = "named by --map (signatures not parsed: forwarded as is)";
        return successor;
    }
    auto compatibility = abi::classify(*old_signature, *new_signature);
    if (!compatibility.forwardable)
        throw InputError("--map", old_name + "=" + new_name + ": not ABI-compatible: " + compatibility.reason);
    successor.appended = compatibility.appended_zero_params;
    successor.reason = "named by --map; " + compatibility.reason;
    return successor;
}

// The successor a known-drift entry names, when this torch exports it.
std::optional<Successor> drift_successor(const abi::Drift& drift, const abi::SymbolIndex& index) {
    const auto* library = exporting_library(index, drift.successor);
    auto old_signature = abi::parse_signature(drift.symbol);
    auto new_signature = abi::parse_signature(drift.successor);
    if (!library || !old_signature || !new_signature) return std::nullopt;
    auto compatibility = abi::classify(*old_signature, *new_signature);
    if (!compatibility.forwardable) return std::nullopt;
    return Successor{drift.successor, library_name(*library), compatibility.appended_zero_params, "known drift",
                     "known drift (since " + drift.since + "): " + drift.source, {}, {}};
}

std::string no_successor_reason(const Need& need, const std::string& torch_version) {
    if (need.unresolved.near_misses.empty()) return "torch " + torch_version + " exports no function of that name";
    const auto& best = need.unresolved.near_misses.front();
    return "no ABI-compatible successor: " + best.demangled + ": " + best.compatibility.reason;
}

ShimmedSymbol decide(const Need& need, const abi::SymbolIndex& index, const SymbolMap& maps,
                     const std::string& machine) {
    ShimmedSymbol shimmed;
    shimmed.symbol.name = need.unresolved.name;
    shimmed.symbol.demangled = need.unresolved.demangled;
    shimmed.symbol.needed_by = join(need.members, ", ");
    shimmed.members = need.members;
    std::vector<std::string> obstacles;
    for (const auto& [old_name, new_name] : maps) {
        if (old_name != need.unresolved.name) continue;
        if (auto obstacle = make_forwarder(shimmed, mapped_successor(old_name, new_name, index), machine))
            throw InputError("--map", old_name + "=" + new_name + ": " + *obstacle);
        return shimmed;
    }
    for (const auto* drift : abi::drifts_for(need.unresolved.name)) {
        auto successor = drift_successor(*drift, index);
        if (!successor) continue;
        auto obstacle = make_forwarder(shimmed, *successor, machine);
        if (!obstacle) return shimmed;
        obstacles.push_back(abi::demangle(successor->name) + ": " + *obstacle);
    }
    for (const auto& near : need.unresolved.near_misses) {
        if (!near.compatibility.forwardable) continue;
        Successor successor{near.name, near.library, near.compatibility.appended_zero_params, "near miss",
                            near.compatibility.reason +
                                (near.compatibility.appended_zero_params > 0 ? kFreeFunctionAssumed : ""),
                            {}, {}};
        auto obstacle = make_forwarder(shimmed, successor, machine);
        if (!obstacle) return shimmed;
        obstacles.push_back(near.demangled + ": " + *obstacle);
    }
    make_stub(shimmed, obstacles.empty() ? no_successor_reason(need, index.torch_version)
                                         : "no usable forwarder: " + join(obstacles, "; "));
    return shimmed;
}

void check_maps(const SymbolMap& maps, const Collector& collected, const std::string& torch_version) {
    for (const auto& [old_name, new_name] : maps)
        if (!collected.needs.contains(old_name))
            throw InputError("--map", old_name + ": no extension in the wheel misses this torch function against torch " +
                                          torch_version);
}

abi::ShimSpec shim_spec(const std::vector<ShimmedSymbol>& symbols, const abi::SymbolIndex& index,
                        const std::string& machine, const std::string& runpath) {
    abi::ShimSpec spec;
    spec.torch_version = index.torch_version;
    spec.machine = machine;
    spec.runpath = runpath;
    for (const auto& shimmed : symbols) spec.symbols.push_back(shimmed.symbol);
    return spec;
}

}  // namespace shim_planning

using namespace shim_planning;

std::pair<std::string, std::string> parse_symbol_map(std::string_view text) {
    auto equals = text.find('=');
    if (equals == std::string_view::npos || equals == 0 || equals + 1 == text.size() ||
        text.find('=', equals + 1) != std::string_view::npos)
        throw InputError("--map", "expected OLD=NEW (mangled names), got '" + std::string(text) + "'");
    return {std::string(text.substr(0, equals)), std::string(text.substr(equals + 1))};
}

struct ShimPlanner::State {
    State(const abi::SymbolIndex& index, std::string label, SymbolMap maps)
        : index(index), maps(std::move(maps)), collected(std::move(label)) {}
    const abi::SymbolIndex& index;
    SymbolMap maps;
    Collector collected;
};

ShimPlanner::ShimPlanner(const abi::SymbolIndex& index, std::string wheel_label, SymbolMap maps)
    : state_(std::make_unique<State>(index, std::move(wheel_label), std::move(maps))) {}
ShimPlanner::~ShimPlanner() = default;

ShimExamination ShimPlanner::examine(const std::string& member, const elf::ElfFile& elf) const {
    ShimExamination examined;
    examined.member = member;
    examined.dynamic = elf.has_dynamic();
    if (!examined.dynamic) return examined;
    for (auto needed : elf.needed())
        if (needed.starts_with(kShimPrefix) && examined.shim_needed.empty()) examined.shim_needed = std::string(needed);
    examined.machine = elf.machine_name();
    examined.check = abi::check_elf(member, elf, state_->index);
    for (const auto& unresolved : examined.check.unresolved)
        examined.imports_function.push_back(is_function(undefined_symbol(elf, unresolved.name)));
    return examined;
}

bool ShimPlanner::take(ShimExamination examined) { return state_->collected.take(std::move(examined)); }

bool ShimPlanner::take(const std::string& member, const elf::ElfFile& elf) { return take(examine(member, elf)); }

bool ShimExamination::needs_shim() const {
    for (std::size_t i = 0; i < check.unresolved.size(); ++i)
        if (shim_fit(check.unresolved[i], imports_function[i]) == ShimFit::fits) return true;
    return false;
}

std::optional<abi::ShimLibrary> ShimPlanner::finish(ShimResult& result, const std::string& runpath) {
    auto& collected = state_->collected;
    check_maps(state_->maps, collected, state_->index.torch_version);
    result.torch_version = state_->index.torch_version;
    result.machine = collected.machine;
    result.missing_libraries.assign(collected.missing_libraries.begin(), collected.missing_libraries.end());
    for (auto& [name, entry] : collected.not_shimmed) result.not_shimmed.push_back(std::move(entry));
    for (const auto& [name, need] : collected.needs)
        result.symbols.push_back(decide(need, state_->index, state_->maps, collected.machine));
    if (result.symbols.empty()) return std::nullopt;
    return abi::build_shim(shim_spec(result.symbols, state_->index, collected.machine, runpath));
}

}  // namespace wheelfix::repair
