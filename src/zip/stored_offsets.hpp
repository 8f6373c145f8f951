// Where each member's stored bytes begin in the archive file — what a raw copy by
// copy_file_range needs and libzip does not tell.
//
// Contract: stored_data_offsets(archive_bytes, members, path) walks the central
// directory of the archive (classic or ZIP64 end records) and each member's local
// header, and returns, for members[i] (central-directory order, as Archive lists
// them), the offset of its first stored byte. It is an InputError naming `path`
// when the end records, a central entry or a local header disagree with what
// Archive read (entry count; a local header that is missing or names another
// file than its central entry; stored bytes that would run past the end). Only offsets are read: everything else was
// validated by Archive::open.
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
