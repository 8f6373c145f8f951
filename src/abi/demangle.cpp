// Demangling via __cxa_demangle and a minimal Itanium-prefix reader for the
// outermost namespace (enough for <nested-name> and <special-name> prefixes).
#include "wheelfix/abi/demangle.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace wheelfix::abi {

std::string demangle(std::string_view mangled) {
    if (!mangled.starts_with("_Z")) return std::string(mangled);
    std::string name(mangled);
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> out(::abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                    &std::free);
    return status == 0 && out ? std::string(out.get()) : name;
}

namespace {

// Skips <special-name> prefixes that wrap an entity: TV (vtable), TI (typeinfo),
// TS (typeinfo name), TT (VTT), GV (guard variable), Th/Tv/Tc thunks are rare in
// imports and left as they are.
std::string_view skip_special_prefix(std::string_view rest) {
    for (std::string_view prefix : {"TV", "TI", "TS", "TT", "GV"})
        if (rest.starts_with(prefix)) return rest.substr(prefix.size());
    return rest;
}

std::string read_source_name(std::string_view rest) {
    std::size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    if (digits == 0 || digits > 6) return {};
    std::size_t length = std::stoul(std::string(rest.substr(0, digits)));
    if (digits + length > rest.size()) return {};
    return std::string(rest.substr(digits, length));
}

}  // namespace

std::string top_namespace(std::string_view mangled) {
    if (!mangled.starts_with("_Z")) return {};
    std::string_view rest = skip_special_prefix(mangled.substr(2));
    if (rest.starts_with("St")) return "std";
    if (!rest.starts_with("N")) return {};  // an unnamespaced <unscoped-name>
    rest.remove_prefix(1);
    while (!rest.empty() && (rest[0] == 'K' || rest[0] == 'V' || rest[0] == 'r' || rest[0] == 'R' || rest[0] == 'O'))
        rest.remove_prefix(1);
    if (rest.starts_with("St")) return "std";
    return read_source_name(rest);
}

bool is_torch_namespace(std::string_view ns) {
    return ns == "c10" || ns == "at" || ns == "torch" || ns == "caffe2" || ns == "c10d";
}

}  // namespace wheelfix::abi
