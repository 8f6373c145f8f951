// Reading zip archives (wheels) with libzip.
//
// Contract:
// - Archive::open() reads the central directory once and validates it: every member
//   name must be safe (relative, no "..", no backslash, no NUL or other control
//   character, no duplicates, no absolute or drive paths) and every member must be stored or deflated and not
//   encrypted. Any violation, or a file that is not a zip, is an InputError naming
//   the archive (and the member) — a wheel with such a name is never processed.
// - members() lists every entry in central-directory order, with what a writer
//   later needs to keep: sizes, method, CRC, unix permission bits, symlink flag,
//   modification time (the central entry's DOS date and time read as UTC, the same
//   whatever the machine's TZ, a time in its daylight-saving gap included).
// - read() inflates a member completely and checks its CRC-32 and size against the
//   central directory; read_raw() returns the compressed bytes as stored. Both
//   throw InputError on a damaged member. stream() inflates in chunks for consumers
//   that only need to see the bytes once (hashing), so memory stays bounded.
//   Deflated members are inflated by zip/codec.hpp (ISA-L when built with it),
//   stored ones read as they are.
//   open_raw() pulls the compressed bytes as stored in pieces of any size, for code
//   that inflates or copies them itself (zip/inflate_index.hpp): read with pread
//   from data_offset(), where the member's stored bytes begin in the file (found
//   at open() by walking the central directory and local headers).
// - Inflate limits (zip bombs): open() refuses an archive whose members would
//   inflate to more than InflateLimits::max_inflated bytes in total, or a member
//   of at least ratio_floor bytes that inflates more than max_ratio times its
//   compressed size. The limits are read from the environment on every open():
//   WHEELFIX_MAX_INFLATED (bytes, K/M/G/T suffixes; default 8G) and
//   WHEELFIX_MAX_RATIO (default 1000); 0 turns a limit off. Since no member can
//   deliver more than its declared size, nothing past the limits is ever inflated.
// - Symlink entries are read at open(): a target that is absolute, empty, or climbs
//   above the archive root ("../..") is refused, and so is one that leaves the
//   archive when the other symlink entries are followed (a -> "up/../x" with
//   up -> ".."), or links that loop (more than 40 followed).
// - Also refused at open(), as CPython's zipfile and pip refuse them: members whose
//   bytes overlap (each other or the central directory: the overlapped-entries zip
//   bomb, two names for one set of bytes), local headers or data descriptors that
//   disagree with the central directory on method, CRC or sizes
//   (zip/stored_offsets.hpp), a stored member whose compressed and inflated sizes
//   differ, a directory entry that carries data, a path that is both a file and a
//   directory, and a FIFO, socket or device given as the archive (never opened:
//   util/files.hpp).
// - After open(), reading is thread-safe: read(), read_raw(), stream(), open_raw()
//   and data_offset() may run on several threads at once (every member's bytes are
//   read with pread from one descriptor, never through libzip's shared state), so
//   the read-only commands read members concurrently (util/parallel_tasks.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::zip {

enum class Method : std::uint16_t { stored = 0, deflated = 8 };

struct Member {
    std::uint64_t index = 0;        // libzip index, central-directory order
    std::string name;               // as stored (UTF-8), '/' separated
    std::uint64_t size = 0;         // inflated size
    std::uint64_t compressed_size = 0;
    Method method = Method::deflated;
    std::uint32_t crc32 = 0;
    std::uint32_t external_attributes = 0;  // raw, as stored
    bool has_unix_mode = false;     // created on a unix host (mode below is meaningful)
    std::uint32_t unix_mode = 0;    // st_mode (type bits and permissions) when has_unix_mode
    bool is_symlink = false;
    bool is_directory = false;      // name ends with '/'
    std::int64_t mtime = 0;         // seconds since the epoch (DOS date and time read as UTC)
};

// Reads one member's stored (compressed) bytes front to back; made by Archive::open_raw.
// Valid while its Archive lives.
class RawReader {
public:
    RawReader(RawReader&&) noexcept;
    RawReader& operator=(RawReader&&) noexcept;
    ~RawReader();

    // Fills up to buffer.size() bytes and returns how many (less only at the end of
    // the member's compressed_size bytes); 0 only at the end. InputError when the
    // file ends early or cannot be read (a stored member's CRC is checked when its
    // last byte is read).
    std::size_t read(std::span<std::uint8_t> buffer);
    // Goes on reading from `position` in the stored bytes (clamped to their end),
    // for a reader that resumes mid-stream (zip/seekable_member.hpp). A stored
    // member's CRC is then not checked: only a front-to-back read sees every byte.
    void skip_to(std::uint64_t position);

private:
    friend class Archive;
    struct State;
    explicit RawReader(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

class Archive {
public:
    // Throws InputError("<path>", "...") for a missing, unreadable, truncated or
    // unsafe archive.
    static Archive open(const std::filesystem::path& path);

    Archive(Archive&&) noexcept;
    Archive& operator=(Archive&&) noexcept;
    ~Archive();

    const std::filesystem::path& path() const { return path_; }
    const std::vector<Member>& members() const { return members_; }
    const Member* find(std::string_view name) const;

    std::vector<std::uint8_t> read(const Member& member) const;
    std::vector<std::uint8_t> read_raw(const Member& member) const;
    // Calls sink with consecutive inflated chunks (at most chunk_size bytes each);
    // the CRC is checked at the end. Returns the number of bytes delivered.
    std::uint64_t stream(const Member& member,
                         const std::function<void(std::span<const std::uint8_t>)>& sink,
                         std::size_t chunk_size = 1 << 20) const;
    RawReader open_raw(const Member& member) const;
    // Offset in the archive file of the member's first stored byte.
    std::uint64_t data_offset(const Member& member) const;
    // The archive file, open read-only while the Archive lives (for pread and
    // copy_file_range at explicit offsets only: the file position is shared).
    int descriptor() const;

private:
    Archive() = default;
    std::uint64_t inflate_deflated(const Member& member, const std::function<void(std::span<const std::uint8_t>)>& sink,
                                   std::size_t chunk_size) const;
    std::uint64_t stream_raw(const Member& member, const std::function<void(std::span<const std::uint8_t>)>& sink,
                             std::size_t chunk_size) const;
    struct Handle;
    std::unique_ptr<Handle> handle_;
    std::filesystem::path path_;
    std::vector<Member> members_;
};

struct InflateLimits {
    std::uint64_t max_inflated = std::uint64_t(8) << 30;  // bytes, all members together; 0 = no limit
    std::uint64_t max_ratio = 1000;                      // inflated / compressed, per member; 0 = no limit
    std::uint64_t ratio_floor = std::uint64_t(16) << 20;  // the ratio applies to members at least this big
};
// The defaults above, overridden by WHEELFIX_MAX_INFLATED / WHEELFIX_MAX_RATIO;
// InputError naming the variable when its value is not a size.
InflateLimits inflate_limits_from_environment();

// Why a member name is unsafe ("absolute path", "'..' component", ...), or
// nullopt when it is fine. Used by Archive::open and by writers.
std::optional<std::string> unsafe_name_reason(std::string_view name);

}  // namespace wheelfix::zip
