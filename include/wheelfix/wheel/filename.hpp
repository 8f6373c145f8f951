// Wheel file names (PEP 427 / PEP 491 / binary distribution format spec).
//
// Contract: parse_filename("sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_x86_64.whl")
// splits {distribution}-{version}(-{build})?-{python}-{abi}-{platform}(-{label})?.whl
// (the variant label of PEP 825; with six parts, a third part starting with a digit
// is a build tag, as a python tag never does, else the sixth is a label) and
// expands compressed tag sets ("py2.py3", "manylinux_2_17_x86_64.manylinux2014_x86_64")
// into their components. Throws InputError naming the file for any other shape.
// format_filename() is the exact inverse for names that round-trip, with the
// distribution escaped as the spec says (runs of -_. become '_'; the name is kept
// in the case it was given). tags() lists every python-abi-platform triple.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::wheel {

struct WheelFilename {
    std::string distribution;  // as in the file name (already escaped)
    std::string version;       // as in the file name
    std::string build;         // optional build tag, empty if none
    std::vector<std::string> python_tags;
    std::vector<std::string> abi_tags;
    std::vector<std::string> platform_tags;
    std::string variant_label;  // PEP 825 variant label, empty if none

    // Every "python-abi-platform" combination, in file-name order.
    std::vector<std::string> tags() const;
};

WheelFilename parse_filename(std::string_view filename);
std::string format_filename(const WheelFilename& name);

// PEP 825: a variant label is ^[0-9a-z_.]{1,16}$ ("null" is the null variant).
inline constexpr std::size_t kVariantLabelMax = 16;
bool valid_variant_label(std::string_view label);
// The wheel file name `path` names, with its variant label set to `label` (kept
// directory; idempotent).
std::string with_variant_label(std::string_view filename, const std::string& label);

// PEP 427 escaping of a distribution name for file and dist-info names:
// runs of '-', '_', '.' become one '_'.
std::string escape_distribution(std::string_view name);
// PEP 503 normalized project name: lowercase, runs of -_. become '-'.
std::string normalize_project_name(std::string_view name);

}  // namespace wheelfix::wheel
