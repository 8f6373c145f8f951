// Fuzz target: the zip reader and the wheel built on it.
//
// The input is written to a file named like a wheel and read the way the commands
// read it: Archive::open (central directory, names, limits), every member through
// read(), stream(), open_raw(), inflate_indexed(), SeekableMember (ranges read
// again must be the streamed bytes) and FarReader (from its middle: in order,
// within the ranges, from known_from() on); then Wheel::open, the
// one-pass scan, verify and the whole inspect report. Every refusal must be an
// InputError. What a member delivers must agree with the central directory (size,
// CRC, compressed size), and the block index must be ordered. The inflate limits
// are lowered (64 MiB in all) so that a lying size cannot make one run slow.
#include "fuzz_support.hpp"

#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/wheel/scan.hpp"
#include "wheelfix/wheel/verify.hpp"
#include "wheelfix/wheel/wheel.hpp"
#include "wheelfix/zip/archive.hpp"
#include "wheelfix/zip/far_read.hpp"
#include "wheelfix/zip/inflate_index.hpp"
#include "wheelfix/zip/seekable_member.hpp"

#include <algorithm>
#include <cstdlib>
#include <vector>

using namespace wheelfix;
using fuzz::expect_clean;
using fuzz::fuzz_bug;

namespace {

void check_index(const zip::Member& member, const zip::InflatedMember& inflated) {
    if (inflated.size != member.size) fuzz_bug("inflate_indexed size differs from the central directory");
    if (inflated.crc32 != member.crc32) fuzz_bug("inflate_indexed CRC differs from the central directory");
    for (std::size_t i = 1; i < inflated.blocks.size(); ++i) {
        const auto& before = inflated.blocks[i - 1];
        const auto& after = inflated.blocks[i];
        if (after.compressed_bit < before.compressed_bit || after.uncompressed < before.uncompressed)
            fuzz_bug("block index out of order");
        if (after.uncompressed > inflated.size) fuzz_bug("access point past the member's end");
    }
}

// Streamed once, then ranges of it read again from the seek windows: the same bytes.
void read_seekable(const zip::Archive& archive, const zip::Member& member) {
    constexpr std::uint64_t kCompared = std::uint64_t(1) << 20;
    std::vector<std::uint8_t> streamed;
    const zip::SeekableMember seekable(archive, member, [&](std::span<const std::uint8_t> chunk) {
        if (streamed.size() < kCompared) streamed.insert(streamed.end(), chunk.begin(), chunk.end());
    });
    if (seekable.size() != member.size) fuzz_bug("SeekableMember size differs from the central directory");
    const std::uint64_t size = std::min<std::uint64_t>(seekable.size(), kCompared);
    ByteRanges ranges;
    ranges.add(size / 3, size / 3 + 7);
    ranges.add(size / 2, size);
    std::uint64_t next = 0;
    seekable.read(ranges, [&](std::span<const std::uint8_t> chunk, std::uint64_t at) {
        if (at < next || at + chunk.size() > size || !ranges.covers(at, at + chunk.size()))
            fuzz_bug("SeekableMember::read delivered bytes out of order or outside the ranges");
        if (!std::equal(chunk.begin(), chunk.end(), streamed.begin() + static_cast<std::ptrdiff_t>(at)))
            fuzz_bug("SeekableMember::read delivered other bytes than the stream");
        next = at + chunk.size();
    });
}

// From the middle without what comes before: any answer holds its own promises
// (its bytes are the caller's to check against a whole read, far_read.hpp).
void read_far(const zip::Archive& archive, const zip::Member& member) {
    const std::uint64_t lowest = member.size / 2;
    const auto far = zip::FarReader::open(archive, member, lowest);
    if (!far) return;
    if (far->known_from() > lowest) fuzz_bug("FarReader::known_from() past the offset asked for");
    const std::uint64_t end = std::min<std::uint64_t>(member.size, lowest + 4096);
    ByteRanges ranges;
    ranges.add(lowest, end);
    std::uint64_t next = lowest;
    far->read(ranges, [&](std::span<const std::uint8_t> chunk, std::uint64_t at) {
        if (at != next || at + chunk.size() > end) fuzz_bug("FarReader::read delivered bytes out of order or outside the range");
        next = at + chunk.size();
    });
    if (next != end) fuzz_bug("FarReader::read left part of the range out");
}

void read_member_every_way(const zip::Archive& archive, const zip::Member& member) {
    expect_clean<InputError>([&] {
        if (archive.read(member).size() != member.size) fuzz_bug("read() size differs from the central directory");
    });
    expect_clean<InputError>([&] {
        std::uint64_t seen = 0;
        const auto total = archive.stream(member, [&](std::span<const std::uint8_t> chunk) { seen += chunk.size(); }, 4096);
        if (total != seen || total != member.size) fuzz_bug("stream() delivered a size other than declared");
    });
    expect_clean<InputError>([&] {
        auto raw = archive.open_raw(member);
        std::vector<std::uint8_t> buffer(1000);
        std::uint64_t total = 0;
        while (auto got = raw.read(buffer)) total += got;
        if (total != member.compressed_size) fuzz_bug("open_raw() delivered a size other than declared");
    });
    expect_clean<InputError>([&] {
        check_index(member, zip::inflate_indexed(archive, member, [](std::span<const std::uint8_t>) {}, {}));
    });
    expect_clean<InputError>([&] { read_seekable(archive, member); });
    expect_clean<InputError>([&] { read_far(archive, member); });
}

void read_as_wheel(const std::filesystem::path& path) {
    expect_clean<InputError>([&] {
        const auto wheel = wheel::Wheel::open(path);
        const auto digests = wheel::scan_members(wheel.archive());
        (void)wheel::verify_wheel(wheel, digests);
    });
    expect_clean<InputError>([&] { (void)analysis::inspect_wheel(path); });
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    ::setenv("WHEELFIX_MAX_INFLATED", "64M", 1);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static fuzz::InputFile file("fuzz_pkg-1.0-cp310-abi3-manylinux2014_x86_64.whl");
    const auto& path = file.write({data, size});
    expect_clean<InputError>([&] {
        const auto archive = zip::Archive::open(path);
        for (const auto& member : archive.members())
            if (!member.is_directory) read_member_every_way(archive, member);
    });
    read_as_wheel(path);
    return 0;
}
