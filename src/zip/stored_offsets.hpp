// Where each member's stored bytes begin in the archive file — what a raw copy by
// copy_file_range needs and libzip does not tell — and its modification time as
// stored, which libzip does not tell either: zip_stat converts the DOS date and time
// fields with mktime, in the local time zone, and that cannot be undone for a time
// in a daylight-saving gap (02:30 on a spring-forward day comes back as 03:30, and
// the output would carry an hour the input does not, on some machines only).
//
// Contract: stored_entries(archive_bytes, members, path) walks the central
// directory of the archive (classic or ZIP64 end records) and each member's local
// header, and returns, for members[i] (central-directory order, as Archive lists
// them), the offset of its first stored byte and the central entry's DOS date and
// time read as UTC (seconds since the epoch, whatever TZ says; fields out of range
// are normalised as timegm does). It is an InputError naming `path`
// when the end records, a central entry or a local header disagree with what
// Archive read (entry count; a local header that is missing or names another
// file than its central entry; stored bytes that would run past the end). It also
// refuses what CPython's zipfile and pip refuse: a local header whose
// method, CRC or sizes disagree with the central entry (with flag bit 3 the local
// fields may be zero, and the data descriptor after the data must then agree), and
// members whose bytes overlap (local header, data and descriptor of each lie
// before the next member's local header and before the central directory) — the
// overlapped-entries zip bomb, and two names for one set of bytes.
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
