// `inspect`'s run over one input: what is inside a wheel or an ELF file and, with a
// profile, what keeps it from the profile. The CLI renders the result.
//
// Contract: inspect_input(path, profile, context) reads a path ending in .whl as a
// wheel (inspect_wheel), every NEEDED resolved against `context`
// (attach_libraries), its torch range from the bundled atlas (bundled_releases,
// torch_range_of) and its variant's torch claim judged by that same run
// (variant.hpp judge_torch_claim); any other path as one ELF file (inspect_file).
// With a profile, the input is judged against it (profile_findings.hpp evaluate)
// and the profile's SMs are covered per CUDA module (modules.hpp sm_coverage);
// `profile` must outlive the result, which points at it. Errors are InputErrors naming the input.
// has_findings() is what makes `inspect` exit 1: a profile finding, or a wheel
// variant whose label its binaries contradict.
#pragma once

#include "wheelfix/analysis/elf_report.hpp"
#include "wheelfix/analysis/needed_resolution.hpp"
#include "wheelfix/analysis/profile_findings.hpp"
#include "wheelfix/analysis/wheel_report.hpp"

#include <string>
#include <variant>

namespace wheelfix::analysis {

struct InspectedInput {
    std::variant<WheelReport, ElfReport> report;
    TargetFindings judged;

    bool has_findings() const;
};

InspectedInput inspect_input(const std::string& path, const policy::Profile* profile, const SearchContext& context);

}  // namespace wheelfix::analysis
