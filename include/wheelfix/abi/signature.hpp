// Function signatures read from Itanium-mangled names, and whether a call made
// with one signature may be forwarded to a function with another (docs/decisions.md,
// "The torch ABI").
//
// Contract: parse_signature(mangled) returns the qualified function name
// ("c10::cuda::c10_cuda_check_implementation") and the parameter types, each with
// its spelling and ABI class (integer of a width and signedness, pointer, reference,
// bool, floating, class by value, std::string of the pre-cxx11 or cxx11 ABI, ...),
// or nullopt for names that are not functions (data, vtables) or that it cannot
// parse. classify(old, new) decides:
// - forwardable: same number of parameters with identical register classes and
//   widths (int <-> unsigned int/uint32_t, T* <-> const T*), or the new signature
//   appends trailing parameters that are integers, pointers or bools, which the
//   forwarder passes in registers (the values: abi/appended.hpp's rules);
// - not forwardable, with the reason: a changed width, a class passed by value, a
//   std::string of the other ABI (cxx11 vs pre-cxx11), removed parameters, ...
// The reason is one human line used in `check` output, starting "forwardable: "
// or "not forwardable: ".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::abi {

enum class ParamClass { integer, pointer, reference, boolean, floating, class_by_value, other };

struct Param {
    std::string spelling;      // demangled type, e.g. "unsigned int", "char const*"
    ParamClass klass = ParamClass::other;
    unsigned width_bits = 0;   // for integers/floating/bool
    bool is_signed = false;
    bool old_abi_string = false;   // std::string (pre-cxx11 ABI, "Ss")
    bool cxx11_abi_string = false; // std::__cxx11::basic_string
};

struct Signature {
    std::string qualified_name;  // "c10::cuda::SetDevice"
    std::vector<Param> params;   // empty for (void)
    bool const_member = false;   // ...K...: a const member function (has `this`)
    bool has_this = false;       // const member, constructor, destructor or conversion:
                                 // `this` takes the first integer register
};

std::optional<Signature> parse_signature(std::string_view mangled);

struct Compatibility {
    bool forwardable = false;
    std::size_t appended_zero_params = 0;  // trailing params the forwarder zeroes
    // Integer-class registers (integers, bools, pointers, references, and `this` of
    // a const member, constructor, destructor or conversion) the old call fills,
    // when forwardable: the forwarder zeroes the next appended_zero_params
    // registers. Assumes no hidden `this` (other non-const members) or return
    // slot, which a mangled name cannot show.
    std::size_t integer_params_before = 0;
    std::string reason;                    // one line
};

Compatibility classify(const Signature& old_signature, const Signature& new_signature);

}  // namespace wheelfix::abi
