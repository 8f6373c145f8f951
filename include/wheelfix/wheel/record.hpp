// RECORD: the wheel's manifest of paths, hashes and sizes.
//
// Contract: parse_record() reads the CSV dialect Python's csv module writes
// (comma separated, '"' quoting with doubled quotes, \n or \r\n line ends). Each row
// must have exactly three fields: path, hash ("algo=urlsafe-b64-nopad" or empty),
// size (decimal or empty). Malformed rows are an InputError naming RECORD and the
// line. format_record() writes rows back with quoting only where needed, '\n' line
// ends. Accepted hash algorithms are sha256, sha384 and sha512 (pip rejects weaker
// ones); hash_is_strong() tells.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::wheel {

struct RecordEntry {
    std::string path;
    std::string hash_algorithm;  // "sha256", empty if no hash
    std::string hash_value;      // urlsafe base64 without padding
    std::optional<std::uint64_t> size;
    std::size_t line = 0;        // 1-based line in RECORD, for messages
};

std::vector<RecordEntry> parse_record(std::string_view text, std::string_view file_for_errors);
std::string format_record(const std::vector<RecordEntry>& entries);

bool hash_is_strong(std::string_view algorithm);
// "sha256=<b64>" for a byte string.
std::string record_hash_sha256(std::string_view bytes);

}  // namespace wheelfix::wheel
