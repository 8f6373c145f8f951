// parse_signature (on top of itanium_reader) and classify: may a call made with
// one signature be forwarded to a function with another (docs/decisions.md, "The torch ABI")?
//
// The rules, for the SysV x86_64 and AAPCS64 calling conventions, where every
// integer, bool, pointer and reference argument takes one general-purpose register
// in order: a parameter may change between types of the same register class and
// width (int <-> unsigned int, T* <-> T const*, T& <-> T const&); trailing
// parameters may be appended when each is an integer, bool or pointer, which a
// forwarder passes in a register (the value a rule in the data gives:
// abi/appended.hpp; a shim without one does not forward), and only while they still fit in registers (6 on
// x86_64, the stricter of the two) and no earlier parameter is a class passed by
// value (its register use is unknown from the name alone). The count assumes no
// hidden `this` besides the one a const member has and no hidden return slot:
// the mangled name of a plain function does not say, which is why the known
// drifts (src/abi/data/torch_drifts.txt) are reviewed by hand.
#include "wheelfix/abi/signature.hpp"

#include "itanium_reader.hpp"

#include "wheelfix/util/text.hpp"

#include <algorithm>
#include <string>

namespace wheelfix::abi {

namespace {

constexpr std::size_t kIntegerArgumentRegisters = 6;  // x86_64 (aarch64 has 8)

Param to_param(const detail::Node& node) {
    Param param;
    param.spelling = node.text();
    param.klass = node.facts.klass;
    param.width_bits = node.facts.width_bits;
    param.is_signed = node.facts.is_signed;
    param.old_abi_string = node.facts.old_abi_string;
    param.cxx11_abi_string = node.facts.cxx11_abi_string;
    return param;
}

// The referent spelling without cv-qualifiers: "char const*" -> "char".
std::string referent_of(const Param& param) {
    std::string text = param.spelling;
    while (!text.empty() && (text.back() == '*' || text.back() == '&')) text.pop_back();
    for (const std::string suffix : {" const", " volatile", " restrict"})
        while (text.ends_with(suffix)) text.erase(text.size() - suffix.size());
    return text;
}

bool is_integer_register(const Param& param) {
    return param.klass == ParamClass::integer || param.klass == ParamClass::boolean ||
           param.klass == ParamClass::pointer || param.klass == ParamClass::reference;
}

bool string_abi_differs(const Param& a, const Param& b) {
    return (a.old_abi_string && b.cxx11_abi_string && !a.cxx11_abi_string) ||
           (a.cxx11_abi_string && b.old_abi_string && !b.cxx11_abi_string);
}

std::string width_text(const Param& param) {
    return param.spelling + " (" + std::to_string(param.width_bits) + "-bit)";
}

// Why a parameter cannot stay in place, or "" when it can; `note` collects the
// harmless change ("int -> unsigned int").
std::string parameter_problem(const Param& from, const Param& to, std::string& note) {
    if (from.spelling == to.spelling) return {};
    if (string_abi_differs(from, to))
        return "std::string ABI differs (pre-cxx11 std::string vs std::__cxx11::basic_string): " +
               from.spelling + " -> " + to.spelling;
    if (from.klass == ParamClass::integer && to.klass == ParamClass::integer) {
        if (from.width_bits != to.width_bits) return "width changed: " + width_text(from) + " -> " + width_text(to);
        note = from.spelling + " -> " + to.spelling + " (same width)";
        return {};
    }
    if ((from.klass == ParamClass::pointer || from.klass == ParamClass::reference) && from.klass == to.klass) {
        const bool same_kind = from.spelling.ends_with("&&") == to.spelling.ends_with("&&");
        if (same_kind && referent_of(from) == referent_of(to)) {
            note = from.spelling + " -> " + to.spelling + " (qualifiers only)";
            return {};
        }
        return "points to a different type: " + from.spelling + " -> " + to.spelling;
    }
    if (from.klass == ParamClass::class_by_value || to.klass == ParamClass::class_by_value)
        return "class passed by value changed: " + from.spelling + " -> " + to.spelling;
    return "register class changed: " + from.spelling + " -> " + to.spelling;
}

std::string ordinal_param(std::size_t index) { return "parameter " + std::to_string(index + 1); }

// Appended parameters: each must be zeroable and fit in an integer register.
std::string appended_problem(const Signature& old_signature, const Signature& new_signature) {
    for (std::size_t i = old_signature.params.size(); i < new_signature.params.size(); ++i) {
        const Param& param = new_signature.params[i];
        if (param.klass != ParamClass::integer && param.klass != ParamClass::pointer &&
            param.klass != ParamClass::boolean)
            return "appended " + ordinal_param(i) + " (" + param.spelling + ") cannot be passed as zero";
        if (param.klass == ParamClass::integer && param.width_bits > 64)
            return "appended " + ordinal_param(i) + " (" + param.spelling + ") takes two registers";
    }
    for (const Param& param : old_signature.params)
        if (!is_integer_register(param) && param.klass != ParamClass::floating)
            return "the register of the appended parameters is unknown after " + param.spelling +
                   " passed by value";
    return {};
}

std::size_t integer_registers(const Signature& signature, std::size_t count) {
    std::size_t used = signature.has_this ? 1 : 0;
    for (std::size_t i = 0; i < count && i < signature.params.size(); ++i)
        if (is_integer_register(signature.params[i])) ++used;
    return used;
}

Compatibility refuse(std::string reason) {
    Compatibility result;
    result.reason = "not forwardable: " + std::move(reason);
    return result;
}

std::string spelled_list(const std::vector<Param>& params, std::size_t from) {
    std::string out;
    for (std::size_t i = from; i < params.size(); ++i) out += (out.empty() ? "" : ", ") + params[i].spelling;
    return out;
}

}  // namespace

std::optional<Signature> parse_signature(std::string_view mangled) {
    std::optional<detail::ParsedFunction> parsed = detail::read_function(mangled);
    if (!parsed) return std::nullopt;
    Signature signature;
    signature.qualified_name = parsed->name.qualified;
    signature.const_member = parsed->name.const_member;
    signature.has_this = parsed->name.const_member || parsed->name.is_ctor_dtor_or_conversion;
    for (const detail::Node& node : parsed->params) signature.params.push_back(to_param(node));
    return signature;
}

Compatibility classify(const Signature& old_signature, const Signature& new_signature) {
    if (old_signature.qualified_name != new_signature.qualified_name)
        return refuse("a different function (" + new_signature.qualified_name + ")");
    if (old_signature.const_member != new_signature.const_member)
        return refuse("the member function's const qualifier changed");
    const std::size_t common = std::min(old_signature.params.size(), new_signature.params.size());
    std::vector<std::string> notes;
    for (std::size_t i = 0; i < common; ++i) {
        std::string note;
        std::string problem = parameter_problem(old_signature.params[i], new_signature.params[i], note);
        if (!problem.empty()) return refuse(ordinal_param(i) + ": " + problem);
        if (!note.empty()) notes.push_back(ordinal_param(i) + " " + note);
    }
    if (new_signature.params.size() < old_signature.params.size())
        return refuse("parameters removed (" + spelled_list(old_signature.params, common) + ")");
    Compatibility result;
    result.appended_zero_params = new_signature.params.size() - common;
    if (result.appended_zero_params > 0) {
        std::string problem = appended_problem(old_signature, new_signature);
        if (problem.empty() &&
            integer_registers(new_signature, new_signature.params.size()) > kIntegerArgumentRegisters)
            problem = "an appended parameter would be passed on the stack";
        if (!problem.empty()) return refuse(problem);
        notes.push_back(std::to_string(result.appended_zero_params) + " appended parameter" +
                        (result.appended_zero_params == 1 ? "" : "s") + " (" +
                        spelled_list(new_signature.params, common) + ")");
    }
    result.forwardable = true;
    result.integer_params_before = integer_registers(old_signature, old_signature.params.size());
    if (notes.empty()) notes.push_back("same parameters");
    result.reason = "forwardable: " + join(notes, "; ");
    return result;
}

}  // namespace wheelfix::abi
