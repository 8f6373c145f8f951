// zip::write_archive: raw copies stay byte for byte, precompressed members go in as
// given (never recompressed: their stored bytes equal the pieces), ZIP64 where
// sizes or the member count need it,
// modes, symlinks and times are kept, the output is deterministic, and a failed
// write leaves no file behind.
#include "wheelfix/util/byte_edit.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/zip/archive.hpp"
#include "wheelfix/zip/inflate_index.hpp"
#include "wheelfix/zip/splice.hpp"
#include "wheelfix/zip/writer.hpp"

#include "zip_test_support.hpp"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <zip.h>
#include <zlib.h>

#include <cstdlib>
#include <ctime>
#include <set>

using namespace wheelfix;
using namespace wheelfix::test;
using wheelfix::zip::Archive;
using wheelfix::zip::OutputMember;

namespace {

using Bytes = std::vector<std::uint8_t>;

std::string as_string(const Bytes& bytes) { return std::string(bytes.begin(), bytes.end()); }
Bytes as_bytes(const std::string& text) { return Bytes(text.begin(), text.end()); }

// A real ELF file that every machine running the tests has: the test binary, its
// first 8 MiB (all of a release build's; the sanitizer build's is 100 MB, which
// every case read byte by byte and deflated: 5 minutes of CI under ASan for nothing).
std::string test_binary() {
    std::ifstream in("/proc/self/exe", std::ios::binary);
    std::string bytes(std::size_t(8) << 20, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    bytes.resize(static_cast<std::size_t>(in.gcount()));
    return bytes;
}

std::set<std::string> listing(const fs::path& dir) {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
    return names;
}

Bytes stored_bytes(const zip::PrecompressedMember& member, const Bytes& original_stream) {
    Bytes out;
    for (const auto& piece : member.pieces) {
        if (!piece.from_original) {
            out.insert(out.end(), piece.bytes.begin(), piece.bytes.end());
            continue;
        }
        auto begin = original_stream.begin() + static_cast<std::ptrdiff_t>(piece.original_offset);
        out.insert(out.end(), begin, begin + static_cast<std::ptrdiff_t>(piece.length));
    }
    return out;
}

OutputMember raw_copy_of(const zip::Member& member) {
    return {member.name, zip::RawCopy{&member}, member.unix_mode, member.mtime};
}

const std::time_t kWhen = 1700000000;  // even: DOS time keeps it exactly

// An input with every kind of member a wheel has.
// The same input.zip for every case: libzip deflates it once per run (8 MiB, the
// most of any case's set-up), each case gets its own copy to open, damage or shrink.
fs::path write_input(const fs::path& dir) {
    static const std::string stored = [] {
        TempDir once;
        write_zip(once / "input.zip", {
            {"pkg/", "", ZIP_CM_STORE, S_IFDIR | 0755u, kWhen},
            {"pkg/run.sh", "#!/bin/sh\necho run\n", ZIP_CM_STORE, S_IFREG | 0755u, kWhen},
            {"pkg/link.so", "libreal.so.1", ZIP_CM_STORE, S_IFLNK | 0777u, kWhen},
            {"pkg/empty.txt", "", ZIP_CM_STORE, S_IFREG | 0600u, kWhen},
            {"pkg/data.txt", std::string(50000, 'x') + "end", ZIP_CM_DEFLATE, S_IFREG | 0644u, kWhen + 2},
            {"pkg/lib.so", test_binary(), ZIP_CM_DEFLATE, S_IFREG | 0755u, kWhen + 4},
        });
        return read_bytes(once / "input.zip");
    }();
    auto path = dir / "input.zip";
    write_bytes(path, stored);
    return path;
}

template <typename Action>
std::string input_error_of(Action action) {
    try {
        action();
    } catch (const InputError& error) {
        return error.file() + ": " + error.problem();
    }
    FAIL("no InputError");
    return "";
}

// The DOS date/time fields of the first local header, as "YYYY-MM-DD hh:mm:ss".
std::string first_local_header_time(const fs::path& path) {
    auto bytes = read_bytes(path);
    REQUIRE(bytes.compare(0, 4, "PK\x03\x04") == 0);
    auto u16 = [&](std::size_t at) { return static_cast<unsigned>(static_cast<unsigned char>(bytes[at]) | (static_cast<unsigned char>(bytes[at + 1]) << 8)); };
    unsigned time = u16(10), date = u16(12);
    char text[32];
    std::snprintf(text, sizeof text, "%04u-%02u-%02u %02u:%02u:%02u", 1980 + (date >> 9), (date >> 5) & 15, date & 31,
                  time >> 11, (time >> 5) & 63, (time & 31) * 2);
    return text;
}

}  // namespace

TEST_CASE("zip writer: raw copies keep stored bytes, CRC, method, sizes, modes, symlinks and times") {
    TempDir dir;
    auto input = Archive::open(write_input(dir.path()));
    std::vector<OutputMember> members;
    for (const auto& member : input.members()) members.push_back(raw_copy_of(member));
    zip::write_archive(dir / "out.whl", input, members);

    auto output = Archive::open(dir / "out.whl");
    REQUIRE(output.members().size() == input.members().size());
    for (std::size_t i = 0; i < input.members().size(); ++i) {
        const auto& before = input.members()[i];
        const auto& after = output.members()[i];
        CAPTURE(before.name);
        CHECK(after.name == before.name);
        CHECK(after.method == before.method);
        CHECK(after.crc32 == before.crc32);
        CHECK(after.size == before.size);
        CHECK(after.compressed_size == before.compressed_size);
        CHECK(output.read_raw(after) == input.read_raw(before));  // copied, not recompressed
        CHECK(after.unix_mode == before.unix_mode);
        CHECK(after.is_symlink == before.is_symlink);
        CHECK(after.is_directory == before.is_directory);
        CHECK(after.mtime == before.mtime);
    }
    CHECK(output.find("pkg/link.so")->is_symlink);
    CHECK(as_string(output.read(*output.find("pkg/link.so"))) == "libreal.so.1");
    CHECK(output.find("pkg/run.sh")->unix_mode == (S_IFREG | 0755));
    CHECK(output.find("pkg/")->unix_mode == (S_IFDIR | 0755));
    CHECK(output.find("pkg/lib.so")->method == zip::Method::deflated);
    CHECK(listing(dir.path()) == std::set<std::string>{"input.zip", "out.whl"});
}

TEST_CASE("zip writer: a spliced member goes in as its pieces, not recompressed") {
    TempDir dir;
    auto input = Archive::open(write_input(dir.path()));
    const auto& lib = *input.find("pkg/lib.so");
    auto inflated = zip::inflate_indexed(input, lib, [](auto) {}, {.keep = true});
    std::uint64_t middle = lib.size / 2;
    ByteEdits edits{{middle, 16, Bytes(16, 0xcc)}, {lib.size, 0, Bytes(5000, 0x11)}};
    auto spliced = zip::plan_splice(inflated, edits);
    REQUIRE(spliced.pieces.front().from_original);
    auto expected_stored = stored_bytes(spliced, input.read_raw(lib));
    // A level-1 parallel deflate: libzip recompressing it would change every byte.
    Bytes content(std::size_t(3) << 20);
    for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<std::uint8_t>((i * 31) ^ (i >> 9));
    auto level1 = zip::parallel_deflate(content, {zip::Backend::zlib, 1}, 2);

    std::vector<OutputMember> members{
        {"pkg/lib.so", zip::Precompressed{&lib, spliced}, S_IFREG | 0755u, kWhen},
        {"pkg/level1.bin", zip::Precompressed{nullptr, level1}, S_IFREG | 0644u, kWhen},
        {"pkg/data.txt", zip::RawCopy{input.find("pkg/data.txt")}, S_IFREG | 0644u, kWhen},
    };
    zip::write_archive(dir / "out.whl", input, members);

    auto output = Archive::open(dir / "out.whl");
    const auto& out_lib = *output.find("pkg/lib.so");
    CHECK(out_lib.method == zip::Method::deflated);
    CHECK(out_lib.crc32 == spliced.crc32);
    CHECK(out_lib.size == spliced.size);
    CHECK(out_lib.compressed_size == spliced.compressed_size);
    CHECK(output.read_raw(out_lib) == expected_stored);
    CHECK(output.read(out_lib) == apply_edits(inflated.data, edits));  // libzip inflates and checks the CRC

    const auto& out_level1 = *output.find("pkg/level1.bin");
    CHECK(output.read_raw(out_level1) == stored_bytes(level1, {}));
    CHECK(output.read(out_level1) == content);
}

TEST_CASE("zip writer: new content, small (libzip deflates) and big (parallel deflate), directories and symlinks") {
    TempDir dir;
    auto input = Archive::open(write_input(dir.path()));
    Bytes big(std::size_t(3) << 20);
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>("RECORD,sha256=,"[i % 15] + (i >> 16) % 7);
    std::vector<OutputMember> members{
        {"new/", zip::Content{}, S_IFDIR | 0755u, kWhen},
        {"new/RECORD", zip::Content{as_bytes("a,sha256=x,1\n")}, S_IFREG | 0644u, kWhen},
        {"new/big.bin", zip::Content{big}, S_IFREG | 0600u, kWhen},
        {"new/libx.so", zip::Content{as_bytes("libx.so.2")}, S_IFLNK | 0777u, kWhen},
        {"new/empty", zip::Content{}, S_IFREG | 0644u, kWhen},
    };
    zip::write_archive(dir / "out.whl", input, members);

    auto output = Archive::open(dir / "out.whl");
    REQUIRE(output.members().size() == members.size());
    CHECK(output.members()[0].is_directory);
    CHECK(output.members()[0].unix_mode == (S_IFDIR | 0755));
    CHECK((output.members()[0].external_attributes & 0x10) != 0);  // the MS-DOS directory bit, as zipfile sets it
    CHECK(as_string(output.read(output.members()[1])) == "a,sha256=x,1\n");
    const auto& out_big = output.members()[2];
    CHECK(out_big.unix_mode == (S_IFREG | 0600));
    CHECK(output.read_raw(out_big) == stored_bytes(zip::parallel_deflate(big, zip::member_deflate(), 1), {}));
    CHECK(output.read(out_big) == big);
    CHECK(output.members()[3].is_symlink);
    CHECK(as_string(output.read(output.members()[3])) == "libx.so.2");
    CHECK(output.members()[4].size == 0);
}

TEST_CASE("zip writer: same inputs, same bytes; no extra fields; DOS time is the UTC time given") {
    const char* old_tz = std::getenv("TZ");
    std::string saved_tz = old_tz ? old_tz : "";
    setenv("TZ", "America/New_York", 1);  // the DOS fields must not depend on it
    tzset();
    TempDir dir;
    auto input = Archive::open(write_input(dir.path()));
    std::vector<OutputMember> members;
    for (const auto& member : input.members()) members.push_back(raw_copy_of(member));
    members.push_back({"dist-info/RECORD", zip::Content{as_bytes("x,,\n")}, S_IFREG | 0644u, 1767225600});
    members.front().mtime = 1767225600;  // 2026-01-01 00:00:00 UTC
    zip::write_archive(dir / "one.whl", input, members);
    zip::write_archive(dir / "two.whl", input, members);
    CHECK(read_bytes(dir / "one.whl") == read_bytes(dir / "two.whl"));
    CHECK(first_local_header_time(dir / "one.whl") == "2026-01-01 00:00:00");
    CHECK(Archive::open(dir / "one.whl").members().front().mtime == 1767225600);

    int error = 0;
    zip_t* archive = zip_open((dir / "one.whl").c_str(), ZIP_RDONLY, &error);
    REQUIRE(archive != nullptr);
    for (zip_uint64_t i = 0; i < members.size(); ++i) {
        CHECK(zip_file_extra_fields_count(archive, i, ZIP_FL_LOCAL) == 0);
        CHECK(zip_file_extra_fields_count(archive, i, ZIP_FL_CENTRAL) == 0);
    }
    zip_discard(archive);
    if (old_tz)
        setenv("TZ", saved_tz.c_str(), 1);
    else
        unsetenv("TZ");
    tzset();
}

TEST_CASE("zip: a DOS time in the local zone's daylight-saving gap is read as written, and copied as it was") {
    // 02:30 on a spring-forward day does not exist in local time: read through
    // mktime it comes back as 03:30. POSIX rule strings, so no tzdata is needed.
    const char* old_tz = std::getenv("TZ");
    std::string saved_tz = old_tz ? old_tz : "";
    const std::int64_t us_gap = 1678588200;     // 2023-03-12 02:30:00 (US spring forward)
    const std::int64_t eu_gap = 1679797800;     // 2023-03-26 02:30:00 (EU spring forward)
    const std::int64_t us_twice = 1699147800;   // 2023-11-05 01:30:00 (US fall back: the hour that happens twice)
    for (const std::string zone : {"EST5EDT,M3.2.0,M11.1.0", "CET-1CEST,M3.5.0,M10.5.0/3", "UTC0"}) {
        CAPTURE(zone);
        setenv("TZ", zone.c_str(), 1);
        tzset();
        TempDir dir;
        write_zip(dir / "input.zip", {{"x", "x", ZIP_CM_STORE}});
        auto input = Archive::open(dir / "input.zip");
        std::vector<OutputMember> members;
        for (const auto& [name, when] : {std::pair{"a.py", us_gap}, std::pair{"b.py", eu_gap}, std::pair{"c.py", us_twice}})
            members.push_back({name, zip::Content{as_bytes(std::string(name) + " = 1\n")}, S_IFREG | 0644u, when});
        zip::write_archive(dir / "one.whl", input, members);
        auto written = Archive::open(dir / "one.whl");
        REQUIRE(written.members().size() == 3);
        CHECK(written.members()[0].mtime == us_gap);
        CHECK(written.members()[1].mtime == eu_gap);
        CHECK(written.members()[2].mtime == us_twice);
        std::vector<OutputMember> copies;
        for (const auto& member : written.members()) copies.push_back(raw_copy_of(member));
        zip::write_archive(dir / "copy.whl", written, copies);
        CHECK(read_bytes(dir / "copy.whl") == read_bytes(dir / "one.whl"));
    }
    if (old_tz)
        setenv("TZ", saved_tz.c_str(), 1);
    else
        unsetenv("TZ");
    tzset();
}

TEST_CASE("zip writer: the output replaces an existing file (Existing::replace), with the usual file mode") {
    TempDir dir;
    auto input = Archive::open(write_input(dir.path()));
    write_bytes(dir / "out.whl", "old");
    // By default an existing destination is refused by the final rename itself.
    CHECK_THROWS_WITH_AS(zip::write_archive(dir / "out.whl", input, {raw_copy_of(input.members()[1])}),
                         doctest::Contains("already exists"), InputError);
    CHECK(read_bytes(dir / "out.whl") == "old");
    CHECK(listing(dir.path()) == std::set<std::string>{"input.zip", "out.whl"});
    zip::write_archive(dir / "out.whl", input, {raw_copy_of(input.members()[1])}, Existing::replace);
    CHECK(Archive::open(dir / "out.whl").members().size() == 1);
    mode_t mask = umask(022);
    umask(mask);
    CHECK((fs::status(dir / "out.whl").permissions() & fs::perms::all) == static_cast<fs::perms>(0666 & ~mask));

    zip::write_archive(dir / "empty.whl", input, {});  // libzip would not write it; we do
    CHECK(Archive::open(dir / "empty.whl").members().empty());
    CHECK(listing(dir.path()) == std::set<std::string>{"input.zip", "out.whl", "empty.whl"});
}

TEST_CASE("zip writer: a failed write leaves no file behind and the destination untouched") {
    TempDir dir;
    auto input = Archive::open(write_input(dir.path()));
    write_bytes(dir / "out.whl", "previous");
    auto before = listing(dir.path());
    auto untouched = [&] {
        CHECK(listing(dir.path()) == before);
        CHECK(read_bytes(dir / "out.whl") == "previous");
    };
    const auto& lib = *input.find("pkg/lib.so");

    SUBCASE("the destination directory does not exist") {
        auto message = input_error_of([&] { zip::write_archive(dir / "missing" / "out.whl", input, {raw_copy_of(lib)}); });
        CHECK(message.find("cannot create a temporary file") != std::string::npos);
        CHECK_FALSE(fs::exists(dir / "missing"));
    }
    SUBCASE("pieces that run past the original's stored bytes") {
        zip::PrecompressedMember bad;
        bad.pieces.push_back({true, lib.compressed_size - 10, 100, {}});
        bad.compressed_size = 100;
        bad.size = 1000;
        std::vector<OutputMember> members{raw_copy_of(input.members()[1]), {"pkg/lib.so", zip::Precompressed{&lib, bad}}};
        auto message = input_error_of([&] { zip::write_archive(dir / "out.whl", input, members); });
        CHECK(message.find("input.zip: member pkg/lib.so: the precompressed pieces run past its stored bytes") != std::string::npos);
    }
    SUBCASE("pieces that disagree with compressed_size are a bug, reported as such") {
        auto spliced = zip::plan_splice(zip::inflate_indexed(input, lib, [](auto) {}, {.keep = true}), {{100, 1, {7}}});
        spliced.compressed_size += 1;
        CHECK_THROWS_AS(zip::write_archive(dir / "out.whl", input, {{"pkg/lib.so", zip::Precompressed{&lib, spliced}}}),
                        std::logic_error);
    }
    SUBCASE("the input shrinks after it was opened (its stored bytes are gone)") {
        auto copy_path = dir / "shrinking.zip";
        fs::copy_file(dir / "input.zip", copy_path);
        before = listing(dir.path());
        auto shrinking = Archive::open(copy_path);
        fs::resize_file(copy_path, 100);
        auto message = input_error_of([&] { zip::write_archive(dir / "out.whl", shrinking, {raw_copy_of(*shrinking.find("pkg/lib.so"))}); });
        CHECK(message.find(copy_path.string() + ": ") == 0);
    }
    SUBCASE("an unsafe name") {
        auto message = input_error_of([&] { zip::write_archive(dir / "out.whl", input, {{"../evil", zip::Content{}}}); });
        CHECK(message.find("member ../evil: unsafe name") != std::string::npos);
    }
    untouched();
}

TEST_CASE("zip writer: raw copies are taken as stored, so a damaged member stays damaged") {
    TempDir dir;
    write_zip(dir / "damaged.zip", {{"a.sh", "#!/bin/sh\n", ZIP_CM_STORE}});
    patch_file(dir / "damaged.zip", "#!/bin/sh", "#!/bin/zz");
    auto damaged = Archive::open(dir / "damaged.zip");
    zip::write_archive(dir / "out.whl", damaged, {raw_copy_of(damaged.members()[0])});
    auto output = Archive::open(dir / "out.whl");
    auto stored = read_bytes(dir / "out.whl");
    CHECK(stored.find("#!/bin/zz\n") != std::string::npos);
    CHECK(output.members()[0].crc32 == damaged.members()[0].crc32);
    CHECK(input_error_of([&] { (void)output.read(output.members()[0]); }).find("CRC") != std::string::npos);
}

namespace {

// A raw deflate stream of `chunks` MiB of zeros, as pieces: the first chunk on
// its own, then one chunk (primed with 32 KiB of zeros) repeated, each closed by
// a sync flush, then an empty final block. Gigabytes of content in a few MB.
zip::PrecompressedMember zeros_member(std::size_t chunks) {
    const Bytes zeros(std::size_t(1) << 20, 0);
    auto deflate_chunk = [&](bool primed) {
        z_stream stream{};
        REQUIRE(deflateInit2(&stream, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
        if (primed) deflateSetDictionary(&stream, zeros.data(), 32768);
        Bytes out(deflateBound(&stream, zeros.size()) + 64);
        stream.next_in = const_cast<Bytef*>(zeros.data());
        stream.avail_in = static_cast<uInt>(zeros.size());
        stream.next_out = out.data();
        stream.avail_out = static_cast<uInt>(out.size());
        REQUIRE(deflate(&stream, Z_SYNC_FLUSH) == Z_OK);
        out.resize(out.size() - stream.avail_out);
        deflateEnd(&stream);
        return out;
    };
    auto piece_of = [](Bytes bytes) {
        zip::CompressedPiece piece;
        piece.length = bytes.size();
        piece.bytes = std::move(bytes);
        return piece;
    };
    zip::PrecompressedMember member;
    Bytes first = deflate_chunk(false), repeated = deflate_chunk(true);
    auto chunk_crc = crc32_z(0, zeros.data(), zeros.size());
    for (std::size_t i = 0; i < chunks; ++i) {
        member.pieces.push_back(piece_of(i == 0 ? first : repeated));
        member.crc32 = static_cast<std::uint32_t>(crc32_combine(member.crc32, chunk_crc, static_cast<z_off_t>(zeros.size())));
    }
    member.pieces.push_back(piece_of({0x03, 0x00}));  // an empty final fixed block
    for (const auto& piece : member.pieces) member.compressed_size += piece.length;
    member.size = chunks * zeros.size();
    return member;
}

}  // namespace

TEST_CASE("zip writer: ZIP64 for a member over 4 GiB and for more than 65,535 members") {
    TempDir dir;
    auto input = Archive::open(write_input(dir.path()));

    SUBCASE("a 4.1 GiB member") {
        setenv("WHEELFIX_MAX_RATIO", "5000", 1);  // zeros deflate 1012:1, past the zip-bomb guard
        auto big = zeros_member(4200);
        REQUIRE(big.size > 0xFFFFFFFFull);
        zip::write_archive(dir / "big.whl", input,
                           {{"big.bin", zip::Precompressed{nullptr, big}}, raw_copy_of(*input.find("pkg/lib.so"))});
        auto output = Archive::open(dir / "big.whl");
        REQUIRE(output.members().size() == 2);
        CHECK(output.members()[0].size == big.size);
        CHECK(output.members()[0].crc32 == big.crc32);
        CHECK(output.stream(output.members()[0], [](auto) {}, std::size_t(16) << 20) == big.size);  // CRC checked too
        CHECK(output.read(output.members()[1]) == input.read(*input.find("pkg/lib.so")));
        unsetenv("WHEELFIX_MAX_RATIO");
    }
    SUBCASE("70,000 members") {
        std::vector<OutputMember> members;
        for (int i = 0; i < 70000; ++i) members.push_back({"d/f" + std::to_string(i), zip::Content{}, 0100644, kWhen});
        members.push_back(raw_copy_of(*input.find("pkg/lib.so")));
        zip::write_archive(dir / "many.whl", input, members);
        auto output = Archive::open(dir / "many.whl");
        REQUIRE(output.members().size() == 70001);
        CHECK(output.members()[69999].name == "d/f69999");
        CHECK(output.read(output.members()[70000]) == input.read(*input.find("pkg/lib.so")));
    }
}
