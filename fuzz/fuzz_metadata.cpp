// Fuzz target: the wheel metadata parsers on text — METADATA/WHEEL headers,
// Requires-Dist requirements, RECORD csv, wheel file names, PEP 440 versions — and
// the METADATA edits retag makes.
//
// Every parser sees the whole input. Refusals must be InputErrors. What parses
// must survive a round trip: headers ('\n' line ends) and RECORD formatted and parsed again give
// the same data; a file name formatted and parsed again gives the same parts
// (the distribution escaped); a
// version's normalized spelling parses to an equal version with the same
// spelling; a METADATA edited by set_version/pin_torch still parses and carries
// the new Version.
#include "fuzz_support.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/wheel/filename.hpp"
#include "wheelfix/wheel/metadata.hpp"
#include "wheelfix/wheel/metadata_edit.hpp"
#include "wheelfix/wheel/record.hpp"
#include "wheelfix/wheel/version.hpp"

#include <string>
#include <string_view>

using namespace wheelfix;
using fuzz::expect_clean;
using fuzz::fuzz_bug;

namespace {

bool same_records(const std::vector<wheel::RecordEntry>& a, const std::vector<wheel::RecordEntry>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].path != b[i].path || a[i].hash_algorithm != b[i].hash_algorithm ||
            a[i].hash_value != b[i].hash_value || a[i].size != b[i].size)
            return false;
    return true;
}

void headers(std::string_view text) {
    expect_clean<InputError>([&] {
        const auto parsed = wheel::parse_headers(text, "METADATA");
        // The round trip holds for '\n' line ends (a value ending in a stray '\r' would
        // lose it); format_headers only ever sees files we parsed from such text.
        const auto again = wheel::parse_headers(wheel::format_headers(parsed), "METADATA");
        if (text.find('\r') == std::string_view::npos && (again.headers != parsed.headers || again.body != parsed.body))
            fuzz_bug("headers changed in a format/parse round trip");
        for (const auto& requirement : parsed.all("Requires-Dist"))
            expect_clean<InputError>([&] { (void)wheel::parse_requirement(requirement); });
        if (!parsed.first("Version")) return;
        const auto edited = wheel::set_version(text, "1.2.3+cu130.torch2.10");
        const auto pinned = wheel::pin_torch(edited, wheel::SpecifierSet::parse(">=2.10,<2.11"));
        const auto reread = wheel::parse_headers(pinned.text, "METADATA");
        if (reread.first("Version") != "1.2.3+cu130.torch2.10") fuzz_bug("set_version did not set Version");
    });
}

void record(std::string_view text) {
    expect_clean<InputError>([&] {
        const auto entries = wheel::parse_record(text, "RECORD");
        const auto again = wheel::parse_record(wheel::format_record(entries), "RECORD");
        if (!same_records(entries, again)) fuzz_bug("RECORD changed in a format/parse round trip");
    });
}

void filename(std::string_view text) {
    expect_clean<InputError>([&] {
        const auto parsed = wheel::parse_filename(text);
        (void)parsed.tags();
        const auto again = wheel::parse_filename(wheel::format_filename(parsed));
        if (again.distribution != wheel::escape_distribution(parsed.distribution) || again.version != parsed.version ||
            again.build != parsed.build || again.tags() != parsed.tags())
            fuzz_bug("file name changed in a format/parse round trip");
    });
    (void)wheel::escape_distribution(text);
    (void)wheel::normalize_project_name(text);
}

void version(std::string_view text) {
    expect_clean<InputError>([&] {
        const auto parsed = wheel::Version::parse(text);
        const auto normalized = parsed.normalized();
        const auto again = wheel::Version::parse(normalized);
        if (again != parsed) fuzz_bug("normalized version compares unequal: " + normalized);
        if (again.normalized() != normalized) fuzz_bug("normalizing is not idempotent: " + normalized);
        (void)parsed.public_part();
        (void)(parsed <=> wheel::Version::parse("2.10.0+cu130"));
    });
    if (wheel::Version::try_parse(text).has_value() != [&] {
            try {
                (void)wheel::Version::parse(text);
                return true;
            } catch (const InputError&) {
                return false;
            }
        }())
        fuzz_bug("try_parse and parse disagree");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    headers(text);
    record(text);
    filename(text);
    version(text);
    // The first line alone, the way a short field reaches the name and version parsers.
    const auto line = text.substr(0, text.find('\n'));
    if (line.size() != text.size()) {
        filename(line);
        version(line);
    }
    return 0;
}
