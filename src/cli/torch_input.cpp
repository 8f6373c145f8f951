// load_torch: the torch inputs of check and index (torch_input.hpp has the contract).
#include "torch_input.hpp"

#include "wheelfix/util/files.hpp"

#include "render.hpp"

#include <fmt/format.h>


namespace wheelfix::cli {

namespace {

void report(const std::string& wheel, const abi::WheelReadStats& stats) {
    const abi::MemberRead* largest = stats.largest_kept();
    if (largest == nullptr) return;
    fmt::print(stderr, "wheelfix: {}: inflated {} libraries ({}) once each, kept {} in all, at most {} at a time\n",
               wheel, stats.members.size(), human_size(stats.bytes_inflated()), human_size(stats.bytes_kept()),
               human_size(largest->kept));
    for (const abi::MemberRead& read : stats.members)
        fmt::print(stderr, "wheelfix:   {} {} -> kept {}\n", read.member, human_size(read.size), human_size(read.kept));
}

}  // namespace

void print_notes(const abi::SymbolIndex& index) {
    for (const std::string& note : index.notes) fmt::print(stderr, "wheelfix: note: {}\n", note);
}

abi::SymbolIndex load_torch(const std::string& path, const abi::IndexOptions& options, bool verbose) {
    if (!wheelfix::starts_like_zip(path)) {
        abi::SymbolIndex index = abi::load_index(path, options);
        print_notes(index);
        return index;
    }
    abi::WheelReadStats stats;
    abi::SymbolIndex index = abi::load_index_from_wheel(path, options, &stats);
    if (verbose) report(path, stats);
    return index;
}

}  // namespace wheelfix::cli
