// The JSON documents of the analysis reports (schemas in docs/schema): the
// machine-readable contract of inspect, verify and check, written beside the types
// they serialise (check --junit's XML: check_junit.hpp), so a field added to a report and its key change together. The
// commands (src/cli) choose the document and print it; text for people stays there.
//
// Contract:
// - write_json(json, ElfReport) writes one ELF file's object (inspect/1 "elf_files"
//   entries, and an ELF input's "file"); write_json(json, WheelReport, target) a
//   wheel input's object, with its "target" key when target has a profile;
//   write_json(json, TargetFindings) the "target" key and its object (nothing
//   without a profile); write_json(json, VerifyFinding) a {member, problem} object.
// - check_json(report, extra) is the whole wheelfix.check/1 document of one input;
//   checks_json(reports, extras) the wheelfix.check/2 document of several: each
//   input's check/1 content without its "schema" key, in order, under "inputs".
//   `extra` / extras[i] write further keys of the input's object (its release
//   matrix). Keys are only ever added within a schema version.
// - write_matrix_json() writes the "matrix" key (releases with their verdicts, each
//   member's cells) and write_requirement_json() the "requirement" key (the torch
//   verdict: pin, range, stable-ABI use) of check/1 and the --torch auto documents.
#pragma once

#include "wheelfix/analysis/profile_findings.hpp"
#include "wheelfix/analysis/torch_check.hpp"
#include "wheelfix/analysis/torch_matrix.hpp"
#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/util/json.hpp"
#include "wheelfix/wheel/verify.hpp"

#include <functional>
#include <string>
#include <vector>

namespace wheelfix::analysis {

void write_json(JsonWriter& json, const ElfReport& report);
void write_json(JsonWriter& json, const WheelReport& report, const TargetFindings* target = nullptr);
void write_json(JsonWriter& json, const TargetFindings& target);
void write_json(JsonWriter& json, const wheel::VerifyFinding& finding);

std::string check_json(const CheckReport& report, const std::function<void(JsonWriter&)>& extra = {});
std::string checks_json(const std::vector<CheckReport>& reports,
                        const std::vector<std::function<void(JsonWriter&)>>& extras = {});
void write_matrix_json(JsonWriter& json, const TorchMatrix& matrix);
void write_requirement_json(JsonWriter& json, const TorchRequirement& requirement, const StableAbiUse& stable);

}  // namespace wheelfix::analysis
