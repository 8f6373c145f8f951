// The byte layout of the zip records our writer emits (APPNOTE.TXT 6.3): local
// file headers, central directory headers and the end records, with ZIP64 where a
// size, an offset or the entry count needs it.
//
// Contract: every function appends one complete record to `out` in little endian.
// - A local header carries the final sizes and CRC (the writer knows them before
//   the data; no data descriptors, general purpose bit 3 is never set). When either
//   size reaches 0xFFFFFFFF both 32-bit size fields say 0xFFFFFFFF and a ZIP64
//   extra field holds both sizes, as APPNOTE 4.5.3 requires of local headers.
// - A central header puts 0xFFFFFFFF in exactly the fields that do not fit and
//   lists those, in APPNOTE's order (size, compressed size, offset), in its ZIP64
//   extra field.
// - The end records: a ZIP64 end of central directory record and its locator when
//   the entry count, the directory's size or its offset do not fit, then the
//   classic end record, whose fields that overflowed say 0xFFFF / 0xFFFFFFFF.
// - The entry's "version made by" says unix (3), so readers take the external
//   attributes' high 16 bits as st_mode; the name is flagged UTF-8 (bit 11) when
//   it is not plain ASCII. No other extra field and no comment is written, so the
//   output is a function of the entries.
// - dos_date_time() turns seconds since the epoch into the DOS fields as UTC,
//   clamped to 1980-01-01..2107-12-31, seconds rounded down to even.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wheelfix::zip::records {

// The signatures that open each zip record (APPNOTE 4.3).
inline constexpr std::uint32_t kLocalHeader = 0x04034b50;
inline constexpr std::uint32_t kCentralHeader = 0x02014b50;
inline constexpr std::uint32_t kZip64EndRecord = 0x06064b50;
inline constexpr std::uint32_t kZip64EndLocator = 0x07064b50;
inline constexpr std::uint32_t kEndRecord = 0x06054b50;

struct DosDateTime {
    std::uint16_t time = 0;
    std::uint16_t date = 0;
};

DosDateTime dos_date_time(std::int64_t mtime);

struct Entry {
    std::string name;
    std::uint16_t method = 8;  // 0 stored, 8 deflated
    DosDateTime modified;
    std::uint32_t crc32 = 0;
    std::uint64_t size = 0;
    std::uint64_t compressed_size = 0;
    std::uint64_t local_header_offset = 0;
    std::uint32_t external_attributes = 0;
};

void append_local_header(std::vector<std::uint8_t>& out, const Entry& entry);
void append_central_header(std::vector<std::uint8_t>& out, const Entry& entry);
void append_end_records(std::vector<std::uint8_t>& out, std::uint64_t entry_count, std::uint64_t directory_offset,
                        std::uint64_t directory_size);

}  // namespace wheelfix::zip::records
