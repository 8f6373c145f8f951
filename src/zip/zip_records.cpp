// Zip record encoding for write_archive (see zip_records.hpp).
#include "zip_records.hpp"

#include "wheelfix/util/little_endian.hpp"

#include <algorithm>
#include <ctime>

namespace wheelfix::zip::records {
namespace {

constexpr std::uint16_t kZip64ExtraId = 0x0001;
constexpr std::uint32_t kMax32 = 0xFFFFFFFF;
constexpr std::uint16_t kMax16 = 0xFFFF;
constexpr std::uint16_t kVersionDeflate = 20;
constexpr std::uint16_t kVersionZip64 = 45;
constexpr std::uint16_t kMadeByUnix = 3 << 8;
constexpr std::uint16_t kFlagUtf8 = 1 << 11;

void put_bytes(std::vector<std::uint8_t>& out, const std::string& text) { out.insert(out.end(), text.begin(), text.end()); }

bool fits32(std::uint64_t value) { return value < kMax32; }
std::uint32_t field32(std::uint64_t value) { return fits32(value) ? static_cast<std::uint32_t>(value) : kMax32; }

std::uint16_t flags(const Entry& entry) {
    bool ascii = std::all_of(entry.name.begin(), entry.name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    return ascii ? 0 : kFlagUtf8;
}

bool local_needs_zip64(const Entry& entry) { return !fits32(entry.size) || !fits32(entry.compressed_size); }

// The central header's ZIP64 extra: only the fields that overflowed, in order.
std::vector<std::uint8_t> central_zip64_extra(const Entry& entry) {
    std::vector<std::uint8_t> values;
    if (!fits32(entry.size)) put64(values, entry.size);
    if (!fits32(entry.compressed_size)) put64(values, entry.compressed_size);
    if (!fits32(entry.local_header_offset)) put64(values, entry.local_header_offset);
    if (values.empty()) return values;
    std::vector<std::uint8_t> extra;
    put16(extra, kZip64ExtraId);
    put16(extra, static_cast<std::uint16_t>(values.size()));
    extra.insert(extra.end(), values.begin(), values.end());
    return extra;
}

}  // namespace

DosDateTime dos_date_time(std::int64_t mtime) {
    constexpr std::int64_t kEarliest = 315532800;   // 1980-01-01T00:00:00Z
    constexpr std::int64_t kLatest = 4354819198;    // 2107-12-31T23:59:58Z
    time_t clamped = static_cast<time_t>(std::clamp(mtime, kEarliest, kLatest));
    std::tm utc{};
    gmtime_r(&clamped, &utc);
    DosDateTime result;
    result.time = static_cast<std::uint16_t>((utc.tm_hour << 11) | (utc.tm_min << 5) | (utc.tm_sec / 2));
    result.date = static_cast<std::uint16_t>(((utc.tm_year - 80) << 9) | ((utc.tm_mon + 1) << 5) | utc.tm_mday);
    return result;
}

void append_local_header(std::vector<std::uint8_t>& out, const Entry& entry) {
    bool zip64 = local_needs_zip64(entry);
    put32(out, kLocalHeader);
    put16(out, zip64 ? kVersionZip64 : kVersionDeflate);
    put16(out, flags(entry));
    put16(out, entry.method);
    put16(out, entry.modified.time);
    put16(out, entry.modified.date);
    put32(out, entry.crc32);
    put32(out, zip64 ? kMax32 : static_cast<std::uint32_t>(entry.compressed_size));
    put32(out, zip64 ? kMax32 : static_cast<std::uint32_t>(entry.size));
    put16(out, static_cast<std::uint16_t>(entry.name.size()));
    put16(out, zip64 ? 20 : 0);
    put_bytes(out, entry.name);
    if (zip64) {
        put16(out, kZip64ExtraId);
        put16(out, 16);
        put64(out, entry.size);
        put64(out, entry.compressed_size);
    }
}

void append_central_header(std::vector<std::uint8_t>& out, const Entry& entry) {
    auto extra = central_zip64_extra(entry);
    std::uint16_t version = extra.empty() ? kVersionDeflate : kVersionZip64;
    put32(out, kCentralHeader);
    put16(out, kMadeByUnix | version);
    put16(out, version);
    put16(out, flags(entry));
    put16(out, entry.method);
    put16(out, entry.modified.time);
    put16(out, entry.modified.date);
    put32(out, entry.crc32);
    put32(out, field32(entry.compressed_size));
    put32(out, field32(entry.size));
    put16(out, static_cast<std::uint16_t>(entry.name.size()));
    put16(out, static_cast<std::uint16_t>(extra.size()));
    put16(out, 0);  // comment length
    put16(out, 0);  // disk number start
    put16(out, 0);  // internal attributes
    put32(out, entry.external_attributes);
    put32(out, field32(entry.local_header_offset));
    put_bytes(out, entry.name);
    out.insert(out.end(), extra.begin(), extra.end());
}

void append_end_records(std::vector<std::uint8_t>& out, std::uint64_t entry_count, std::uint64_t directory_offset,
                        std::uint64_t directory_size) {
    bool zip64 = entry_count >= kMax16 || !fits32(directory_offset) || !fits32(directory_size);
    if (zip64) {
        std::uint64_t record_offset = directory_offset + directory_size;
        put32(out, kZip64EndRecord);
        put64(out, 44);  // size of the rest of this record
        put16(out, kMadeByUnix | kVersionZip64);
        put16(out, kVersionZip64);
        put32(out, 0);  // this disk
        put32(out, 0);  // disk with the central directory
        put64(out, entry_count);
        put64(out, entry_count);
        put64(out, directory_size);
        put64(out, directory_offset);
        put32(out, kZip64EndLocator);
        put32(out, 0);
        put64(out, record_offset);
        put32(out, 1);  // total disks
    }
    auto count16 = static_cast<std::uint16_t>(std::min<std::uint64_t>(entry_count, kMax16));
    put32(out, kEndRecord);
    put16(out, 0);
    put16(out, 0);
    put16(out, count16);
    put16(out, count16);
    put32(out, field32(directory_size));
    put32(out, field32(directory_offset));
    put16(out, 0);  // comment length
}

}  // namespace wheelfix::zip::records
