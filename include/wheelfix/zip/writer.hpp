// Writing a new archive from an old one: raw copies, precompressed members, new
// content; atomically.
//
// Contract: write_archive(destination, input, members) writes the members in the
// order given to a temporary file in the destination's directory, then renames it
// over `destination` (with Existing::refuse, the default, only when nothing is
// there by then: util/output_file.hpp); on any error the temporary file is removed and no output
// appears (the input archive is never opened for writing). Sources:
// - RawCopy: the input member's compressed bytes copied as stored (no inflate, no
//   recompression), its CRC and sizes kept.
// - Precompressed: a PrecompressedMember (zip/splice.hpp) whose pieces are read
//   from the input member's stored stream or memory, written as a deflated member
//   with the given sizes and CRC, never recompressed.
// - Content: new bytes, deflated by parallel_deflate (zip/splice.hpp: member_deflate()
//   in 1 MiB chunks) and written like Precompressed; empty content is stored.
// Every member keeps the unix mode given (permission bits, symlink type) and gets
// the modification time given. The records are APPNOTE 6.3 with ZIP64 exactly
// where sizes, offsets or the member count need it (src/zip/zip_records.hpp); the
// same inputs give byte-identical output. Stored bytes are copied in the kernel
// (copy_file_range) exactly as they are: callers verify members before they
// write (a damaged member is copied damaged, never laundered).
#pragma once

#include "wheelfix/util/output_file.hpp"
#include "wheelfix/zip/archive.hpp"
#include "wheelfix/zip/splice.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

namespace wheelfix::zip {

struct RawCopy {
    const Member* member = nullptr;
};
struct Precompressed {
    const Member* original = nullptr;  // whose stored stream the pieces refer to
    PrecompressedMember data;
};
struct Content {
    std::vector<std::uint8_t> bytes;
};

struct OutputMember {
    std::string name;
    std::variant<RawCopy, Precompressed, Content> source;
    std::uint32_t unix_mode = 0100644;  // st_mode incl. type bits (S_IFLNK for symlinks)
    std::int64_t mtime = 0;
};

void write_archive(const std::filesystem::path& destination, const Archive& input,
                   const std::vector<OutputMember>& members, Existing existing = Existing::refuse);

}  // namespace wheelfix::zip
