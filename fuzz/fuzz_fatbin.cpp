// Fuzz target: the CUDA fatbin parser on the bytes of one .nv_fatbin section.
//
// Refusals must be FatbinError. Every entry returned must lie inside the section
// (header and payload), entries come in section order, and the derived names and
// the "runs on" judgement must work on whatever the header said.
#include "fuzz_support.hpp"

#include "wheelfix/analysis/elf_report.hpp"
#include "wheelfix/cuda/fatbin.hpp"

using namespace wheelfix;
using fuzz::expect_clean;
using fuzz::fuzz_bug;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    expect_clean<cuda::FatbinError>([&] {
        const auto entries = cuda::parse_fatbin_section({data, size});
        std::uint64_t previous = 0;
        for (const auto& entry : entries) {
            if (entry.offset < previous) fuzz_bug("entries out of order");
            if (entry.offset > size || entry.header_size > size - entry.offset ||
                entry.payload_size > size - entry.offset - entry.header_size)
                fuzz_bug("entry extends past the section");
            previous = entry.offset + entry.header_size;
            (void)entry.arch_name();
            (void)entry.kind_name();
            for (auto sm : analysis::kBlackwellSms) (void)cuda::entry_runs_on(entry, sm);
        }
    });
    return 0;
}
