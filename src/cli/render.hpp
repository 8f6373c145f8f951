// Rendering helpers shared by the commands: JSON for the report structures
// (schema "wheelfix.<command>/1") and text formatting for people.
#pragma once

#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/policy/evaluate.hpp"
#include "wheelfix/util/json.hpp"

#include <string>

namespace wheelfix::cli {

inline constexpr int kJsonSchemaVersion = 1;

std::string human_size(std::uint64_t bytes);  // "812 KiB", "541.2 MiB"
std::string join(const std::vector<std::string>& items, std::string_view separator);

void write_json(JsonWriter& json, const analysis::ElfReport& report);
// What --target found for one input; profile null when no profile was asked for
// (then the functions below write nothing).
struct TargetFindings {
    const policy::Profile* profile = nullptr;
    std::vector<policy::Finding> findings;
};
// A wheel report; with a target, also its "target" field.
void write_json(JsonWriter& json, const analysis::WheelReport& report, const TargetFindings* target = nullptr);
void write_json(JsonWriter& json, const TargetFindings& target);  // the "target" key and its object
void write_json(JsonWriter& json, const wheel::VerifyFinding& finding);

std::string render_text(const analysis::ElfReport& report, bool verbose);
std::string render_text(const analysis::WheelReport& report, bool verbose);
std::string render_text(const TargetFindings& target);

}  // namespace wheelfix::cli
