// build_shim: checks the spec, names the library after the torch and a hash of the
// spec, and hands an ImagePlan to the image writer (shim_image.cpp) with the code
// model of the machine (shim_x86_64.cpp, shim_aarch64.cpp).
//
// Which register an appended parameter lands in: the integer-class argument
// registers are handed out left to right, so the first appended parameter takes
// register number  integer_params_before + passes_this + (sret on x86_64).
// Mangled names do not tell a free function from a non-const member function
// (`_ZN3c104cuda9SetDeviceEa` reads the same either way; only const members show a
// `K`), nor do they carry the return type of a non-template function, so
// passes_this and returns_in_memory come from the caller: the known-drift data
// file (src/abi/data/torch_drifts.txt) records the verified declaration from torch's
// headers for each drift it lists; for other near misses repair/shim_wheel assumes
// no hidden `this` and says so in its report. A parameter that would go on the
// stack is refused: the forwarder never touches the stack.
#include "wheelfix/abi/shim.hpp"

#include "shim_internal.hpp"
#include "wheelfix/util/sha256.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace wheelfix::abi {

namespace shim_detail {

const CodeModel* code_model_for(std::string_view machine) {
    if (machine == "x86_64") return &x86_64_code();
    if (machine == "aarch64") return &aarch64_code();
    return nullptr;
}

}  // namespace shim_detail

namespace {

using shim_detail::CodeModel;

const CodeModel& code_model(std::string_view machine) {
    if (const auto* code = shim_detail::code_model_for(machine)) return *code;
    throw ShimError("no shim code for machine '" + std::string(machine) + "' (x86_64 and aarch64 only)");
}

bool has_control_characters(std::string_view text) {
    return std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
}

// "2.10.0+cu130" -> "2.10.0": the part of the version that goes into names.
std::string public_version(std::string_view version) {
    std::string out(version.substr(0, version.find('+')));
    for (char& c : out)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.') c = '_';
    if (out.empty()) throw ShimError("the torch version is empty");
    return out;
}

void check_name(std::string_view what, std::string_view name) {
    if (name.empty()) throw ShimError(std::string(what) + " is empty");
    if (name.find('\0') != std::string_view::npos || has_control_characters(name))
        throw ShimError(std::string(what) + " '" + std::string(name) + "' contains control characters");
}

void check_spec(const ShimSpec& spec) {
    code_model(spec.machine);
    check_name("torch version", spec.torch_version);
    if (has_control_characters(spec.runpath)) throw ShimError("runpath contains control characters");
    if (spec.symbols.empty()) throw ShimError("a shim needs at least one symbol");
    std::set<std::string_view> defined;
    for (const auto& symbol : spec.symbols) {
        check_name("symbol name", symbol.name);
        if (!defined.insert(symbol.name).second) throw ShimError("symbol " + symbol.name + " listed twice");
    }
    for (const auto& symbol : spec.symbols) {
        if (!symbol.target) continue;
        check_name("forwarder target of " + symbol.name, *symbol.target);
        if (defined.contains(*symbol.target))
            throw ShimError("forwarder " + symbol.name + " -> " + *symbol.target + " targets a symbol the shim defines");
        if (symbol.target_library) check_name("library of " + *symbol.target, *symbol.target_library);
        zeroed_registers(symbol, spec.machine);
        if (symbol.appended_values.size() != symbol.appended_params)
            throw ShimError("forwarder " + symbol.name + ": " + std::to_string(symbol.appended_params) +
                            " appended parameter(s) but " + std::to_string(symbol.appended_values.size()) +
                            " value(s): each needs its rule");
    }
}

// ",v1,v2" for the appended values: part of the spec's identity.
std::string appended_text(const ShimSymbol& symbol) {
    std::string text;
    for (auto value : symbol.appended_values) text += "," + std::to_string(value);
    return text;
}

void canonical_field(std::string& out, std::string_view value) {
    out += std::to_string(value.size());
    out += ':';
    out += value;
    out += '\n';
}

// The first 8 hex digits of SHA-256 over a length-prefixed rendering of the spec
// (symbols sorted), so equal specs share a name and different ones do not.
std::string spec_digest(const ShimSpec& spec, const std::vector<const ShimSymbol*>& sorted) {
    std::string text = "wheelfix-shim/1\n";
    canonical_field(text, spec.torch_version);
    canonical_field(text, spec.machine);
    canonical_field(text, spec.runpath);
    for (const auto* symbol : sorted) {
        canonical_field(text, symbol->name);
        canonical_field(text, symbol->demangled);
        canonical_field(text, symbol->needed_by);
        canonical_field(text, symbol->target.value_or(""));
        canonical_field(text, symbol->target_library.value_or(""));
        canonical_field(text, std::to_string(symbol->target ? 1 : 0) + "," + std::to_string(symbol->appended_params) + appended_text(*symbol) +
                                  "," + std::to_string(symbol->integer_params_before) + "," +
                                  std::to_string(symbol->passes_this) + "," + std::to_string(symbol->returns_in_memory));
    }
    return hex_digest(sha256(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()))).substr(0, 8);
}

std::string stub_message(const ShimSymbol& symbol, std::string_view torch_version) {
    const std::string& shown = symbol.demangled.empty() ? symbol.name : symbol.demangled;
    std::string message = "wheelfix shim: " + shown + " is not provided by torch " + std::string(torch_version);
    if (!symbol.needed_by.empty()) message += " (needed by " + symbol.needed_by + ")";
    return message + "\n";
}

std::vector<std::string> needed_libraries(const std::vector<const ShimSymbol*>& sorted) {
    std::set<std::string> libraries;
    for (const auto* symbol : sorted)
        if (symbol->target && symbol->target_library) libraries.insert(*symbol->target_library);
    return {libraries.begin(), libraries.end()};
}

shim_detail::ImageFunction image_function(const ShimSymbol& symbol, const ShimSpec& spec) {
    shim_detail::ImageFunction function;
    function.name = symbol.name;
    function.forwarder = symbol.target.has_value();
    if (function.forwarder) {
        function.target = *symbol.target;
        auto registers = zeroed_registers(symbol, spec.machine);
        for (std::size_t i = 0; i < registers.size(); ++i)
            function.set.push_back({registers[i], symbol.appended_values.at(i)});
    } else {
        function.message = stub_message(symbol, spec.torch_version);
    }
    return function;
}

}  // namespace

std::vector<unsigned> zeroed_registers(const ShimSymbol& symbol, std::string_view machine) {
    const auto& code = code_model(machine);
    std::size_t first = symbol.integer_params_before + (symbol.passes_this ? 1 : 0) +
                        (symbol.returns_in_memory && code.sret_takes_argument_register ? 1 : 0);
    std::size_t end = first + symbol.appended_params;
    if (end > code.integer_argument_registers)
        throw ShimError(symbol.name + ": appended parameter " + std::to_string(end) + " of the integer class would be " +
                        "passed on the stack on " + std::string(machine) + " (" +
                        std::to_string(code.integer_argument_registers) + " argument registers); no forwarder");
    std::vector<unsigned> registers;
    for (auto reg = first; reg < end; ++reg) registers.push_back(static_cast<unsigned>(reg));
    return registers;
}

std::optional<std::string> forwarder_obstacle(const ShimSymbol& symbol, std::string_view machine) {
    try {
        zeroed_registers(symbol, machine);
        return std::nullopt;
    } catch (const ShimError& error) {
        return error.what();
    }
}

ShimLibrary build_shim(const ShimSpec& spec) {
    check_spec(spec);
    std::vector<const ShimSymbol*> sorted;
    for (const auto& symbol : spec.symbols) sorted.push_back(&symbol);
    std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->name < b->name; });

    ShimLibrary library;
    auto version = public_version(spec.torch_version);
    library.file_name = "libwheelfix_shim_torch" + version + "_" + spec_digest(spec, sorted) + ".so";
    library.soname = library.file_name;
    library.version_node = "WHEELFIX_TORCH_" + version;

    shim_detail::ImagePlan plan;
    plan.soname = library.soname;
    plan.runpath = spec.runpath;
    plan.version_node = library.version_node;
    plan.needed = needed_libraries(sorted);
    for (const auto* symbol : sorted) plan.functions.push_back(image_function(*symbol, spec));
    library.bytes = shim_detail::write_image(plan, code_model(spec.machine));
    return library;
}

}  // namespace wheelfix::abi
