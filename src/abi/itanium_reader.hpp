// The Itanium C++ ABI name reader behind parse_signature (private to src/abi).
//
// Contract: ItaniumReader reads one mangled name (`_Z<encoding>`) front to back
// with the ABI's substitution table (S_, S0_, ..., St/Sa/Sb/Ss/Si/So/Sd) and
// template-parameter references (T_, T0_, ...), and gives for a function: its
// qualified name, whether it is a const member, and its parameter types, each
// spelled the way the GNU demangler spells it ("char const*",
// "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&")
// together with what the ABI classifier needs (register class, width,
// signedness, which std::string ABI the type mentions). It covers what real torch
// exports use: nested and local names, templates with type/literal/pack arguments,
// operators, constructors/destructors, ABI tags, lambdas and unnamed types,
// CV-qualified pointers and references, function, array and pointer-to-member
// types, pack expansions. Anything it does not handle (expressions in template
// arguments, decltype, vendor qualifiers) makes read() return nullopt, as does a
// name that is not a function (data, vtables, typeinfo, guard variables, thunks).
// Recursion depth is capped, so hostile input cannot exhaust the stack.
#pragma once

#include "wheelfix/abi/signature.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::abi::detail {

// What the ABI classifier needs to know about a type.
struct TypeFacts {
    ParamClass klass = ParamClass::other;
    unsigned width_bits = 0;
    bool is_signed = false;
    bool old_abi_string = false;    // mentions the pre-cxx11 std::string
    bool cxx11_abi_string = false;  // mentions std::__cxx11::basic_string
};

// A parsed type, template argument or name prefix.
struct Node {
    // Spelling as head + (" (" + inner + ")" when inner is set) + tail: function and
    // array types keep their declarator apart so a pointer goes inside the parens,
    // as in "void (*)(int)" and "int (*) [3]".
    std::string head;
    std::string inner;
    std::string tail;
    std::string unqualified;    // the spelling without top-level cv-qualifiers
    std::string template_name;  // class templates: the name before the arguments
    std::string referent;       // pointers/references: the pointee without cv
    std::string simple_name;    // names: the last component without template
                                // arguments ("basic_string"), for constructors
    TypeFacts facts;
    bool is_array = false;
    bool is_function = false;
    bool is_pack = false;             // a template argument pack (J...E)
    std::vector<Node> pack;           // its elements
    std::vector<Node> template_args;  // for names ending in template arguments

    std::string text() const;
};

struct FunctionName {
    std::string qualified;
    bool const_member = false;
    bool ends_in_template_args = false;  // a function template: its return type is mangled
    bool is_ctor_dtor_or_conversion = false;
    std::vector<Node> template_args;
};

struct ParsedFunction {
    FunctionName name;
    std::vector<Node> params;  // empty for (void)
};

std::optional<ParsedFunction> read_function(std::string_view mangled);

}  // namespace wheelfix::abi::detail
