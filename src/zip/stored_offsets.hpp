// Where each member's stored bytes begin in the archive file — what a raw copy by
// copy_file_range needs and libzip does not tell — and its modification time as
// stored: zip_stat converts the DOS fields with mktime, in the local time zone, which
// cannot be undone for a time in a daylight-saving gap (02:30 on a spring-forward day
// comes back as 03:30, on some machines only).
//
// Contract: stored_entries(archive_bytes, members, path) walks the central directory
// (classic or ZIP64 end records) and each member's local header, and returns, for
// members[i] (central-directory order, as Archive lists them), the offset of its
// first stored byte and the central entry's DOS date and time read as UTC (fields out
// of range normalised as timegm does). It is an InputError naming `path` when the end
// records, a central entry or a local header disagree with what Archive read (entry
// count; a local header missing or naming another file; stored bytes running past the
// end), and for the disagreements and overlaps zip/archive.hpp lists as refused at
// open() (with flag bit 3 a local header's CRC and sizes may be zero, and the data
// descriptor must then agree).
#pragma once

#include "wheelfix/zip/archive.hpp"

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

namespace wheelfix::zip {

struct StoredEntry {
    std::uint64_t data_offset = 0;  // the member's first stored byte
    std::int64_t mtime = 0;         // the central entry's DOS date and time, read as UTC
};

std::vector<StoredEntry> stored_entries(std::span<const std::uint8_t> archive_bytes, const std::vector<Member>& members,
                                        const std::filesystem::path& path);

// The names of the central directory's entries as stored (libzip shows a NUL in
// one as a space), in order; an InputError naming `path` as above.
std::vector<std::string_view> central_names(std::span<const std::uint8_t> archive_bytes, const std::filesystem::path& path);

}  // namespace wheelfix::zip
