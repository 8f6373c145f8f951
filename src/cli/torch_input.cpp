// load_torch: analysis::load_torch, with -v reporting what a torch wheel cost (torch_input.hpp).
#include "torch_input.hpp"

#include "wheelfix/analysis/torch_check.hpp"
#include "wheelfix/util/text.hpp"

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
    abi::WheelReadStats stats;
    abi::SymbolIndex index = analysis::load_torch(path, options, &stats);
    print_notes(index);
    if (verbose) report(path, stats);
    return index;
}

analysis::TorchLoader torch_loader(bool verbose) {
    return [verbose](const std::string& path, const abi::IndexOptions& options) { return load_torch(path, options, verbose); };
}

}  // namespace wheelfix::cli
