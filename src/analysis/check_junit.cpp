// JUnit XML for `check --junit` (check_junit.hpp has the contract).
#include "wheelfix/analysis/check_junit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace wheelfix::analysis {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence at text[i], 0 when it is not one.
std::size_t utf8_length(std::string_view text, std::size_t i) {
    auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    unsigned char lead = byte(i);
    std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
    if (length == 0 || (length > 1 && lead < 0xC2) || i + length > text.size()) return 0;
    for (std::size_t k = 1; k < length; ++k)
        if ((byte(i + k) & 0xC0) != 0x80) return 0;
    return length;
}

std::string xml_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        std::size_t length = utf8_length(text, i);
        if (length == 0) {
            out += kReplacement;
            ++i;
            continue;
        }
        if (length > 1) {
            out.append(text.substr(i, length));
            i += length;
            continue;
        }
        char c = text[i++];
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&apos;"; break;
            case '\t': case '\n': out += c; break;
            default: static_cast<unsigned char>(c) < 0x20 ? out += kReplacement : out += c;
        }
    }
    return out;
}

bool fails(const abi::ElfCheck& check) { return !check.unresolved.empty() || !check.missing_libraries.empty(); }

std::size_t failures(const TorchResult& torch) {
    return static_cast<std::size_t>(std::count_if(torch.members.begin(), torch.members.end(), fails));
}

std::string failure_text(const abi::ElfCheck& check) {
    std::string out;
    for (const auto& library : check.missing_libraries) out += "missing library: " + library + "\n";
    for (const auto& symbol : check.unresolved) {
        out += fmt::format("unresolved{}: {}\n", symbol.is_torch ? "" : " (not torch)", symbol.demangled);
        out += fmt::format("  symbol: {}{}\n", symbol.name, symbol.version.empty() ? "" : "@" + symbol.version);
        for (const auto& miss : symbol.near_misses)
            out += fmt::format("  near miss: {}  [{}]: {}\n", miss.demangled, miss.library, miss.compatibility.reason);
    }
    return out;
}

std::string testcase(const abi::ElfCheck& check, const std::string& classname) {
    std::string head = fmt::format("    <testcase classname=\"{}\" name=\"{}\"", xml_escape(classname), xml_escape(check.member));
    if (!fails(check)) return head + "/>\n";
    std::string message = fmt::format("{} unresolved symbol(s), {} missing librar{}", check.unresolved.size(),
                                      check.missing_libraries.size(), check.missing_libraries.size() == 1 ? "y" : "ies");
    return head + fmt::format(">\n      <failure type=\"unresolved\" message=\"{}\">{}</failure>\n    </testcase>\n",
                              xml_escape(message), xml_escape(failure_text(check)));
}

std::string testsuite(const TorchResult& torch, const CheckReport& report) {
    std::string classname = std::filesystem::path(report.input).filename().string();
    std::string out = fmt::format(
        "  <testsuite name=\"torch {}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n"
        "    <properties>\n"
        "      <property name=\"input\" value=\"{}\"/>\n"
        "      <property name=\"torch_source\" value=\"{}\"/>\n"
        "    </properties>\n",
        xml_escape(torch.label), torch.members.size(), failures(torch), xml_escape(report.input), xml_escape(torch.source));
    for (const auto& check : torch.members) out += testcase(check, classname);
    return out + "  </testsuite>\n";
}

}  // namespace

std::string check_junit(const std::vector<CheckReport>& reports) {
    std::size_t tests = 0, failed = 0;
    for (const auto& report : reports)
        for (const auto& torch : report.torches) tests += torch.members.size(), failed += failures(torch);
    std::string out = fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                                  "<testsuites name=\"wheelfix check\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n",
                                  tests, failed);
    for (const auto& report : reports)
        for (const auto& torch : report.torches) out += testsuite(torch, report);
    return out + "</testsuites>\n";
}

}  // namespace wheelfix::analysis
