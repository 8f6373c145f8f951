// Fuzz target: symbol names from hostile wheels — our Itanium signature parser
// (check's near misses, shim's forwarding decisions), demangling and the
// namespace test inspect uses.
//
// The input is one or two mangled names separated by a newline. None of these
// functions throws on any input (their contracts): parse_signature returns
// nullopt for what it cannot read, demangle returns the name unchanged. When both
// names parse, classify() must decide with a one-line reason.
#include "fuzz_support.hpp"

#include "wheelfix/abi/demangle.hpp"
#include "wheelfix/abi/signature.hpp"

#include <string_view>

using namespace wheelfix;
using fuzz::fuzz_bug;

namespace {

std::optional<abi::Signature> read_name(std::string_view name) {
    (void)abi::demangle(name);
    (void)abi::is_torch_namespace(abi::top_namespace(name));
    return abi::parse_signature(name);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto newline = text.find('\n');
    const auto first = text.substr(0, newline);
    const auto old_signature = read_name(first);
    if (newline == std::string_view::npos) return 0;
    const auto new_signature = read_name(text.substr(newline + 1));
    if (old_signature && new_signature) {
        const auto verdict = abi::classify(*old_signature, *new_signature);
        if (verdict.reason.empty() || verdict.reason.find('\n') != std::string::npos)
            fuzz_bug("classify gave no one-line reason");
        if (!verdict.reason.starts_with(verdict.forwardable ? "forwardable: " : "not forwardable: "))
            fuzz_bug("classify's reason does not start as its contract says: " + verdict.reason);
    }
    return 0;
}
