// Rendering helpers shared by the commands: JSON for the report structures
// (schema "wheelfix.<command>/1") and text formatting for people.
#pragma once

#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/util/json.hpp"

#include <string>

namespace wheelfix::cli {

inline constexpr int kJsonSchemaVersion = 1;

std::string human_size(std::uint64_t bytes);  // "812 KiB", "541.2 MiB"
std::string join(const std::vector<std::string>& items, std::string_view separator);

void write_json(JsonWriter& json, const analysis::ElfReport& report);
void write_json(JsonWriter& json, const analysis::WheelReport& report);
void write_json(JsonWriter& json, const wheel::VerifyFinding& finding);

std::string render_text(const analysis::ElfReport& report, bool verbose);
std::string render_text(const analysis::WheelReport& report, bool verbose);

}  // namespace wheelfix::cli
