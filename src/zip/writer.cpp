// write_archive: a new zip from raw copies, precompressed members and new content,
// written by libzip into a temporary file that is renamed into place.
//
// Technique: libzip decides per member whether to (re)compress by comparing the
// compression method its source reports (ZIP_SOURCE_STAT) with the entry's; an
// entry added without zip_set_file_compression takes the source's method. So
// - a raw copy is zip_source_zip(..., ZIP_FL_COMPRESSED): a window onto the input
//   file whose stat reports the member's own method, sizes and CRC; the bytes go
//   through untouched (a stored member is pinned to ZIP_CM_STORE, or libzip would
//   deflate it);
// - a precompressed member is a zip_source_function whose stat reports
//   comp_method DEFLATE with size, comp_size and crc valid and whose reads return
//   the pieces (original ones streamed from the input member in order);
// - new content above 1 MiB goes through parallel_deflate and then the same way;
//   smaller content is handed to libzip as a buffer to deflate (or store).
// libzip 1.7.3's add_data() then writes no compressor and no CRC layer. ZIP64
// extra fields are added by libzip when the sizes need them; no other extra field
// is written, the mode and the DOS time are set explicitly, so the output is a
// function of the inputs.
//
// Atomicity: we create a unique, empty temporary file next to the destination
// (O_EXCL, mode 0666 & ~umask) and let libzip write it; libzip itself writes to
// "<temporary>.XXXXXX" (same mode) and renames that over ours on success, or
// removes it on failure. We then rename ours over the destination, or remove it.
// Exceptions raised inside a libzip callback are carried across the C code and
// rethrown after zip_close has cleaned up.
#include "wheelfix/zip/writer.hpp"

#include "archive_internals.hpp"
#include "wheelfix/util/error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <exception>
#include <fstream>
#include <memory>
#include <optional>
#include <random>

namespace wheelfix::zip {
namespace {

constexpr std::size_t kParallelContent = std::size_t(1) << 20;
constexpr zip_uint32_t kMsdosDirectory = 0x10;

[[noreturn]] void fail(const std::filesystem::path& destination, const std::string& problem) {
    throw InputError(destination.string(), problem);
}

// ---- the temporary file -------------------------------------------------------

class TemporaryFile {
public:
    explicit TemporaryFile(const std::filesystem::path& destination) {
        auto directory = destination.parent_path().empty() ? std::filesystem::path(".") : destination.parent_path();
        std::random_device seed;
        std::mt19937_64 random(seed());
        int error = EEXIST;
        for (int attempt = 0; attempt < 100 && error == EEXIST; ++attempt) {
            path_ = directory / ("." + destination.filename().string() + ".wheelfix-" + std::to_string(random() % 1000000000));
            int fd = ::open(path_.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);  // 0666 & ~umask
            if (fd >= 0) {
                ::close(fd);
                return;
            }
            error = errno;
        }
        path_.clear();
        fail(destination, "cannot create a temporary file in " + directory.string() + ": " + std::strerror(error));
    }
    ~TemporaryFile() {
        if (path_.empty()) return;
        std::error_code ignored;
        std::filesystem::remove(path_, ignored);
    }
    TemporaryFile(const TemporaryFile&) = delete;
    TemporaryFile& operator=(const TemporaryFile&) = delete;

    const std::filesystem::path& path() const { return path_; }

    void rename_to(const std::filesystem::path& destination) {
        std::error_code error;
        std::filesystem::rename(path_, destination, error);
        if (error) fail(destination, "cannot move the new archive into place: " + error.message());
        path_.clear();
    }

private:
    std::filesystem::path path_;
};

// libzip refuses to write an archive without members (zip_close deletes it).
void write_empty_archive(const std::filesystem::path& path, const std::filesystem::path& destination) {
    static constexpr char kEndOfCentralDirectory[22] = {'P', 'K', 5, 6};
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(kEndOfCentralDirectory, sizeof kEndOfCentralDirectory);
    if (!out.flush()) fail(destination, "cannot write " + path.string());
}

// ---- precompressed sources ------------------------------------------------------

// Serves a PrecompressedMember's pieces to libzip as an already-deflated stream.
class PiecesSource {
public:
    PiecesSource(const PrecompressedMember& member, const Archive& input, const Member* original,
                 std::exception_ptr& failure)
        : member_(member), input_(input), original_(original), failure_(failure) {
        zip_error_init(&error_);
    }
    ~PiecesSource() { zip_error_fini(&error_); }
    PiecesSource(const PiecesSource&) = delete;
    PiecesSource& operator=(const PiecesSource&) = delete;

    static zip_int64_t callback(void* state, void* data, zip_uint64_t length, zip_source_cmd_t command) {
        auto& self = *static_cast<PiecesSource*>(state);
        try {
            return self.answer(data, length, command);
        } catch (...) {
            if (!self.failure_) self.failure_ = std::current_exception();
            zip_error_set(&self.error_, ZIP_ER_READ, 0);
            return -1;
        }
    }

private:
    zip_int64_t answer(void* data, zip_uint64_t length, zip_source_cmd_t command) {
        switch (command) {
            case ZIP_SOURCE_OPEN: return open();
            case ZIP_SOURCE_READ: return static_cast<zip_int64_t>(read(static_cast<std::uint8_t*>(data), length));
            case ZIP_SOURCE_CLOSE: reader_.reset(); return 0;
            case ZIP_SOURCE_STAT: return stat(data, length);
            case ZIP_SOURCE_ERROR: return zip_error_to_data(&error_, data, length);
            case ZIP_SOURCE_FREE: return 0;  // owned by write_archive
            case ZIP_SOURCE_SUPPORTS:
                return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE,
                                                      ZIP_SOURCE_STAT, ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, -1);
            default: zip_error_set(&error_, ZIP_ER_OPNOTSUPP, 0); return -1;
        }
    }

    // What makes libzip copy instead of compress: the method and all sizes, known.
    zip_int64_t stat(void* data, zip_uint64_t length) {
        if (length < sizeof(zip_stat_t)) {
            zip_error_set(&error_, ZIP_ER_INVAL, 0);
            return -1;
        }
        auto* st = static_cast<zip_stat_t*>(data);
        zip_stat_init(st);
        st->valid = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD | ZIP_STAT_CRC | ZIP_STAT_ENCRYPTION_METHOD;
        st->size = member_.size;
        st->comp_size = member_.compressed_size;
        st->comp_method = ZIP_CM_DEFLATE;
        st->crc = member_.crc32;
        st->encryption_method = ZIP_EM_NONE;
        return sizeof(zip_stat_t);
    }

    zip_int64_t open() {
        piece_ = 0;
        offset_in_piece_ = 0;
        delivered_ = 0;
        reader_.reset();
        return 0;
    }

    std::size_t read(std::uint8_t* out, zip_uint64_t length) {
        std::size_t done = 0;
        while (done < length && piece_ < member_.pieces.size()) {
            const CompressedPiece& piece = member_.pieces[piece_];
            std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(length - done, piece.length - offset_in_piece_));
            if (piece.from_original)
                read_original(piece.original_offset + offset_in_piece_, {out + done, want});
            else
                std::memcpy(out + done, piece.bytes.data() + offset_in_piece_, want);
            done += want;
            offset_in_piece_ += want;
            if (offset_in_piece_ == piece.length) {
                ++piece_;
                offset_in_piece_ = 0;
            }
        }
        delivered_ += done;
        if (done == 0 && delivered_ != member_.compressed_size)
            throw std::logic_error("precompressed member: pieces hold " + std::to_string(delivered_) +
                                   " bytes, compressed_size says " + std::to_string(member_.compressed_size));
        return done;
    }

    // Reads the original stored stream at `offset`: pieces come in stream order, so
    // this only skips forward, except when a caller's pieces go back (then reopen).
    void read_original(std::uint64_t offset, std::span<std::uint8_t> out) {
        seek_original(offset);
        for (std::size_t filled = 0; filled < out.size();) {
            std::size_t got = reader_->read(out.subspan(filled));
            if (got == 0) fail_past_end();
            filled += got;
        }
    }

    void seek_original(std::uint64_t offset) {
        if (!original_) throw std::logic_error("precompressed member refers to an original it was not given");
        if (!reader_ || reader_->position() > offset) reader_ = input_.open_raw(*original_);
        if (reader_->position() == offset) return;
        std::vector<std::uint8_t> skipped(std::size_t(64) << 10);
        while (reader_->position() < offset) {
            auto step = std::min<std::uint64_t>(offset - reader_->position(), skipped.size());
            if (reader_->read({skipped.data(), static_cast<std::size_t>(step)}) == 0) fail_past_end();
        }
    }

    [[noreturn]] void fail_past_end() const {
        throw InputError(input_.path().string(),
                         "member " + original_->name + ": the precompressed pieces run past its stored bytes");
    }

    const PrecompressedMember& member_;
    const Archive& input_;
    const Member* original_;
    std::exception_ptr& failure_;
    zip_error_t error_;
    std::optional<RawReader> reader_;
    std::size_t piece_ = 0;
    std::uint64_t offset_in_piece_ = 0;
    std::uint64_t delivered_ = 0;
};

// ---- the output archive ----------------------------------------------------------

// libzip writes DOS date/time fields from localtime(); the contract (and
// Archive's reader) reads those fields as UTC, so hand libzip the time whose local
// breakdown is the UTC breakdown of `mtime`. (A UTC time that falls in the hour a
// local DST switch skips cannot be expressed so and comes out an hour later; with
// TZ=UTC, as in CI and reproducible builds, it is always exact.)
time_t libzip_time(std::int64_t mtime) {
    time_t utc = static_cast<time_t>(mtime);
    std::tm fields{};
    if (!gmtime_r(&utc, &fields)) return utc;
    fields.tm_isdst = -1;
    return mktime(&fields);
}

zip_uint32_t external_attributes(std::uint32_t unix_mode) {
    zip_uint32_t attributes = static_cast<zip_uint32_t>(unix_mode) << 16;
    if (S_ISDIR(unix_mode)) attributes |= kMsdosDirectory;
    return attributes;
}

class OutputArchive {
public:
    OutputArchive(const std::filesystem::path& path, const std::filesystem::path& destination, const Archive& input)
        : destination_(destination), input_(input) {
        int code = 0;
        archive_ = zip_open(path.c_str(), ZIP_TRUNCATE, &code);
        if (!archive_) {
            zip_error_t error;
            zip_error_init_with_code(&error, code);
            std::string message = zip_error_strerror(&error);
            zip_error_fini(&error);
            fail(destination, "cannot write: " + message);
        }
    }
    ~OutputArchive() {
        if (archive_) zip_discard(archive_);  // before the sources it reads from go away
    }
    OutputArchive(const OutputArchive&) = delete;
    OutputArchive& operator=(const OutputArchive&) = delete;

    void add(const OutputMember& member) {
        if (auto reason = unsafe_name_reason(member.name)) fail(destination_, "member " + member.name + ": unsafe name (" + *reason + ")");
        zip_uint64_t index = std::visit([&](const auto& source) { return add_source(member.name, source); }, member.source);
        if (zip_file_set_external_attributes(archive_, index, 0, ZIP_OPSYS_UNIX, external_attributes(member.unix_mode)) != 0 ||
            zip_file_set_mtime(archive_, index, libzip_time(member.mtime), 0) != 0)
            fail_libzip("member " + member.name);
    }

    void close() {
        if (zip_close(archive_) == 0) {
            archive_ = nullptr;
            return;
        }
        if (failure_) std::rethrow_exception(failure_);
        fail_libzip("cannot write");
    }

private:
    zip_uint64_t add_source(const std::string& name, const RawCopy& copy) {
        if (!copy.member) throw std::invalid_argument("write_archive: raw copy of no member (" + name + ")");
        zip_uint64_t index = add_file(name, zip_source_zip(archive_, ArchiveInternals::libzip(input_), copy.member->index,
                                                           ZIP_FL_COMPRESSED, 0, 0));
        if (copy.member->method == Method::stored && zip_set_file_compression(archive_, index, ZIP_CM_STORE, 0) != 0)
            fail_libzip("member " + name);
        return index;
    }

    zip_uint64_t add_source(const std::string& name, const Precompressed& precompressed) {
        return add_pieces(name, precompressed.data, precompressed.original);
    }

    zip_uint64_t add_source(const std::string& name, const Content& content) {
        if (content.bytes.size() >= kParallelContent) {
            deflated_.push_back(std::make_unique<PrecompressedMember>(parallel_deflate(content.bytes)));
            return add_pieces(name, *deflated_.back(), nullptr);
        }
        return add_file(name, zip_source_buffer(archive_, content.bytes.data(), content.bytes.size(), 0));
    }

    zip_uint64_t add_pieces(const std::string& name, const PrecompressedMember& data, const Member* original) {
        pieces_.push_back(std::make_unique<PiecesSource>(data, input_, original, failure_));
        return add_file(name, zip_source_function(archive_, PiecesSource::callback, pieces_.back().get()));
    }

    zip_uint64_t add_file(const std::string& name, zip_source_t* source) {
        if (!source) fail_libzip("member " + name);
        zip_int64_t index = zip_file_add(archive_, name.c_str(), source, ZIP_FL_ENC_UTF_8);
        if (index < 0) {
            zip_source_free(source);
            fail_libzip("member " + name);
        }
        return static_cast<zip_uint64_t>(index);
    }

    [[noreturn]] void fail_libzip(const std::string& what) {
        fail(destination_, what + ": " + zip_strerror(archive_));
    }

    // Declared before archive_ so that they outlive it (members die in reverse order).
    std::vector<std::unique_ptr<PiecesSource>> pieces_;
    std::vector<std::unique_ptr<PrecompressedMember>> deflated_;
    std::exception_ptr failure_;
    const std::filesystem::path& destination_;
    const Archive& input_;
    zip_t* archive_ = nullptr;
};

}  // namespace

void write_archive(const std::filesystem::path& destination, const Archive& input,
                   const std::vector<OutputMember>& members) {
    TemporaryFile temporary(destination);
    if (members.empty()) {
        write_empty_archive(temporary.path(), destination);
    } else {
        OutputArchive output(temporary.path(), destination, input);
        for (const auto& member : members) output.add(member);
        output.close();
    }
    temporary.rename_to(destination);
}

}  // namespace wheelfix::zip
