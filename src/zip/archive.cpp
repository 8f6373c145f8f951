// Archive: a read-only view of a zip file through libzip.
//
// Technique: the archive is opened once with ZIP_RDONLY | ZIP_CHECKCONS, so libzip
// reads the central directory and checks every local header against it (a truncated
// or spliced file fails here, not halfway through writing a wheel). The member list is
// built from zip_stat_index + the external attributes and validated (names,
// methods, encryption) before anyone sees it. Member bytes are not read through
// libzip, whose layered sources copy them twice and whose zip_t is not
// thread-safe: they are pread from a descriptor of our own, so that several threads
// may read one Archive at once; the CRC-32 and the size are checked as zip_fread
// would, when the last byte has been read.
//
// Two things libzip hides that the contract needs:
// - duplicate names make zip_open fail with ZIP_ER_EXISTS without saying which; the
//   archive is then reopened without the consistency check to name the duplicate.
// - a NUL byte in a stored name is silently turned into a space. When a name has a
//   space, the raw central directory is scanned (bounds-checked) for NUL bytes.
// Every failure becomes InputError(<archive path>, "<one line>").
#include "wheelfix/zip/archive.hpp"

#include "resumed_inflate.hpp"
#include "sink_pipeline.hpp"
#include "stored_offsets.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/timings.hpp"

#include "wheelfix/zip/codec.hpp"

#include <zip.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>

namespace wheelfix::zip {

struct Archive::Handle {
    zip_t* archive = nullptr;
    std::map<std::string, std::size_t, std::less<>> position_by_name;  // index into members_
    int fd = -1;                                       // the same file, for pread of raw bytes
    std::vector<StoredEntry> stored;                   // per member

    ~Handle() {
        if (archive) zip_discard(archive);
        if (fd >= 0) ::close(fd);
    }
};

namespace {

constexpr std::uint64_t kMaxUpfrontReservation = std::uint64_t(256) << 20;

// ---- messages ---------------------------------------------------------------

std::string libzip_message(int code) {
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    std::string message = zip_error_strerror(&error);
    zip_error_fini(&error);
    return message;
}

// A member name shown on one line (util/error.hpp's printable: control bytes become \xNN).
std::string member_problem(std::string_view name, std::string_view problem) {
    return "member " + printable(name) + ": " + std::string(problem);
}

[[noreturn]] void fail(const std::filesystem::path& path, std::string problem) {
    throw InputError(path.string(), std::move(problem));
}

// ---- raw file access (for what libzip does not tell) -------------------------

bool starts_with_local_header(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::array<char, 4> magic{};
    return in.read(magic.data(), magic.size()) && std::memcmp(magic.data(), "PK\x03\x04", 4) == 0;
}

void reject_nul_in_names(const std::filesystem::path& path, const std::vector<Member>& members,
                         std::span<const std::uint8_t> file) {
    bool any_space = std::any_of(members.begin(), members.end(),
                                 [](const Member& m) { return m.name.find(' ') != std::string::npos; });
    if (!any_space) return;  // libzip shows a NUL as a space; without one there was none
    const auto raw_names = central_names(file, path);
    if (raw_names.size() != members.size()) fail(path, "truncated or damaged zip (cannot read the central directory)");
    for (const auto raw : raw_names)
        if (raw.find('\0') != std::string::npos) fail(path, member_problem(raw, "unsafe name (NUL byte)"));
}

// ---- opening ------------------------------------------------------------------

void check_regular_nonempty_file(const std::filesystem::path& path) {
    refuse_special_file(path);  // libzip would block on a FIFO
    std::error_code ec;
    auto status = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(status)) fail(path, "no such file");
    if (std::filesystem::is_directory(status)) fail(path, "is a directory, not a zip archive");
    auto size = std::filesystem::file_size(path, ec);
    if (!ec && size == 0) fail(path, "not a zip archive (empty file)");
}

// zip_open refused duplicates without naming them: list the names without the check.
std::string find_duplicate_name(const std::filesystem::path& path) {
    int code = 0;
    zip_t* archive = zip_open(path.c_str(), ZIP_RDONLY, &code);
    if (!archive) return "?";
    std::map<std::string, int> seen;
    std::string duplicate = "?";
    zip_int64_t count = zip_get_num_entries(archive, 0);
    for (zip_int64_t i = 0; i < count && duplicate == "?"; ++i) {
        const char* name = zip_get_name(archive, static_cast<zip_uint64_t>(i), 0);
        if (name && ++seen[name] == 2) duplicate = name;
    }
    zip_discard(archive);
    return duplicate;
}

[[noreturn]] void fail_open(const std::filesystem::path& path, int code) {
    switch (code) {
        case ZIP_ER_NOENT: fail(path, "no such file");
        case ZIP_ER_EXISTS: fail(path, member_problem(find_duplicate_name(path), "duplicate member name"));
        case ZIP_ER_NOZIP:
            if (starts_with_local_header(path))
                fail(path, "truncated or damaged zip (no end of central directory record)");
            fail(path, "not a zip archive");
        case ZIP_ER_INCONS:
        case ZIP_ER_EOF:
        case ZIP_ER_SEEK:
        case ZIP_ER_MULTIDISK:
        case ZIP_ER_COMPNOTSUPP:
        case ZIP_ER_CRC: fail(path, "truncated or damaged zip (" + libzip_message(code) + ")");
        default: fail(path, "cannot read zip (" + libzip_message(code) + ")");
    }
}

zip_t* open_checked(const std::filesystem::path& path) {
    check_regular_nonempty_file(path);
    int code = 0;
    zip_t* archive = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
    if (!archive) fail_open(path, code);
    return archive;
}

// ---- the member list ----------------------------------------------------------

void fill_attributes(zip_t* archive, Member& member) {
    zip_uint8_t opsys = 0;
    zip_uint32_t attributes = 0;
    if (zip_file_get_external_attributes(archive, member.index, 0, &opsys, &attributes) != 0) return;
    member.external_attributes = attributes;
    member.has_unix_mode = opsys == ZIP_OPSYS_UNIX && (attributes >> 16) != 0;
    if (!member.has_unix_mode) return;
    member.unix_mode = attributes >> 16;
    member.is_symlink = S_ISLNK(member.unix_mode);
}

std::optional<std::string> unsupported_storage(const zip_stat_t& stat) {
    if ((stat.valid & ZIP_STAT_ENCRYPTION_METHOD) && stat.encryption_method != ZIP_EM_NONE)
        return "encrypted members are not supported";
    if (!(stat.valid & ZIP_STAT_COMP_METHOD)) return "unknown compression method";
    if (stat.comp_method != ZIP_CM_STORE && stat.comp_method != ZIP_CM_DEFLATE)
        return "compression method " + std::to_string(stat.comp_method) + " is not supported (only stored and deflate)";
    return std::nullopt;
}

Member describe_member(const std::filesystem::path& path, zip_t* archive, zip_uint64_t index) {
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(archive, index, 0, &stat) != 0 || !(stat.valid & ZIP_STAT_NAME) || !stat.name)
        fail(path, "truncated or damaged zip (cannot read entry " + std::to_string(index) + ")");
    Member member;
    member.index = index;
    member.name = stat.name;
    if (auto reason = unsafe_name_reason(member.name)) fail(path, member_problem(member.name, "unsafe name (" + *reason + ")"));
    if (auto problem = unsupported_storage(stat)) fail(path, member_problem(member.name, *problem));
    member.method = stat.comp_method == ZIP_CM_STORE ? Method::stored : Method::deflated;
    member.size = stat.size;
    member.compressed_size = stat.comp_size;
    // A stored member holds its bytes as they are: any other count is a lie some
    // reader believes (Python's zipfile refuses it), so nothing copies it on.
    if (member.method == Method::stored && member.compressed_size != member.size)
        fail(path, member_problem(member.name, "size mismatch (stored member: central directory says " +
                                                   std::to_string(member.size) + " bytes, stores " +
                                                   std::to_string(member.compressed_size) + ")"));
    member.crc32 = stat.crc;
    member.is_directory = member.name.back() == '/';
    fill_attributes(archive, member);
    return member;
}

// ---- limits and symlinks ---------------------------------------------------------

// "8G", "512M", "100K", "12345" -> bytes; nullopt when it is not such a size.
std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
    std::uint64_t shift = 0;
    if (!text.empty()) {
        switch (text.back()) {
            case 'K': case 'k': shift = 10; break;
            case 'M': case 'm': shift = 20; break;
            case 'G': case 'g': shift = 30; break;
            case 'T': case 't': shift = 40; break;
            default: break;
        }
        if (shift != 0) text.remove_suffix(1);
    }
    if (text.empty() || text.size() > 15 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    std::uint64_t value = 0;
    for (char c : text) value = value * 10 + static_cast<std::uint64_t>(c - '0');
    if (shift != 0 && value > (std::numeric_limits<std::uint64_t>::max() >> shift)) return std::nullopt;
    return value << shift;
}

std::uint64_t limit_from_environment(const char* variable, std::uint64_t fallback) {
    const char* text = std::getenv(variable);
    if (text == nullptr || *text == '\0') return fallback;
    auto value = parse_byte_size(text);
    if (!value)
        throw InputError(variable, "expected a number, optionally with K, M, G or T (got '" + std::string(text) + "')");
    return *value;
}

std::string with_unit(std::uint64_t bytes) {
    if (bytes >= (std::uint64_t(1) << 30) && bytes % (std::uint64_t(1) << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
    if (bytes >= (std::uint64_t(1) << 20) && bytes % (std::uint64_t(1) << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
    return std::to_string(bytes) + " bytes";
}

void enforce_limits(const std::filesystem::path& path, const std::vector<Member>& members, const InflateLimits& limits) {
    std::uint64_t total = 0;
    for (const auto& member : members) {
        if (limits.max_ratio != 0 && member.size >= limits.ratio_floor &&
            (member.compressed_size == 0 || member.size / member.compressed_size > limits.max_ratio))
            fail(path, member_problem(member.name, "inflates " + std::to_string(member.compressed_size) + " bytes to " +
                                                       std::to_string(member.size) + ", over the ratio limit of " +
                                                       std::to_string(limits.max_ratio) +
                                                       ":1 (a zip bomb? WHEELFIX_MAX_RATIO overrides)"));
        total = member.size > std::numeric_limits<std::uint64_t>::max() - total ? std::numeric_limits<std::uint64_t>::max()
                                                                                : total + member.size;
    }
    if (limits.max_inflated != 0 && total > limits.max_inflated)
        fail(path, "members inflate to " + std::to_string(total) + " bytes, over the limit of " +
                       with_unit(limits.max_inflated) + " (a zip bomb? WHEELFIX_MAX_INFLATED overrides)");
}

// Why a symlink entry's target leaves the archive (or cannot be a target), or nullopt.
std::optional<std::string> symlink_escape_reason(std::string_view name, std::string_view target) {
    if (target.empty()) return "empty symlink target";
    if (target.find('\0') != std::string_view::npos) return "symlink target has a NUL byte";
    if (target.front() == '/') return "symlink to an absolute path";
    int depth = static_cast<int>(std::count(name.begin(), name.end(), '/'));  // directories above the link
    while (!target.empty()) {
        auto slash = target.find('/');
        auto component = target.substr(0, slash);
        if (component == "..") --depth;
        else if (!component.empty() && component != ".") ++depth;
        if (depth < 0) return "symlink points outside the archive";
        if (slash == std::string_view::npos) break;
        target.remove_prefix(slash + 1);
    }
    return std::nullopt;
}

// What pip and CPython's zipfile refuse in the member list itself: a directory
// entry carrying data, and one path that is both a file and a directory.
void refuse_directory_conflicts(const std::filesystem::path& path, const std::vector<Member>& members) {
    std::map<std::string_view, const Member*> files;
    for (const Member& member : members) {
        if (member.is_directory && member.size != 0)
            fail(path, member_problem(member.name, "a directory entry that carries " + std::to_string(member.size) +
                                                       " bytes of data"));
        if (!member.is_directory) files.emplace(member.name, &member);
    }
    for (const Member& member : members) {
        std::string_view name = member.name;
        for (auto slash = name.find('/'); slash != std::string_view::npos && slash + 1 < name.size() + 1;
             slash = name.find('/', slash + 1)) {
            if (auto it = files.find(name.substr(0, slash)); it != files.end())
                fail(path, member_problem(it->second->name, "is a file and also a directory (it holds " +
                                                                printable(member.name) + ")"));
        }
    }
}

// Why following `link` through the archive's other symlinks leaves the archive or
// never ends, or nullopt. Each link alone was checked by symlink_escape_reason; a
// chain (a -> "up/../x" with up -> "..") escapes only when its links are followed,
// component by component, as the kernel resolves them once installed.
std::optional<std::string> symlink_chain_reason(const std::map<std::string, std::string, std::less<>>& links,
                                                const std::string& link) {
    constexpr int kMaxHops = 40;  // the kernel's limit (ELOOP)
    std::vector<std::string_view> resolved;
    std::string_view parent = std::string_view(link).substr(0, link.rfind('/') == std::string::npos ? 0 : link.rfind('/'));
    for (std::size_t at = 0; !parent.empty() && at <= parent.size();) {
        const std::size_t slash = std::min(parent.find('/', at), parent.size());
        resolved.push_back(parent.substr(at, slash - at));
        at = slash + 1;
    }
    std::vector<std::string_view> pending;  // components still to walk, last first
    auto push_target = [&pending](std::string_view target) {
        std::vector<std::string_view> parts;
        for (std::size_t at = 0; at <= target.size();) {
            const std::size_t slash = std::min(target.find('/', at), target.size());
            parts.push_back(target.substr(at, slash - at));
            at = slash + 1;
        }
        pending.insert(pending.end(), parts.rbegin(), parts.rend());
    };
    push_target(links.find(link)->second);
    std::string joined;
    for (int hops = 1; !pending.empty();) {
        const std::string_view component = pending.back();
        pending.pop_back();
        if (component.empty() || component == ".") continue;
        if (component == "..") {
            if (resolved.empty()) return "symlink points outside the archive (through other symlinks)";
            resolved.pop_back();
            continue;
        }
        resolved.push_back(component);
        joined.clear();
        for (std::string_view part : resolved) joined.append(joined.empty() ? "" : "/").append(part);
        const auto next = links.find(joined);
        if (next == links.end()) continue;
        if (++hops > kMaxHops) return "symlinks that loop (more than 40 links followed)";
        resolved.pop_back();
        if (next->second.starts_with('/')) return "symlink points outside the archive (through other symlinks)";
        push_target(next->second);
    }
    return std::nullopt;
}

// ---- reading --------------------------------------------------------------------

// A sink that appends every chunk to `bytes`.
auto append_to(std::vector<std::uint8_t>& bytes) {
    return [&bytes](std::span<const std::uint8_t> chunk) { bytes.insert(bytes.end(), chunk.begin(), chunk.end()); };
}

}  // namespace

// ---- raw reader -------------------------------------------------------------------

struct RawReader::State {
    std::filesystem::path path;  // copies: the reader may outlive a moved-from Archive object
    Member member;
    int fd = -1;                 // the Archive's; valid while it lives
    std::uint64_t data_offset = 0;
    std::uint64_t position = 0;
    std::uint32_t crc = 0;       // of a stored member's bytes so far (they are its content)
    bool whole = true;           // read front to back, so the CRC can be checked

    [[noreturn]] void fail_member(const std::string& problem) const { fail(path, member_problem(member.name, problem)); }

    // Exactly `buffer.size()` bytes from `offset`, or InputError.
    void read_fully(std::span<std::uint8_t> buffer, std::uint64_t offset) const {
        const timings::Scope timer(timings::Phase::read);
        while (!buffer.empty()) {
            ssize_t got = ::pread(fd, buffer.data(), buffer.size(), static_cast<off_t>(offset));
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) fail_member(std::string("cannot read (") + std::strerror(errno) + ")");
            if (got == 0) fail_member("truncated (the file ends inside its stored bytes)");
            buffer = buffer.subspan(static_cast<std::size_t>(got));
            offset += static_cast<std::uint64_t>(got);
        }
    }
};

RawReader::RawReader(std::unique_ptr<State> state) : state_(std::move(state)) {}
RawReader::RawReader(RawReader&&) noexcept = default;
RawReader& RawReader::operator=(RawReader&&) noexcept = default;
RawReader::~RawReader() = default;

void RawReader::skip_to(std::uint64_t position) {
    auto& s = *state_;
    s.position = std::min(position, s.member.compressed_size);
    s.whole = s.whole && s.position == 0;
}

std::size_t RawReader::read(std::span<std::uint8_t> buffer) {
    auto& s = *state_;
    auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), s.member.compressed_size - s.position));
    if (want == 0) return 0;
    s.read_fully(buffer.first(want), s.data_offset + s.position);
    s.position += want;
    if (s.member.method == Method::stored && s.whole) {
        s.crc = crc32(s.crc, buffer.first(want));
        if (s.position == s.member.compressed_size && s.crc != s.member.crc32) s.fail_member("CRC mismatch");
    }
    return want;
}

// ---- public interface -----------------------------------------------------------

InflateLimits inflate_limits_from_environment() {
    InflateLimits limits;
    limits.max_inflated = limit_from_environment("WHEELFIX_MAX_INFLATED", limits.max_inflated);
    limits.max_ratio = limit_from_environment("WHEELFIX_MAX_RATIO", limits.max_ratio);
    return limits;
}

std::optional<std::string> unsafe_name_reason(std::string_view name) {
    if (name.empty()) return "empty name";
    if (name.find('\0') != std::string_view::npos) return "NUL byte";
    if (std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
        return "control character";  // a newline or terminal escape would reach messages and listings
    if (name.find('\\') != std::string_view::npos) return "backslash";
    if (name.front() == '/') return "absolute path";
    if (name.size() >= 2 && name[1] == ':' && std::isalpha(static_cast<unsigned char>(name[0])))
        return "drive letter";
    std::string_view rest = name;
    if (rest.back() == '/') rest.remove_suffix(1);  // a directory entry
    while (true) {
        auto slash = rest.find('/');
        auto component = rest.substr(0, slash);
        if (component.empty()) return "empty path component";
        if (component == "..") return "'..' component";
        if (component == ".") return "'.' component";
        if (slash == std::string_view::npos) return std::nullopt;
        rest.remove_prefix(slash + 1);
    }
}

Archive Archive::open(const std::filesystem::path& path) {
    const timings::Scope timer(timings::Phase::read);
    Archive result;
    result.path_ = path;
    result.handle_ = std::make_unique<Handle>();
    result.handle_->archive = open_checked(path);

    zip_t* archive = result.handle_->archive;
    zip_int64_t count = zip_get_num_entries(archive, 0);
    if (count < 0) fail(path, "truncated or damaged zip (cannot count entries)");
    result.members_.reserve(static_cast<std::size_t>(count));
    for (zip_uint64_t i = 0; i < static_cast<zip_uint64_t>(count); ++i) {
        result.members_.push_back(describe_member(path, archive, i));
        auto [it, inserted] = result.handle_->position_by_name.emplace(result.members_.back().name, i);
        if (!inserted) fail(path, member_problem(it->first, "duplicate member name"));
    }
    result.handle_->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (result.handle_->fd < 0) fail(path, std::strerror(errno));
    const MappedFile file(result.handle_->fd, path);  // only the central directory and local headers are touched
    reject_nul_in_names(path, result.members_, file.bytes());
    enforce_limits(path, result.members_, inflate_limits_from_environment());
    refuse_directory_conflicts(path, result.members_);
    // Local headers, data descriptors and overlaps are checked now, before anyone
    // reads a member (stored_offsets.hpp); the offsets are kept for open_raw. The
    // times come from there too: libzip's are the DOS fields through mktime, in
    // the local time zone (wrong by an hour in a daylight-saving gap).
    if (!result.members_.empty()) result.handle_->stored = stored_entries(file.bytes(), result.members_, path);
    for (std::size_t i = 0; i < result.members_.size(); ++i) result.members_[i].mtime = result.handle_->stored[i].mtime;
    std::map<std::string, std::string, std::less<>> links;
    for (const auto& member : result.members_) {
        if (!member.is_symlink) continue;
        constexpr std::uint64_t kMaxTarget = 4096;  // PATH_MAX
        if (member.size > kMaxTarget) fail(path, member_problem(member.name, "symlink target longer than 4096 bytes"));
        auto bytes = result.read(member);
        std::string target(bytes.begin(), bytes.end());
        if (auto reason = symlink_escape_reason(member.name, target)) fail(path, member_problem(member.name, *reason));
        links.emplace(member.name, std::move(target));
    }
    for (const auto& [link, target] : links)
        if (auto reason = symlink_chain_reason(links, link)) fail(path, member_problem(link, *reason));
    return result;
}

Archive::Archive(Archive&&) noexcept = default;
Archive& Archive::operator=(Archive&&) noexcept = default;
Archive::~Archive() = default;

const Member* Archive::find(std::string_view name) const {
    if (!handle_) return nullptr;
    auto it = handle_->position_by_name.find(name);
    return it == handle_->position_by_name.end() ? nullptr : &members_[it->second];
}

// Members from this size on, streamed in chunks of at least kOverlapChunk, reach
// their sink on a second thread when the budget spares one.
constexpr std::uint64_t kOverlapFrom = std::uint64_t(4) << 20;
constexpr std::size_t kOverlapChunk = std::size_t(256) << 10;

// A deflated member inflated by the codec (zip/codec.hpp: ISA-L when built with
// it; libzip would inflate with zlib) from its raw bytes, with libzip's checks:
// the size while it streams, the CRC at the end. A big member's chunks go to the
// sink on a second thread (SinkPipeline), so hashing overlaps the inflate.
std::uint64_t Archive::inflate_deflated(const Member& member, const std::function<void(std::span<const std::uint8_t>)>& sink,
                                        std::size_t chunk_size) const {
    ResumedInflate inflater(*this, member, nullptr);
    const auto output_size = static_cast<std::size_t>(std::clamp<std::uint64_t>(member.size + 1, 1, std::max<std::size_t>(chunk_size, 1)));
    SinkPipeline pipeline(sink, output_size, member.size >= kOverlapFrom && chunk_size >= kOverlapChunk);
    std::uint32_t crc = 0;
    while (true) {
        const auto output = pipeline.room();
        const std::size_t produced = inflater.next(output);
        if (produced == 0) break;
        if (inflater.produced() > member.size)
            fail(path_, member_problem(member.name, "size mismatch (more than the " + std::to_string(member.size) +
                                                        " bytes the central directory says)"));
        crc = crc32(crc, output.first(produced));
        pipeline.deliver(produced);
    }
    pipeline.finish();
    const std::uint64_t total = inflater.produced();
    if (total != member.size)
        fail(path_, member_problem(member.name, "size mismatch (central directory says " + std::to_string(member.size) +
                                                    " bytes, read " + std::to_string(total) + ")"));
    if (crc != member.crc32) fail(path_, member_problem(member.name, "CRC mismatch"));
    return total;
}

// A member's stored bytes as they are in the file, front to back, read with pread
// (so reads on several threads never share libzip's state); RawReader checks a
// stored member's CRC-32 when the last byte has been read.
std::uint64_t Archive::stream_raw(const Member& member, const std::function<void(std::span<const std::uint8_t>)>& sink,
                                  std::size_t chunk_size) const {
    RawReader raw = open_raw(member);
    std::vector<std::uint8_t> buffer(std::clamp<std::uint64_t>(member.compressed_size, 1, std::max<std::size_t>(chunk_size, 1)));
    std::uint64_t total = 0;
    while (const std::size_t got = raw.read(buffer)) {
        total += got;
        sink(std::span<const std::uint8_t>(buffer.data(), got));
    }
    return total;
}

std::uint64_t Archive::stream(const Member& member, const std::function<void(std::span<const std::uint8_t>)>& sink,
                              std::size_t chunk_size) const {
    const timings::Scope timer(timings::Phase::inflate);
    if (member.method == Method::deflated) return inflate_deflated(member, sink, chunk_size);
    return stream_raw(member, sink, chunk_size);  // open() refused a stored member whose sizes differ
}

std::vector<std::uint8_t> Archive::read(const Member& member) const {
    std::vector<std::uint8_t> bytes;
    bytes.reserve(std::min(member.size, kMaxUpfrontReservation));  // the size is untrusted
    stream(member, append_to(bytes));
    return bytes;
}

std::uint64_t Archive::data_offset(const Member& member) const {
    auto position = static_cast<std::size_t>(&member - members_.data());
    if (position >= members_.size()) throw std::invalid_argument("Archive: a member of another archive (" + member.name + ")");
    return handle_->stored[position].data_offset;
}

int Archive::descriptor() const { return handle_->fd; }

RawReader Archive::open_raw(const Member& member) const {
    auto state = std::make_unique<RawReader::State>();
    state->path = path_;
    state->member = member;
    state->fd = handle_->fd;
    state->data_offset = data_offset(member);
    return RawReader(std::move(state));
}

std::vector<std::uint8_t> Archive::read_raw(const Member& member) const {
    std::vector<std::uint8_t> bytes;
    bytes.reserve(std::min(member.compressed_size, kMaxUpfrontReservation));
    stream_raw(member, append_to(bytes), std::size_t(1) << 20);
    return bytes;
}

}  // namespace wheelfix::zip
