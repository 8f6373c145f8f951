// Where each member's stored bytes begin in the archive file — what a raw copy by
// copy_file_range needs and libzip does not tell.
//
// Contract: stored_data_offsets(archive_bytes, members, path) walks the central
// directory of the archive (classic or ZIP64 end records) and each member's local
// header, and returns, for members[i] (central-directory order, as Archive lists
// them), the offset of its first stored byte. It is an InputError naming `path`
// when the end records, a central entry or a local header disagree with what
// Archive read (entry count; a local header that is missing or names another
// file than its central entry; stored bytes that would run past the end). It also
// refuses what CPython's zipfile and pip refuse (issue 16): a local header whose
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
#include <vector>

namespace wheelfix::zip {

std::vector<std::uint64_t> stored_data_offsets(std::span<const std::uint8_t> archive_bytes,
                                               const std::vector<Member>& members,
                                               const std::filesystem::path& path);

}  // namespace wheelfix::zip
