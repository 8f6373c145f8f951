// Node construction for the Itanium reader (private to src/abi).
//
// Contract: the builtin-type and operator tables of the Itanium C++ ABI as GCC's
// demangler spells them (x86_64/aarch64 LP64 widths and classes), and the
// functions that build composite nodes: a class name with template arguments
// ("A<b, c<d> >", with the demangler's "> >"), a qualified name, a cv-qualified
// type, and a pointer or reference (reference collapsing applied, pointers placed
// inside function and array declarators: "void (*)(int)", "int (&) [3]"). Every
// builder maps over template argument packs element by element and carries the
// std::string ABI facts of its parts upward.
#pragma once

#include "itanium_reader.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::abi::detail {

struct Builtin {
    std::string_view code;  // "i", "Dn"
    const char* spelling;
    ParamClass klass;
    unsigned width;
    bool is_signed;
};

struct Operator {
    const char* code;
    const char* spelling;
};

const Builtin* find_builtin(std::string_view code);  // <builtin-type>: "i" -> int, "Dn" -> decltype(nullptr)
std::span<const Operator> operators();               // "eq" -> "==", ...

Node plain(std::string text);
Node builtin_node(const Builtin& builtin);
std::string join_texts(const std::vector<Node>& nodes);  // "a, b", packs expanded
void set_class_facts(Node& node);  // class passed by value; which std::string it is
Node with_template_args(const Node& prefix, std::vector<Node> args);
Node qualified_child(const Node& prefix, const Node& component);
Node cv_qualified(const Node& type, const std::string& cv);
Node indirection(const Node& type, const std::string& symbol);  // "*", "&" or "&&"

}  // namespace wheelfix::abi::detail
