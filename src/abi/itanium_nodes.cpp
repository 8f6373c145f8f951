// Building the nodes the Itanium reader returns: builtin and operator tables, and
// spelling composite types the way libiberty's cp-demangle does (itanium_nodes.hpp
// has the contract).
#include "itanium_nodes.hpp"

#include <array>

namespace wheelfix::abi::detail {

std::string Node::text() const {
    if (inner.empty()) return head + tail;
    if (tail.starts_with("[")) return head + "(" + inner + ") " + tail;  // "int (*) [3]"
    return head + "(" + inner + ")" + tail;
}

namespace {

// <builtin-type> codes, as GCC's demangler spells them (x86_64/aarch64 LP64): a
// single letter, or D and a letter.
constexpr Builtin kBuiltins[] = {
    {"v", "void", ParamClass::other, 0, false},
    {"w", "wchar_t", ParamClass::integer, 32, true},
    {"b", "bool", ParamClass::boolean, 8, false},
    {"c", "char", ParamClass::integer, 8, true},
    {"a", "signed char", ParamClass::integer, 8, true},
    {"h", "unsigned char", ParamClass::integer, 8, false},
    {"s", "short", ParamClass::integer, 16, true},
    {"t", "unsigned short", ParamClass::integer, 16, false},
    {"i", "int", ParamClass::integer, 32, true},
    {"j", "unsigned int", ParamClass::integer, 32, false},
    {"l", "long", ParamClass::integer, 64, true},
    {"m", "unsigned long", ParamClass::integer, 64, false},
    {"x", "long long", ParamClass::integer, 64, true},
    {"y", "unsigned long long", ParamClass::integer, 64, false},
    {"n", "__int128", ParamClass::integer, 128, true},
    {"o", "unsigned __int128", ParamClass::integer, 128, false},
    {"f", "float", ParamClass::floating, 32, true},
    {"d", "double", ParamClass::floating, 64, true},
    {"e", "long double", ParamClass::other, 80, true},  // x87: passed in memory
    {"g", "__float128", ParamClass::floating, 128, true},
    {"z", "...", ParamClass::other, 0, false},
    {"Dd", "decimal64", ParamClass::floating, 64, true},
    {"De", "decimal128", ParamClass::floating, 128, true},
    {"Df", "decimal32", ParamClass::floating, 32, true},
    {"Dh", "half", ParamClass::floating, 16, true},
    {"Di", "char32_t", ParamClass::integer, 32, false},
    {"Ds", "char16_t", ParamClass::integer, 16, false},
    {"Du", "char8_t", ParamClass::integer, 8, false},
    {"Da", "auto", ParamClass::other, 0, false},
    {"Dc", "decltype(auto)", ParamClass::other, 0, false},
    {"Dn", "decltype(nullptr)", ParamClass::pointer, 64, false},
};

constexpr Operator kOperators[] = {
    {"nw", "new"},   {"na", "new[]"}, {"dl", "delete"}, {"da", "delete[]"},
    {"ps", "+"},     {"ng", "-"},     {"ad", "&"},      {"de", "*"},
    {"co", "~"},     {"pl", "+"},     {"mi", "-"},      {"ml", "*"},
    {"dv", "/"},     {"rm", "%"},     {"an", "&"},      {"or", "|"},
    {"eo", "^"},     {"aS", "="},     {"pL", "+="},     {"mI", "-="},
    {"mL", "*="},    {"dV", "/="},    {"rM", "%="},     {"aN", "&="},
    {"oR", "|="},    {"eO", "^="},    {"ls", "<<"},     {"rs", ">>"},
    {"lS", "<<="},   {"rS", ">>="},   {"eq", "=="},     {"ne", "!="},
    {"lt", "<"},     {"gt", ">"},     {"le", "<="},     {"ge", ">="},
    {"ss", "<=>"},   {"nt", "!"},     {"aa", "&&"},     {"oo", "||"},
    {"pp", "++"},    {"mm", "--"},    {"cm", ","},      {"pm", "->*"},
    {"pt", "->"},    {"cl", "()"},    {"ix", "[]"},     {"qu", "?"},
    {"aw", "co_await"},
};

void merge_string_facts(TypeFacts& into, const TypeFacts& from) {
    into.old_abi_string = into.old_abi_string || from.old_abi_string;
    into.cxx11_abi_string = into.cxx11_abi_string || from.cxx11_abi_string;
}

// "name<args>" with the demangler's "> >" spacing.
std::string angle(const std::string& name, const std::vector<Node>& args) {
    std::string inside = join_texts(args);
    std::string out = name + "<" + inside;
    if (!inside.empty() && inside.back() == '>') out += ' ';
    return out + ">";
}

Node map_pack(const Node& pack, Node (*apply)(const Node&, const std::string&), const std::string& arg) {
    Node result = pack;
    result.pack.clear();
    for (const Node& element : pack.pack) result.pack.push_back(apply(element, arg));
    result.head = join_texts(result.pack);
    return result;
}

// Reference collapsing: T& & and T&& & are T&, T&& && is T&&, T& && is T&.
Node collapse_reference(const Node& reference, const std::string& symbol) {
    Node node = reference;
    std::string& spelled = node.inner.empty() ? node.head : node.inner;
    if (symbol == "&" && spelled.ends_with("&&")) spelled.pop_back();
    node.unqualified = node.text();
    return node;
}

}  // namespace

const Builtin* find_builtin(std::string_view code) {
    for (const Builtin& builtin : kBuiltins)
        if (builtin.code == code) return &builtin;
    return nullptr;
}

std::span<const Operator> operators() { return kOperators; }

Node plain(std::string text) {
    Node node;
    node.head = std::move(text);
    node.unqualified = node.head;
    return node;
}

Node builtin_node(const Builtin& builtin) {
    Node node = plain(builtin.spelling);
    node.facts.klass = builtin.klass;
    node.facts.width_bits = builtin.width;
    node.facts.is_signed = builtin.is_signed;
    return node;
}

std::string join_texts(const std::vector<Node>& nodes) {
    std::string out;
    for (const Node& node : nodes) {
        const std::string text = node.is_pack ? join_texts(node.pack) : node.text();
        if (node.is_pack && text.empty()) continue;  // an empty pack adds no argument
        if (!out.empty()) out += ", ";
        out += text;
    }
    return out;
}

// A class type's facts: passed by value as a class; which std::string it is.
void set_class_facts(Node& node) {
    node.facts.klass = ParamClass::class_by_value;
    const std::string& name = node.template_name.empty() ? node.unqualified : node.template_name;
    if (name == "std::__cxx11::basic_string") node.facts.cxx11_abi_string = true;
    if (name == "std::basic_string" || name == "std::string") node.facts.old_abi_string = true;
}

Node with_template_args(const Node& prefix, std::vector<Node> args) {
    Node node = plain(angle(prefix.text(), args));
    node.template_name = prefix.text();
    node.simple_name = prefix.simple_name;
    node.facts = prefix.facts;
    for (const Node& arg : args) {
        merge_string_facts(node.facts, arg.facts);
        for (const Node& element : arg.pack) merge_string_facts(node.facts, element.facts);
    }
    node.template_args = std::move(args);
    return node;
}

Node qualified_child(const Node& prefix, const Node& component) {
    Node node = plain(prefix.text() + "::" + component.text());
    node.simple_name = component.simple_name;
    node.facts = prefix.facts;
    merge_string_facts(node.facts, component.facts);
    return node;
}

Node cv_qualified(const Node& type, const std::string& cv) {
    if (type.is_pack) return map_pack(type, cv_qualified, cv);
    Node node = type;
    if (type.is_function) node.tail += cv;
    else if (type.is_array) node.head.insert(node.head.size() - 1, cv);  // before the space
    else {
        node.head = type.text() + cv;
        node.inner.clear();
        node.tail.clear();
    }
    node.unqualified = type.unqualified;
    node.referent.clear();
    return node;
}

// A pointer or reference to `type`; `symbol` is "*", "&" or "&&".
Node indirection(const Node& type, const std::string& symbol) {
    if (type.is_pack) return map_pack(type, indirection, symbol);
    if (symbol != "*" && type.facts.klass == ParamClass::reference) return collapse_reference(type, symbol);
    Node node;
    const bool declarator = type.is_function || type.is_array || !type.inner.empty();
    if (declarator) {
        node = type;
        node.inner = type.inner + symbol;
    } else {
        node = plain(type.text() + symbol);
    }
    node.is_function = node.is_array = false;
    node.template_args.clear();
    node.template_name.clear();
    node.unqualified = node.text();
    node.referent = declarator ? type.text() : type.unqualified;
    node.facts = TypeFacts{};
    node.facts.klass = symbol == "*" ? ParamClass::pointer : ParamClass::reference;
    node.facts.width_bits = 64;
    merge_string_facts(node.facts, type.facts);
    return node;
}

}  // namespace wheelfix::abi::detail
