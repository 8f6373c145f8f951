// The inspect reports as GitHub-flavoured Markdown (`inspect --format markdown`),
// for CI job summaries ($GITHUB_STEP_SUMMARY, GitLab and Buildkite annotations).
//
// Contract: one section per input, "### `<path>`" then tables (util/table.hpp):
// for a wheel its facts (name, version, tags, torch, RECORD, platform and each
// lying tag), one row per ELF member (size, glibc/libstdc++ needs, honest tag,
// search path, CUDA runtime, fatbin, Blackwell), one row per CUDA module, and the
// --target findings when a profile was given; for an ELF file its facts and
// findings. Failures are marked with the words the text output uses (NO, LIES)
// and a leading "❌", passes with "✅"; never ANSI colour. Sections are separated
// by one blank line and the document ends with a newline. One module per output
// format of one record: this is the Markdown; report_text.hpp is the text, whose
// phrases it reuses.
#pragma once

#include "wheelfix/analysis/report_text.hpp"

#include <string>

namespace wheelfix::analysis {

std::string render_markdown(const WheelReport& report, const TargetFindings& target);
std::string render_markdown(const ElfReport& report, const TargetFindings& target);

}  // namespace wheelfix::analysis
