// The writers' records as text (report_text.hpp has the contract).
#include "wheelfix/repair/report_text.hpp"

namespace wheelfix::repair {

std::vector<std::string> variant_lines(const VariantOutcome& variant) {
    std::vector<std::string> lines{"variant '" + variant.label + "' (variant.json schema " +
                                   wheel::variant_schema_name(variant.schema) + ")"};
    for (auto& line : wheel::property_lines(variant.properties)) lines.push_back("  " + line);
    return lines;
}

}  // namespace wheelfix::repair
