// The Itanium name reader: one recursive-descent pass over `_Z<encoding>` with the
// ABI's substitution table (itanium_reader.hpp has the contract).
//
// Substitution candidates follow the ABI (and GCC): every prefix of a nested name
// except the complete name of the entity being declared, an unscoped template
// name before its arguments, every non-builtin type (qualified types, pointers,
// references, function/array/member-pointer types, class names with and without
// their template arguments, template parameters). `St` and the S<x>
// abbreviations are never added themselves. Spellings follow libiberty's
// cp-demangle so that they agree with __cxa_demangle's output.
#include "itanium_reader.hpp"
#include "itanium_nodes.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

namespace wheelfix::abi::detail {

namespace {

struct ParseFailure {};

[[noreturn]] void fail() { throw ParseFailure{}; }

constexpr int kMaxDepth = 256;

// What a compiler puts in a <source-name>: identifier characters ('$' and '.' from
// GCC's clones and some ABIs, UTF-8 for extended identifiers). Anything else — a
// space, a control character, a newline a hostile symbol could carry into `check`
// output — is not a name we read.
bool is_identifier(std::string_view name) {
    return std::all_of(name.begin(), name.end(), [](char c) {
        auto byte = static_cast<unsigned char>(c);
        return std::isalnum(byte) || c == '_' || c == '$' || c == '.' || byte >= 0x80;
    });
}

class Reader {
public:
    explicit Reader(std::string_view text) : in_(text) {}

    std::optional<ParsedFunction> run() {
        if (!consume("_Z")) return std::nullopt;
        if (peek() == 'T' || peek() == 'G') return std::nullopt;  // vtables, typeinfo, guards, thunks
        bool is_function = false;
        ParsedFunction function = read_encoding(is_function);
        if (!is_function) return std::nullopt;
        if (pos_ < in_.size() && in_[pos_] != '.') fail();  // ".cold", ".isra.0": clone suffixes
        return function;
    }

private:
    class DepthGuard {
    public:
        explicit DepthGuard(int& depth) : depth_(depth) {
            if (++depth_ > kMaxDepth) fail();
        }
        ~DepthGuard() { --depth_; }
        DepthGuard(const DepthGuard&) = delete;
        DepthGuard& operator=(const DepthGuard&) = delete;

    private:
        int& depth_;
    };

    struct NameResult {
        Node node;
        FunctionName function;
    };

    char peek(std::size_t ahead = 0) const {
        return pos_ + ahead < in_.size() ? in_[pos_ + ahead] : '\0';
    }
    bool consume(char c) {
        if (peek() != c) return false;
        ++pos_;
        return true;
    }
    bool consume(std::string_view text) {
        if (in_.substr(pos_).substr(0, text.size()) != text) return false;
        pos_ += text.size();
        return true;
    }
    void expect(char c) {
        if (!consume(c)) fail();
    }
    bool at_digit() const { return std::isdigit(static_cast<unsigned char>(peek())) != 0; }
    bool at_stop() const { return pos_ >= in_.size() || peek() == 'E' || peek() == '.'; }

    void add_substitution(const Node& node) { substitutions_.push_back(node); }

    std::uint64_t read_number() {
        if (!at_digit()) fail();
        std::uint64_t value = 0;
        while (at_digit()) {
            value = value * 10 + static_cast<std::uint64_t>(in_[pos_++] - '0');
            if (value > in_.size()) fail();  // no length or index can exceed the name
        }
        return value;
    }

    // <seq-id> _ : base 36 with digits and upper-case letters; "S_" is 0, "S0_" is 1.
    std::size_t read_seq_id() {
        if (consume('_')) return 0;
        std::size_t value = 0;
        while (peek() != '_') {
            const char c = peek();
            if (std::isdigit(static_cast<unsigned char>(c))) value = value * 36 + static_cast<std::size_t>(c - '0');
            else if (c >= 'A' && c <= 'Z') value = value * 36 + static_cast<std::size_t>(c - 'A' + 10);
            else fail();
            if (value > in_.size()) fail();
            ++pos_;
        }
        ++pos_;
        return value + 1;
    }

    // ---- encodings -------------------------------------------------------

    ParsedFunction read_encoding(bool& is_function) {
        DepthGuard guard(depth_);
        ParsedFunction function;
        NameResult name = read_name();
        function.name = std::move(name.function);
        function.name.qualified = name.node.text();
        is_function = !at_stop();
        if (!is_function) return function;
        const std::vector<Node>* saved = template_params_;
        if (function.name.ends_in_template_args) template_params_ = &function.name.template_args;
        if (function.name.ends_in_template_args && !function.name.is_ctor_dtor_or_conversion)
            read_type();  // the return type of a function template specialization
        function.params = read_parameters();
        template_params_ = saved;
        return function;
    }

    std::vector<Node> read_parameters() {
        std::vector<Node> params;
        while (!at_stop()) {
            Node param = read_type();
            if (param.is_pack) params.insert(params.end(), param.pack.begin(), param.pack.end());
            else params.push_back(std::move(param));
        }
        if (params.size() == 1 && params[0].text() == "void") params.clear();
        return params;
    }

    // ---- names -----------------------------------------------------------

    NameResult read_name() {
        DepthGuard guard(depth_);
        if (peek() == 'N') return read_nested_name();
        if (peek() == 'Z') return read_local_name();
        NameResult result;
        bool from_table = false;
        if (consume("St")) {
            result.node = qualified_child(plain("std"), read_unqualified_name(result.function));
        } else if (peek() == 'S') {
            result.node = read_substitution();
            from_table = true;
            if (peek() != 'I') fail();  // a bare substitution is not a name
        } else {
            result.node = read_unqualified_name(result.function);
        }
        if (peek() == 'I') {
            if (!from_table) add_substitution(result.node);  // <unscoped-template-name>
            std::vector<Node> args = read_template_args();
            result.function.ends_in_template_args = true;
            result.function.template_args = args;
            result.node = with_template_args(result.node, std::move(args));
        }
        return result;
    }

    NameResult read_nested_name() {
        expect('N');
        NameResult result;
        read_member_qualifiers(result.function);
        Node prefix;
        bool have_prefix = false;
        bool pending = false;  // prefix is a substitution candidate once something follows it
        while (!consume('E')) {
            if (pos_ >= in_.size()) fail();
            if (have_prefix && pending) add_substitution(prefix);
            pending = true;
            result.function.ends_in_template_args = false;
            if (peek() != 'I') result.function.is_ctor_dtor_or_conversion = false;  // a template ctor keeps it
            read_nested_component(prefix, have_prefix, pending, result.function);
            have_prefix = true;
        }
        if (!have_prefix) fail();
        result.node = prefix;
        return result;
    }

    void read_member_qualifiers(FunctionName& function) {
        while (peek() == 'r' || peek() == 'V' || peek() == 'K') {
            if (peek() == 'K') function.const_member = true;
            ++pos_;
        }
        if (peek() == 'R' || peek() == 'O') ++pos_;  // & / && ref-qualifier
    }

    void read_nested_component(Node& prefix, bool have_prefix, bool& pending, FunctionName& function) {
        const char c = peek();
        if (c == 'S' && peek(1) == 't') {
            pos_ += 2;
            prefix = plain("std");
            pending = false;
        } else if (c == 'S') {
            prefix = read_substitution();
            pending = false;
        } else if (c == 'I') {
            if (!have_prefix) fail();
            std::vector<Node> args = read_template_args();
            function.ends_in_template_args = true;
            function.template_args = args;
            prefix = with_template_args(prefix, std::move(args));
        } else if (c == 'T') {
            prefix = read_template_param();
        } else if (c == 'C' || (c == 'D' && std::isdigit(static_cast<unsigned char>(peek(1))))) {
            if (!have_prefix) fail();
            prefix = qualified_child(prefix, read_ctor_dtor(prefix));
            function.is_ctor_dtor_or_conversion = true;
        } else {
            Node component = read_unqualified_name(function);
            prefix = have_prefix ? qualified_child(prefix, component) : component;
        }
    }

    Node read_ctor_dtor(const Node& prefix) {
        const bool destructor = peek() == 'D';
        ++pos_;
        if (peek() == 'I') fail();  // inheriting constructors
        if (!at_digit()) fail();
        ++pos_;
        std::string name = prefix.simple_name.empty() ? prefix.text() : prefix.simple_name;
        return named((destructor ? "~" : "") + name);
    }

    // <unqualified-name>: source name, operator, unnamed type or lambda, then ABI tags.
    Node read_unqualified_name(FunctionName& function) {
        consume('L');  // internal linkage
        Node node;
        if (at_digit()) node = read_source_name();
        else if (consume("Ut")) node = read_unnamed_type();
        else if (consume("Ul")) node = read_lambda();
        else node = read_operator_name(function);
        while (consume('B')) {
            Node tag = read_source_name();
            node.head += "[abi:" + tag.head + "]";
            node.unqualified = node.head;
        }
        return node;
    }

    Node read_source_name() {
        const std::uint64_t length = read_number();
        if (length == 0 || pos_ + length > in_.size()) fail();
        std::string name(in_.substr(pos_, length));
        pos_ += length;
        if (!is_identifier(name)) fail();
        if (name.starts_with("_GLOBAL__N")) name = "(anonymous namespace)";
        return named(name);
    }

    std::string read_discriminated_number() {
        std::uint64_t number = 1;
        if (at_digit()) number = read_number() + 2;
        expect('_');
        return std::to_string(number);
    }

    Node read_unnamed_type() { return named("{unnamed type#" + read_discriminated_number() + "}"); }

    Node read_lambda() {
        std::vector<Node> params = read_parameters();
        expect('E');
        return named("{lambda(" + join_texts(params) + ")#" + read_discriminated_number() + "}");
    }

    Node read_operator_name(FunctionName& function) {
        if (consume("cv")) {
            function.is_ctor_dtor_or_conversion = true;
            return named("operator " + read_type().text());
        }
        if (consume("li")) return named("operator\"\" " + read_source_name().head);
        for (const Operator& op : operators()) {
            if (!consume(op.code)) continue;
            std::string spelling = op.spelling;
            const bool word = std::isalpha(static_cast<unsigned char>(spelling[0])) != 0;
            return named("operator" + std::string(word ? " " : "") + spelling);
        }
        fail();
    }

    // Z <function encoding> E <entity name> [<discriminator>]
    NameResult read_local_name() {
        expect('Z');
        bool is_function = false;
        ParsedFunction enclosing = read_encoding(is_function);
        expect('E');
        std::string scope = enclosing.name.qualified;
        if (is_function) scope += "(" + join_texts(enclosing.params) + ")" +
                                  (enclosing.name.const_member ? " const" : "");
        NameResult result;
        if (consume('s')) {
            result.node = plain(scope + "::string literal");
        } else {
            NameResult entity = read_name();
            result.function = std::move(entity.function);
            result.node = plain(scope + "::" + entity.node.text());
            result.node.simple_name = entity.node.simple_name;
        }
        if (consume('_')) {  // <discriminator>: _ <digit> or __ <number> _
            const bool long_form = consume('_');
            read_number();
            if (long_form) expect('_');
        }
        return result;
    }

    // ---- substitutions and template parameters ---------------------------

    Node read_substitution() {
        expect('S');
        const char c = peek();
        if (c == '_' || at_digit() || (c >= 'A' && c <= 'Z')) {
            const std::size_t index = read_seq_id();
            if (index >= substitutions_.size()) fail();
            return substitutions_[index];
        }
        ++pos_;
        switch (c) {
        case 'a': return named("std::allocator", "allocator");
        case 'b': return named("std::basic_string", "basic_string");
        case 's': {
            Node node = named("std::string", "basic_string");
            set_class_facts(node);
            return node;
        }
        case 'i': return named("std::istream", "basic_istream");
        case 'o': return named("std::ostream", "basic_ostream");
        case 'd': return named("std::iostream", "basic_iostream");
        default: fail();
        }
    }

    // A name whose last component, for constructors, is `simple` (by default the whole spelling).
    static Node named(std::string spelling, std::string simple = {}) {
        Node node = plain(std::move(spelling));
        node.simple_name = simple.empty() ? node.head : std::move(simple);
        return node;
    }

    Node read_template_param() {
        expect('T');
        const std::size_t index = read_seq_id();
        if (template_params_ == nullptr || index >= template_params_->size()) fail();
        return (*template_params_)[index];
    }

    std::vector<Node> read_template_args() {
        DepthGuard guard(depth_);
        expect('I');
        std::vector<Node> args;
        while (!consume('E')) {
            if (pos_ >= in_.size()) fail();
            args.push_back(read_template_arg());
        }
        return args;
    }

    Node read_template_arg() {
        if (peek() == 'L') return read_literal();
        if (peek() == 'X') fail();  // expressions
        if (consume('J')) {
            Node pack;
            pack.is_pack = true;
            while (!consume('E')) {
                if (pos_ >= in_.size()) fail();
                pack.pack.push_back(read_template_arg());
            }
            pack.head = join_texts(pack.pack);
            return pack;
        }
        return read_type();
    }

    Node read_literal() {
        expect('L');
        if (consume("_Z")) {
            bool is_function = false;
            ParsedFunction entity = read_encoding(is_function);
            expect('E');
            return plain(entity.name.qualified);
        }
        Node type = read_type();
        const bool negative = consume('n');
        const std::size_t start = pos_;
        while (pos_ < in_.size() && in_[pos_] != 'E') ++pos_;
        std::string value(in_.substr(start, pos_ - start));
        expect('E');
        return plain(literal_spelling(type.text(), value, negative));
    }

    static std::string literal_spelling(const std::string& type, const std::string& value, bool negative) {
        const std::string number = (negative ? "-" : "") + value;
        if (type == "bool") return value == "0" ? "false" : "true";
        if (type == "int") return number;
        if (type == "unsigned int") return number + "u";
        if (type == "long") return number + "l";
        if (type == "unsigned long") return number + "ul";
        if (type == "long long") return number + "ll";
        if (type == "unsigned long long") return number + "ull";
        return "(" + type + ")" + number;
    }

    // ---- types -----------------------------------------------------------

    Node read_type() {
        DepthGuard guard(depth_);
        const char c = peek();
        if (const Builtin* builtin = find_builtin(std::string_view(&c, 1))) {
            ++pos_;
            return builtin_node(*builtin);
        }
        switch (c) {
        case 'D': return read_d_type();
        case 'r': case 'V': case 'K': return remember(read_qualified_type());
        case 'P': ++pos_; return remember(indirection(read_type(), "*"));
        case 'R': ++pos_; return remember(indirection(read_type(), "&"));
        case 'O': ++pos_; return remember(indirection(read_type(), "&&"));
        case 'C': ++pos_; return remember(plain(read_type().text() + " _Complex"));
        case 'G': ++pos_; return remember(plain(read_type().text() + " _Imaginary"));
        case 'F': return remember(read_function_type());
        case 'A': return remember(read_array_type());
        case 'M': return remember(read_member_pointer_type());
        case 'T': return read_template_param_type();
        case 'S': return read_substitution_type();
        case 'u': ++pos_; return remember(read_source_name());
        default: break;
        }
        if (c == 'N' || c == 'Z' || std::isdigit(static_cast<unsigned char>(c))) return read_class_type();
        fail();
    }

    Node remember(Node node) {
        add_substitution(node);
        return node;
    }

    Node read_d_type() {
        const char c = peek(1);
        const char code[] = {'D', c};
        if (const Builtin* builtin = find_builtin(std::string_view(code, 2))) {
            pos_ += 2;
            return builtin_node(*builtin);
        }
        if (c == 'F') {
            pos_ += 2;
            Node node = plain("_Float" + std::to_string(read_number()));
            if (consume('b')) node = plain("std::bfloat16_t");
            else expect('_');
            node.facts.klass = ParamClass::floating;
            return node;
        }
        if (c == 'p') {  // pack expansion
            pos_ += 2;
            Node node = read_type();
            add_substitution(node);
            return node;
        }
        if (c == 'o') {  // noexcept function type
            pos_ += 2;
            return read_type();
        }
        fail();
    }

    Node read_qualified_type() {
        std::string cv;
        bool is_const = false, is_volatile = false, is_restrict = false;
        while (true) {
            if (consume('r')) is_restrict = true;
            else if (consume('V')) is_volatile = true;
            else if (consume('K')) is_const = true;
            else break;
        }
        if (is_const) cv += " const";
        if (is_volatile) cv += " volatile";
        if (is_restrict) cv += " restrict";
        return cv_qualified(read_type(), cv);
    }

    Node read_function_type() {
        expect('F');
        consume('Y');
        Node result_type = read_type();
        std::vector<Node> params;
        std::string ref;
        while (!consume('E')) {
            if (pos_ >= in_.size()) fail();
            if ((peek() == 'R' || peek() == 'O') && peek(1) == 'E') {
                ref = peek() == 'R' ? " &" : " &&";
                ++pos_;
                continue;
            }
            Node param = read_type();
            if (param.is_pack) params.insert(params.end(), param.pack.begin(), param.pack.end());
            else params.push_back(std::move(param));
        }
        if (params.size() == 1 && params[0].text() == "void") params.clear();
        Node node;
        node.head = result_type.text() + " ";
        node.tail = "(" + join_texts(params) + ")" + ref;
        node.is_function = true;
        node.unqualified = node.text();
        return node;
    }

    Node read_array_type() {
        expect('A');
        std::string dimension;
        if (at_digit()) dimension = std::to_string(read_number());
        else if (peek() == 'X') fail();
        expect('_');
        Node element = read_type();
        Node node;
        if (element.is_array) {
            node = element;
            node.tail = "[" + dimension + "]" + element.tail;
        } else {
            node.head = element.text() + " ";
            node.tail = "[" + dimension + "]";
        }
        node.is_array = true;
        node.inner.clear();
        node.unqualified = node.text();
        return node;
    }

    Node read_member_pointer_type() {
        expect('M');
        const Node klass = read_type();
        const Node member = read_type();
        Node node;
        if (member.is_function) {
            node = member;
            node.inner = klass.text() + "::*" + member.inner;
            node.is_function = false;
        } else {
            node = plain(member.text() + " " + klass.text() + "::*");
        }
        node.unqualified = node.text();
        node.facts = TypeFacts{};
        return node;
    }

    Node read_template_param_type() {
        Node node = remember(read_template_param());
        if (peek() == 'I') node = remember(with_template_args(node, read_template_args()));
        return node;
    }

    Node read_substitution_type() {
        if (consume("St")) {
            FunctionName unused;
            Node node = qualified_child(plain("std"), read_unqualified_name(unused));
            set_class_facts(node);
            add_substitution(node);
            if (peek() != 'I') return node;
            node = with_template_args(node, read_template_args());
            set_class_facts(node);
            return remember(node);
        }
        Node node = read_substitution();
        if (peek() != 'I') return node;
        node = with_template_args(node, read_template_args());
        set_class_facts(node);
        return remember(node);
    }

    Node read_class_type() {
        NameResult name = read_name();
        Node node = name.node;
        set_class_facts(node);
        return remember(node);
    }

    std::string_view in_;
    std::size_t pos_ = 0;
    int depth_ = 0;
    std::vector<Node> substitutions_;
    const std::vector<Node>* template_params_ = nullptr;
};

}  // namespace

std::optional<ParsedFunction> read_function(std::string_view mangled) {
    try {
        return Reader(mangled).run();
    } catch (const ParseFailure&) {
        return std::nullopt;
    }
}

}  // namespace wheelfix::abi::detail
