// write_archive: a new zip from raw copies, precompressed members and new content,
// written sequentially into an OutputFile that is renamed into place.
//
// Why our own writer and not libzip's: every member's sizes and CRC are known
// before its data is written, so a writer is a loop of "local header, data" plus
// the central directory (zip_records.hpp), and the stored bytes go from the input
// file to the output by copy_file_range, never through user memory, where libzip
// copies them in 8 KiB reads and writes (docs/decisions.md has the measurement).
#include "wheelfix/zip/writer.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/output_file.hpp"
#include "zip_records.hpp"

#include <sys/stat.h>

namespace wheelfix::zip {
namespace {

constexpr std::uint32_t kMsdosDirectory = 0x10;
constexpr std::uint16_t kStored = 0;
constexpr std::uint16_t kDeflated = 8;

std::uint32_t external_attributes(std::uint32_t unix_mode) {
    std::uint32_t attributes = unix_mode << 16;
    if (S_ISDIR(unix_mode)) attributes |= kMsdosDirectory;
    return attributes;
}

class ArchiveWriter {
public:
    ArchiveWriter(const std::filesystem::path& destination, const Archive& input, Existing existing)
        : output_(destination, existing), input_(input) {}

    // The file's blocks for the compressed bytes already known (raw copies and
    // precompressed members: the output is at least that long) are allocated at once.
    void reserve(const std::vector<OutputMember>& members) {
        std::uint64_t known = 0;
        for (const auto& member : members) {
            if (const auto* raw = std::get_if<RawCopy>(&member.source)) known += raw->member->compressed_size;
            if (const auto* precompressed = std::get_if<Precompressed>(&member.source)) known += precompressed->data.compressed_size;
        }
        output_.reserve(known);
    }

    void add(const OutputMember& member) {
        if (auto reason = unsafe_name_reason(member.name))
            fail("member " + member.name + ": unsafe name (" + *reason + ")");
        records::Entry entry;
        entry.name = member.name;
        entry.modified = records::dos_date_time(member.mtime);
        entry.external_attributes = external_attributes(member.unix_mode);
        entry.local_header_offset = output_.position();
        std::visit([&](const auto& source) { write_member(entry, source); }, member.source);
        directory_.push_back(std::move(entry));
    }

    void finish() {
        std::vector<std::uint8_t> tail;
        for (const auto& entry : directory_) records::append_central_header(tail, entry);
        std::uint64_t directory_offset = output_.position();
        std::uint64_t directory_size = tail.size();
        records::append_end_records(tail, directory_.size(), directory_offset, directory_size);
        output_.write(tail);
        output_.commit();
    }

private:
    void write_member(records::Entry& entry, const RawCopy& copy) {
        if (!copy.member) throw std::invalid_argument("write_archive: raw copy of no member (" + entry.name + ")");
        const Member& member = *copy.member;
        entry.method = member.method == Method::stored ? kStored : kDeflated;
        entry.crc32 = member.crc32;
        entry.size = member.size;
        entry.compressed_size = member.compressed_size;
        write_local_header(entry);
        copy_original(member, 0, member.compressed_size);
    }

    void write_member(records::Entry& entry, const Precompressed& precompressed) {
        write_pieces(entry, precompressed.data, precompressed.original);
    }

    void write_member(records::Entry& entry, const Content& content) {
        if (content.bytes.empty()) {
            entry.method = kStored;
            write_local_header(entry);
            return;
        }
        write_pieces(entry, parallel_deflate(content.bytes), nullptr);
    }

    void write_pieces(records::Entry& entry, const PrecompressedMember& data, const Member* original) {
        std::uint64_t total = 0;
        for (const auto& piece : data.pieces) total += piece.length;
        if (total != data.compressed_size)
            throw std::logic_error("precompressed member " + entry.name + ": pieces hold " + std::to_string(total) +
                                   " bytes, compressed_size says " + std::to_string(data.compressed_size));
        entry.method = kDeflated;
        entry.crc32 = data.crc32;
        entry.size = data.size;
        entry.compressed_size = data.compressed_size;
        write_local_header(entry);
        for (const auto& piece : data.pieces) {
            if (!piece.from_original) {
                output_.write(std::span(piece.bytes).first(piece.length));
                continue;
            }
            if (!original) throw std::logic_error("precompressed member " + entry.name + " refers to an original it was not given");
            copy_original(*original, piece.original_offset, piece.length);
        }
    }

    void write_local_header(const records::Entry& entry) {
        std::vector<std::uint8_t> header;
        records::append_local_header(header, entry);
        output_.write(header);
    }

    // Copies [offset, offset + length) of the member's stored stream, in the
    // kernel, as stored (proving them right is the caller's part: the header).
    void copy_original(const Member& member, std::uint64_t offset, std::uint64_t length) {
        if (offset > member.compressed_size || length > member.compressed_size - offset)
            throw InputError(input_.path().string(), "member " + member.name + ": the precompressed pieces run past its stored bytes");
        const std::uint64_t from = input_.data_offset(member) + offset;
        struct stat info {};
        if (::fstat(input_.descriptor(), &info) != 0 || static_cast<std::uint64_t>(info.st_size) < from + length)
            throw InputError(input_.path().string(), "member " + member.name + ": truncated (the file shrank while it was read)");
        output_.copy_from(input_.descriptor(), from, length);
    }

    [[noreturn]] void fail(const std::string& problem) const { throw InputError(output_.destination().string(), problem); }

    OutputFile output_;
    const Archive& input_;
    std::vector<records::Entry> directory_;
};

}  // namespace

void write_archive(const std::filesystem::path& destination, const Archive& input,
                   const std::vector<OutputMember>& members, Existing existing) {
    ArchiveWriter writer(destination, input, existing);
    writer.reserve(members);
    for (const auto& member : members) writer.add(member);
    writer.finish();
}

}  // namespace wheelfix::zip
