// stored_entries: the central directory walked for local header offsets
// (APPNOTE 4.3.12-4.3.16, 4.5.3) and the DOS times (4.4.6).
#include "stored_offsets.hpp"
#include "zip_records.hpp"

#include "wheelfix/util/error.hpp"

#include <algorithm>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

namespace wheelfix::zip {
namespace {

using namespace records;  // the record signatures

constexpr std::uint32_t kDescriptor = 0x08074b50;
constexpr std::size_t kEndRecordSize = 22;
constexpr std::size_t kLocatorSize = 20;
constexpr std::size_t kCentralHeaderSize = 46;
constexpr std::size_t kLocalHeaderSize = 30;
constexpr std::size_t kMaxComment = 0xFFFF;
constexpr std::uint32_t kMax32 = 0xFFFFFFFF;

class Bytes {
public:
    Bytes(std::span<const std::uint8_t> bytes, const std::filesystem::path& path) : bytes_(bytes), path_(path) {}

    std::uint64_t get(std::uint64_t offset, int width) const {
        need(offset, static_cast<std::uint64_t>(width));
        std::uint64_t value = 0;
        for (int i = width - 1; i >= 0; --i) value = (value << 8) | bytes_[offset + static_cast<std::uint64_t>(i)];
        return value;
    }
    std::string_view text(std::uint64_t offset, std::uint64_t length) const {
        need(offset, length);
        return {reinterpret_cast<const char*>(bytes_.data() + offset), static_cast<std::size_t>(length)};
    }
    std::uint64_t size() const { return bytes_.size(); }

    void need(std::uint64_t offset, std::uint64_t length) const {
        if (offset > bytes_.size() || length > bytes_.size() - offset) fail("a zip record runs past the end of the file");
    }
    [[noreturn]] void fail(const std::string& problem) const { throw InputError(path_.string(), problem); }

private:
    std::span<const std::uint8_t> bytes_;
    const std::filesystem::path& path_;
};

struct Directory {
    std::uint64_t offset = 0;
    std::uint64_t entries = 0;
};

std::uint64_t find_end_record(const Bytes& bytes) {
    if (bytes.size() < kEndRecordSize) bytes.fail("not a zip archive (no end of central directory record)");
    std::uint64_t lowest = bytes.size() - std::min<std::uint64_t>(bytes.size(), kEndRecordSize + kMaxComment);
    for (std::uint64_t at = bytes.size() - kEndRecordSize + 1; at-- > lowest;)
        if (bytes.get(at, 4) == kEndRecord) return at;
    bytes.fail("not a zip archive (no end of central directory record)");
}

Directory read_directory_location(const Bytes& bytes) {
    std::uint64_t end = find_end_record(bytes);
    Directory directory{bytes.get(end + 16, 4), bytes.get(end + 10, 2)};
    if (end >= kLocatorSize && bytes.get(end - kLocatorSize, 4) == kZip64EndLocator) {
        std::uint64_t record = bytes.get(end - kLocatorSize + 8, 8);
        if (bytes.get(record, 4) != kZip64EndRecord) bytes.fail("the ZIP64 end locator points at no ZIP64 end record");
        directory = {bytes.get(record + 48, 8), bytes.get(record + 32, 8)};
    }
    return directory;
}

// The 8-byte value at `field` of the first ZIP64 extra field (id 1) among the extra
// fields [extra, extra + length), or nullopt when there is none or it is shorter.
std::optional<std::uint64_t> zip64_value(const Bytes& bytes, std::uint64_t extra, std::uint64_t length, std::uint64_t field) {
    for (const std::uint64_t end = extra + length; extra + 4 <= end; extra += 4 + bytes.get(extra + 2, 2))
        if (bytes.get(extra, 2) == 1) {
            if (field + 8 > bytes.get(extra + 2, 2)) return std::nullopt;
            return bytes.get(extra + 4 + field, 8);
        }
    return std::nullopt;
}

// The local header offset of the central entry at `at`, from its ZIP64 extra
// field when the 32-bit field says 0xFFFFFFFF. (Names are compared as stored:
// libzip hands Archive names converted to UTF-8.)
std::uint64_t local_header_offset(const Bytes& bytes, std::uint64_t at) {
    const std::uint64_t offset = bytes.get(at + 42, 4);
    if (offset != kMax32) return offset;
    std::uint64_t field = 0;
    if (bytes.get(at + 24, 4) == kMax32) field += 8;  // uncompressed size comes first
    if (bytes.get(at + 20, 4) == kMax32) field += 8;  // then the compressed size
    const auto value = zip64_value(bytes, at + kCentralHeaderSize + bytes.get(at + 28, 2), bytes.get(at + 30, 2), field);
    if (!value) bytes.fail("a central directory entry has no ZIP64 local header offset");
    return *value;
}

// A value of the local header's ZIP64 extra field (id 1: size, then compressed size),
// or nullopt when the header has none.
std::optional<std::uint64_t> local_zip64(const Bytes& bytes, std::uint64_t local, int position) {
    return zip64_value(bytes, local + kLocalHeaderSize + bytes.get(local + 26, 2), bytes.get(local + 28, 2),
                       8 * static_cast<std::uint64_t>(position));
}

// The local header's 32-bit size field, through its ZIP64 extra when saturated.
std::uint64_t local_size(const Bytes& bytes, std::uint64_t local, std::uint64_t at, int zip64_position) {
    const std::uint64_t value = bytes.get(at, 4);
    if (value != kMax32) return value;
    return local_zip64(bytes, local, zip64_position).value_or(value);
}

struct Extent {
    std::uint64_t begin = 0, end = 0;  // local header .. end of data (and descriptor)
    const Member* member = nullptr;
};

// Where the member's stored bytes begin; `extent` gets all it occupies. The local
// header must agree with the central entry; with flag bit 3 its CRC and sizes may
// be zero and the data descriptor carries them.
std::uint64_t data_offset(const Bytes& bytes, std::uint64_t local, std::string_view central_name, const Member& member,
                          Extent& extent) {
    auto fail = [&](const std::string& problem) { bytes.fail("member " + member.name + ": " + problem); };
    if (bytes.get(local, 4) != kLocalHeader) fail("no local header where the central directory says");
    std::uint64_t name_length = bytes.get(local + 26, 2);
    if (bytes.text(local + kLocalHeaderSize, name_length) != central_name) fail("the local header names another file");
    std::uint64_t data = local + kLocalHeaderSize + name_length + bytes.get(local + 28, 2);
    bytes.need(data, member.compressed_size);
    if (bytes.get(local + 8, 2) != static_cast<std::uint64_t>(member.method))
        fail("the local header and the central directory disagree on the compression method");
    const bool descriptor = (bytes.get(local + 6, 2) & 0x8) != 0;
    const std::uint64_t crc = bytes.get(local + 14, 4);
    const std::uint64_t csize = local_size(bytes, local, local + 18, 1), size = local_size(bytes, local, local + 22, 0);
    const bool zero = crc == 0 && csize == 0 && size == 0;
    if (!(descriptor && zero) && (crc != member.crc32 || csize != member.compressed_size || size != member.size))
        fail("the local header and the central directory disagree on its CRC or sizes");
    std::uint64_t end = data + member.compressed_size;
    if (descriptor) {
        // Signature optional (APPNOTE 4.3.9.3); sizes are 8 bytes when ZIP64 is in use.
        const std::uint64_t at = end + 4 <= bytes.size() && bytes.get(end, 4) == kDescriptor ? end + 4 : end;
        const bool wide = local_zip64(bytes, local, 0).has_value();
        const int width = wide ? 8 : 4;
        if (bytes.get(at, 4) != member.crc32 || bytes.get(at + 4, width) != member.compressed_size ||
            bytes.get(at + 4 + width, width) != member.size)
            fail("the data descriptor and the central directory disagree on its CRC or sizes");
        end = at + 4 + 2 * static_cast<std::uint64_t>(width);
    }
    extent = {local, end, &member};
    return data;
}

// The DOS date and time fields of a central entry (APPNOTE 4.4.6) as seconds since
// the epoch, read as UTC: the fields libzip's mktime takes, without the time zone.
std::int64_t dos_time_as_utc(std::uint64_t time, std::uint64_t date) {
    std::tm fields{};
    fields.tm_year = static_cast<int>(date >> 9) + 80;
    fields.tm_mon = static_cast<int>((date >> 5) & 15) - 1;
    fields.tm_mday = static_cast<int>(date & 31);
    fields.tm_hour = static_cast<int>(time >> 11);
    fields.tm_min = static_cast<int>((time >> 5) & 63);
    fields.tm_sec = static_cast<int>(time & 31) * 2;
    return static_cast<std::int64_t>(timegm(&fields));
}

// Members' bytes one after the other, never shared, all before the central directory.
void refuse_overlaps(const Bytes& bytes, std::vector<Extent> extents, std::uint64_t directory) {
    std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) { return a.begin < b.begin; });
    for (std::size_t i = 0; i < extents.size(); ++i) {
        const std::uint64_t limit = i + 1 < extents.size() ? extents[i + 1].begin : directory;
        if (extents[i].end <= limit) continue;
        if (i + 1 < extents.size())
            bytes.fail("members " + extents[i].member->name + " and " + extents[i + 1].member->name +
                       " overlap in the archive (two names for the same bytes, or a zip bomb)");
        bytes.fail("member " + extents[i].member->name + " overlaps the central directory");
    }
}

}  // namespace

std::vector<StoredEntry> stored_entries(std::span<const std::uint8_t> archive_bytes, const std::vector<Member>& members,
                                        const std::filesystem::path& path) {
    Bytes bytes(archive_bytes, path);
    Directory directory = read_directory_location(bytes);
    if (directory.entries != members.size()) bytes.fail("the end record's entry count disagrees with the central directory");
    std::vector<StoredEntry> entries;
    entries.reserve(members.size());
    std::vector<Extent> extents(members.size());
    std::uint64_t at = directory.offset;
    for (std::size_t i = 0; i < members.size(); ++i) {
        if (bytes.get(at, 4) != kCentralHeader) bytes.fail("damaged central directory");
        std::uint64_t name_length = bytes.get(at + 28, 2);
        std::string_view central_name = bytes.text(at + kCentralHeaderSize, name_length);
        entries.push_back({data_offset(bytes, local_header_offset(bytes, at), central_name, members[i], extents[i]),
                           dos_time_as_utc(bytes.get(at + 12, 2), bytes.get(at + 14, 2))});
        at += kCentralHeaderSize + name_length + bytes.get(at + 30, 2) + bytes.get(at + 32, 2);
    }
    refuse_overlaps(bytes, std::move(extents), directory.offset);
    return entries;
}

std::vector<std::string_view> central_names(std::span<const std::uint8_t> archive_bytes, const std::filesystem::path& path) {
    Bytes bytes(archive_bytes, path);
    Directory directory = read_directory_location(bytes);
    std::vector<std::string_view> names;
    for (std::uint64_t i = 0, at = directory.offset; i < directory.entries; ++i) {
        if (bytes.get(at, 4) != kCentralHeader) bytes.fail("damaged central directory");
        names.push_back(bytes.text(at + kCentralHeaderSize, bytes.get(at + 28, 2)));
        at += kCentralHeaderSize + bytes.get(at + 28, 2) + bytes.get(at + 30, 2) + bytes.get(at + 32, 2);
    }
    return names;
}

}  // namespace wheelfix::zip
