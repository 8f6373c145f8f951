// `inspect --format markdown`: the inspect reports as GitHub-flavoured Markdown,
// for CI job summaries ($GITHUB_STEP_SUMMARY, GitLab and Buildkite annotations).
//
// Contract: one section per input, "### `<path>`" then tables (util/table.hpp):
// for a wheel its facts (name, version, tags, torch, RECORD, platform and each
// lying tag), one row per ELF member (size, glibc/libstdc++ needs, honest tag,
// search path, CUDA runtime, fatbin, Blackwell), one row per CUDA module, and the
// --target findings when a profile was given; for an ELF file its facts and
// findings. Failures are marked with the words the text output uses (NO, LIES)
// and a leading "❌", passes with "✅"; never ANSI colour. Sections are separated
// by one blank line and the document ends with a newline.
#pragma once

#include "render.hpp"

#include <string>

namespace wheelfix::cli {

std::string render_markdown(const analysis::WheelReport& report, const TargetFindings& target);
std::string render_markdown(const analysis::ElfReport& report, const TargetFindings& target);

}  // namespace wheelfix::cli
