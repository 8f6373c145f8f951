// zip::Archive: real wheels open and read back; hand-made archives with unsafe
// names, forged duplicates/NULs, damaged bytes, unsupported storage and odd files
// are refused with an InputError naming the archive (and the member).
#include "wheelfix/util/error.hpp"
#include "wheelfix/zip/archive.hpp"
#include "wheelfix/zip/seekable_member.hpp"

#include "zip_test_support.hpp"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <ctime>
#include <thread>

using namespace wheelfix;
using namespace wheelfix::test;
using wheelfix::zip::Archive;

namespace {

// The InputError Archive::open throws for `path` (fails the test if none).
InputError open_error(const fs::path& path) {
    try {
        Archive::open(path);
    } catch (const InputError& error) {
        return error;
    }
    FAIL("Archive::open accepted " << path);
    return InputError("", "");
}

std::string as_string(const std::vector<std::uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

std::string raw_inflate(const std::vector<std::uint8_t>& compressed, std::size_t size) {
    std::string out(size, '\0');
    z_stream stream{};
    REQUIRE(inflateInit2(&stream, -15) == Z_OK);
    stream.next_in = const_cast<Bytef*>(compressed.data());
    stream.avail_in = static_cast<uInt>(compressed.size());
    stream.next_out = reinterpret_cast<Bytef*>(out.data());
    stream.avail_out = static_cast<uInt>(out.size());
    int status = inflate(&stream, Z_FINISH);
    inflateEnd(&stream);
    REQUIRE(status == Z_STREAM_END);
    return out;
}

const fs::path kTestzlib = "testzlib-0.0.1-cp310-cp310-linux_x86_64.whl";

}  // namespace

TEST_CASE("every auditwheel test wheel opens and every member reads back with its size and CRC") {
    auto wheels = auditwheel_wheels();
    REQUIRE(wheels.size() >= 20);
    for (const auto& path : wheels) {
        CAPTURE(path);
        auto archive = Archive::open(path);
        REQUIRE(!archive.members().empty());
        for (const auto& member : archive.members()) {
            CAPTURE(member.name);
            CHECK(archive.find(member.name) == &member);
            CHECK(member.has_unix_mode);
            auto bytes = archive.read(member);
            CHECK(bytes.size() == member.size);
            CHECK(crc32(0, bytes.data(), static_cast<uInt>(bytes.size())) == member.crc32);
            auto raw = archive.read_raw(member);
            CHECK(raw.size() == member.compressed_size);
            if (member.method == zip::Method::deflated) CHECK(raw_inflate(raw, member.size) == as_string(bytes));
        }
    }
}

TEST_CASE("a real wheel's member list carries what a writer needs") {
    auto archive = Archive::open(auditwheel_dir() / kTestzlib);
    REQUIRE(archive.members().size() == 5);
    const auto& so = archive.members()[0];
    CHECK(so.index == 0);
    CHECK(so.name == "testzlib.cpython-310-x86_64-linux-gnu.so");
    CHECK(so.size == 28672);
    CHECK(so.compressed_size == 12241);
    CHECK(so.method == zip::Method::deflated);
    CHECK(so.crc32 == 0xa2fe03abu);
    CHECK(so.unix_mode == (S_IFREG | 0755));
    CHECK(so.external_attributes == ((S_IFREG | 0755u) << 16));
    CHECK_FALSE(so.is_symlink);
    CHECK_FALSE(so.is_directory);
    CHECK(so.mtime == 1782060404);  // 2026-06-21 16:46:44, DOS fields read as UTC
    CHECK(archive.members()[4].name == "testzlib-0.0.1.dist-info/RECORD");
    CHECK(archive.members()[4].unix_mode == (S_IFREG | 0664));
    CHECK(archive.find("testzlib-0.0.1.dist-info/METADATA") == &archive.members()[1]);
    CHECK(archive.find("nope") == nullptr);
    CHECK(archive.path() == auditwheel_dir() / kTestzlib);
}

TEST_CASE("stream delivers bounded chunks that add up to read()") {
    auto archive = Archive::open(auditwheel_dir() / kTestzlib);
    const auto& so = archive.members()[0];
    std::string streamed;
    std::size_t largest_chunk = 0, chunks = 0;
    auto delivered = archive.stream(so, [&](std::span<const std::uint8_t> chunk) {
        largest_chunk = std::max(largest_chunk, chunk.size());
        ++chunks;
        streamed.append(chunk.begin(), chunk.end());
    }, 4096);
    CHECK(delivered == so.size);
    CHECK(largest_chunk <= 4096);
    CHECK(chunks >= 7);
    CHECK(streamed == as_string(archive.read(so)));
}

TEST_CASE("unix modes, symlinks, directories, stored members and modification times") {
    TempDir dir;
    std::time_t when = 1700000000;  // even, so the 2-second DOS resolution keeps it
    write_zip(dir / "modes.zip", {
        {"pkg/", "", ZIP_CM_STORE, S_IFDIR | 0755u},
        {"pkg/run.sh", "#!/bin/sh\n", ZIP_CM_STORE, S_IFREG | 0755u, when},
        {"pkg/link.so", "libreal.so.1", ZIP_CM_STORE, S_IFLNK | 0777u},
        {"pkg/data.txt", std::string(5000, 'x'), ZIP_CM_DEFLATE},
    });
    auto archive = Archive::open(dir / "modes.zip");
    const auto& members = archive.members();
    REQUIRE(members.size() == 4);
    CHECK(members[0].is_directory);
    CHECK(members[1].unix_mode == (S_IFREG | 0755));
    CHECK(members[1].method == zip::Method::stored);
    std::tm fields{};
    REQUIRE(localtime_r(&when, &fields) != nullptr);
    CHECK(members[1].mtime == timegm(&fields));
    CHECK(members[2].is_symlink);
    CHECK(as_string(archive.read(members[2])) == "libreal.so.1");
    CHECK(as_string(archive.read_raw(members[1])) == "#!/bin/sh\n");
    CHECK(members[3].method == zip::Method::deflated);
    CHECK(members[3].compressed_size < 100);
    CHECK(as_string(archive.read(members[3])) == std::string(5000, 'x'));
}

TEST_CASE("one archive read from several threads at once: stored and deflated members, the same bytes") {
    TempDir dir;
    std::vector<ZipEntry> entries;
    for (int i = 0; i < 12; ++i) {
        std::string content;
        for (int line = 0; line < 2000 * (i + 1); ++line) content += std::to_string(line * (i + 3)) + " member " + std::to_string(i) + "\n";
        entries.push_back({"m" + std::to_string(i) + ".txt", content, i % 2 == 0 ? ZIP_CM_STORE : ZIP_CM_DEFLATE});
    }
    write_zip(dir / "many.zip", entries);
    const auto archive = Archive::open(dir / "many.zip");
    std::vector<std::string> serial;
    for (const auto& member : archive.members()) serial.push_back(as_string(archive.read(member)));
    std::vector<std::vector<std::string>> per_thread(4, std::vector<std::string>(archive.members().size()));
    {
        std::vector<std::jthread> threads;
        for (std::size_t t = 0; t < per_thread.size(); ++t)
            threads.emplace_back([&, t] {
                for (int round = 0; round < 5; ++round)
                    for (std::size_t m = 0; m < archive.members().size(); ++m) {
                        // Each thread in its own order, so different members and the same one overlap.
                        const std::size_t at = (m + t * 5) % archive.members().size();
                        std::string streamed;
                        archive.stream(archive.members()[at], [&](std::span<const std::uint8_t> chunk) {
                            streamed.append(chunk.begin(), chunk.end());
                        }, 4096);
                        per_thread[t][at] = streamed;
                    }
            });
    }
    for (std::size_t t = 0; t < per_thread.size(); ++t) CHECK(per_thread[t] == serial);
    CHECK(serial[0] == entries[0].data);
    CHECK(archive.members()[0].method == zip::Method::stored);
}

TEST_CASE("two names for one member's stored bytes are refused at open, so no reader ever meets them") {
    // Why the concurrent readers never read "duplicate" members once: members with the
    // same data offset (the only proof of the same bytes; equal CRC-32 and sizes are
    // not) cannot reach them. Hand-made: one local header, two central entries at 0.
    std::string zip;
    auto le = [&zip](std::uint32_t value, int bytes) {
        for (int i = 0; i < bytes; ++i) zip += static_cast<char>((value >> (8 * i)) & 0xff);
    };
    const std::string data = "hello";
    const auto crc = static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(data.data()), 5));
    zip += "PK\x03\x04";
    le(20, 2), le(0, 2), le(0, 2), le(0, 2), le(0x21, 2), le(crc, 4), le(5, 4), le(5, 4), le(5, 2), le(0, 2);
    zip += "a.txt" + data;
    const std::size_t directory = zip.size();
    for (const char* name : {"a.txt", "b.txt"}) {
        zip += "PK\x01\x02";
        le(0x031e, 2), le(20, 2), le(0, 2), le(0, 2), le(0, 2), le(0x21, 2), le(crc, 4), le(5, 4), le(5, 4);
        le(5, 2), le(0, 2), le(0, 2), le(0, 2), le(0, 2), le((S_IFREG | 0644u) << 16, 4), le(0, 4);
        zip += name;
    }
    const std::size_t directory_size = zip.size() - directory;
    zip += "PK\x05\x06";
    le(0, 2), le(0, 2), le(2, 2), le(2, 2), le(static_cast<std::uint32_t>(directory_size), 4);
    le(static_cast<std::uint32_t>(directory), 4), le(0, 2);
    TempDir dir;
    write_bytes(dir / "twice.zip", zip);
    const std::string problem = open_error(dir / "twice.zip").problem();
    CAPTURE(problem);
    CHECK((problem.find("overlap") != std::string::npos || problem.find("inconsistent") != std::string::npos));
}

TEST_CASE("symlink entries must stay inside the archive") {
    TempDir dir;
    auto with_link = [&](const std::string& target) {
        write_zip(dir / "links.zip", {{"pkg/", "", ZIP_CM_STORE, S_IFDIR | 0755u},
                                      {"pkg/sub/link.so", target, ZIP_CM_STORE, S_IFLNK | 0777u}});
        return dir / "links.zip";
    };
    for (const char* fine : {"libreal.so.1", "../libreal.so", "../../pkg2/x", "./a/../b"}) {
        CAPTURE(fine);
        CHECK_NOTHROW(Archive::open(with_link(fine)));
    }
    auto problem = [&](const std::string& target) { return error_from([&] { Archive::open(with_link(target)); }).problem(); };
    CHECK(problem("../../../etc/passwd") == "member pkg/sub/link.so: symlink points outside the archive");
    CHECK(problem("a/../../../../x") == "member pkg/sub/link.so: symlink points outside the archive");
    CHECK(problem("/etc/passwd") == "member pkg/sub/link.so: symlink to an absolute path");
    CHECK(problem("") == "member pkg/sub/link.so: empty symlink target");
}

// Sets an environment variable for one scope.
struct ScopedEnv {
    ScopedEnv(const char* name, const char* value) : name(name) { setenv(name, value, 1); }
    ~ScopedEnv() { unsetenv(name); }
    const char* name;
};

TEST_CASE("inflate limits refuse zip bombs from the central directory, and the environment moves them") {
    TempDir dir;
    write_zip(dir / "bomb.zip", {{"zeros.bin", std::string(std::size_t(17) << 20, '\0')}, {"small.txt", "hello"}});
    auto problem = [&] { return error_from([&] { Archive::open(dir / "bomb.zip"); }).problem(); };
    CHECK(problem().starts_with("member zeros.bin: inflates "));
    CHECK(problem().ends_with("over the ratio limit of 1000:1 (a zip bomb? WHEELFIX_MAX_RATIO overrides)"));
    {
        ScopedEnv off("WHEELFIX_MAX_RATIO", "0");
        CHECK(Archive::open(dir / "bomb.zip").members().size() == 2);
        ScopedEnv total("WHEELFIX_MAX_INFLATED", "16M");
        CHECK(problem() == "members inflate to 17825797 bytes, over the limit of 16 MiB (a zip bomb? "
                           "WHEELFIX_MAX_INFLATED overrides)");
    }
    {
        ScopedEnv bad("WHEELFIX_MAX_INFLATED", "lots");
        auto error = error_from([&] { Archive::open(dir / "bomb.zip"); });
        CHECK(error.file() == "WHEELFIX_MAX_INFLATED");
    }
    auto limits = zip::inflate_limits_from_environment();
    CHECK(limits.max_inflated == std::uint64_t(8) << 30);
    CHECK(limits.max_ratio == 1000);
    ScopedEnv gib("WHEELFIX_MAX_INFLATED", "20g");
    CHECK(zip::inflate_limits_from_environment().max_inflated == std::uint64_t(20) << 30);
}

TEST_CASE("unsafe_name_reason") {
    using zip::unsafe_name_reason;
    for (const char* fine : {"a.py", "pkg/mod.py", "pkg/sub/", "a..b", "..a/b", "x/.hidden", "name with space"}) {
        CAPTURE(fine);
        CHECK_FALSE(unsafe_name_reason(fine));
    }
    CHECK(unsafe_name_reason("") == "empty name");
    CHECK(unsafe_name_reason("/etc/passwd") == "absolute path");
    CHECK(unsafe_name_reason("C:/x") == "drive letter");
    CHECK(unsafe_name_reason("c:x") == "drive letter");
    CHECK(unsafe_name_reason("a\\b") == "backslash");
    CHECK(unsafe_name_reason("../x") == "'..' component");
    CHECK(unsafe_name_reason("a/../../x") == "'..' component");
    CHECK(unsafe_name_reason("a/..") == "'..' component");
    CHECK(unsafe_name_reason("a//b") == "empty path component");
    CHECK(unsafe_name_reason("./a") == "'.' component");
    CHECK(unsafe_name_reason(std::string_view("a\0b", 3)) == "NUL byte");
}

TEST_CASE("zip-slip names are refused when the archive is opened") {
    struct Case {
        const char* name;
        const char* reason;
    };
    for (auto [name, reason] : {Case{"../x", "'..' component"}, Case{"/abs", "absolute path"},
                                Case{"a\\b", "backslash"}, Case{"C:/x", "drive letter"},
                                Case{"pkg/../../etc/x", "'..' component"}}) {
        CAPTURE(name);
        TempDir dir;
        write_zip(dir / "slip.zip", {{"ok.txt", "fine"}, {name, "payload"}});
        auto error = open_error(dir / "slip.zip");
        CHECK(error.file() == (dir / "slip.zip").string());
        CHECK(error.problem() == std::string("member ") + name + ": unsafe name (" + reason + ")");
    }
}

TEST_CASE("duplicate names and NUL bytes in names are refused") {
    TempDir dir;
    write_zip(dir / "dupes.zip", {{"pkg/dupA", "one"}, {"pkg/dupB", "two"}});
    patch_file(dir / "dupes.zip", "pkg/dupB", "pkg/dupA", 2);  // local header + central directory
    CHECK(open_error(dir / "dupes.zip").problem() == "member pkg/dupA: duplicate member name");

    write_zip(dir / "nul.zip", {{"pkg/okay", "one"}, {"pkg/a.soXtxt", "two"}});
    patch_file(dir / "nul.zip", "pkg/a.soXtxt", std::string("pkg/a.so\0txt", 12), 2);
    CHECK(open_error(dir / "nul.zip").problem() == "member pkg/a.so\\x00txt: unsafe name (NUL byte)");

    // A genuine space is fine (libzip shows a NUL as a space: the raw scan tells them apart).
    write_zip(dir / "space.zip", {{"pkg/a b.txt", "two"}});
    CHECK(Archive::open(dir / "space.zip").members()[0].name == "pkg/a b.txt");
}

TEST_CASE("files that are not (whole) zip archives") {
    TempDir dir;
    write_bytes(dir / "empty.whl", "");
    CHECK(open_error(dir / "empty.whl").problem() == "not a zip archive (empty file)");

    write_bytes(dir / "text.whl", "just some text, no zip here\n");
    CHECK(open_error(dir / "text.whl").problem() == "not a zip archive");

    CHECK(open_error(dir / "missing.whl").problem() == "no such file");
    CHECK(open_error(dir.path()).problem() == "is a directory, not a zip archive");

    auto real = read_bytes(auditwheel_dir() / kTestzlib);
    write_bytes(dir / "half.whl", real.substr(0, real.size() / 2));
    auto half = open_error(dir / "half.whl");
    CHECK(half.file() == (dir / "half.whl").string());
    CHECK(half.problem() == "truncated or damaged zip (no end of central directory record)");

    write_bytes(dir / "tail.whl", real.substr(0, real.size() - 10));
    CHECK(open_error(dir / "tail.whl").problem() == "truncated or damaged zip (no end of central directory record)");

    // Central directory intact but the data before it cut short: the local headers
    // no longer line up, which ZIP_CHECKCONS catches at open.
    auto cut = real.substr(0, 2000) + real.substr(3000);
    write_bytes(dir / "cut.whl", cut);
    CHECK(open_error(dir / "cut.whl").problem() == "truncated or damaged zip (Zip archive inconsistent)");
}

TEST_CASE("a flipped byte in a stored member is a CRC mismatch on read and stream") {
    TempDir dir;
    std::string payload = "a stored payload that will be damaged";
    write_zip(dir / "flip.zip", {{"good.txt", "fine", ZIP_CM_STORE}, {"bad.txt", payload, ZIP_CM_STORE}});
    patch_file(dir / "flip.zip", payload, "A" + payload.substr(1));
    auto archive = Archive::open(dir / "flip.zip");
    CHECK(as_string(archive.read(archive.members()[0])) == "fine");
    const auto& bad = archive.members()[1];
    auto error = error_from([&] { archive.read(bad); });
    CHECK(error.file() == (dir / "flip.zip").string());
    CHECK(error.problem() == "member bad.txt: CRC mismatch");
    CHECK(error_from([&] { archive.stream(bad, [](auto) {}, 8); }).problem() == "member bad.txt: CRC mismatch");
}

TEST_CASE("a flipped byte in a real wheel's deflated member is reported, not crashed on") {
    TempDir dir;
    auto source = auditwheel_dir() / kTestzlib;
    auto archive = Archive::open(source);
    const auto& so = archive.members()[0];
    auto raw = as_string(archive.read_raw(so));
    auto bytes = read_bytes(source);
    auto at = bytes.find(raw);
    REQUIRE(at != std::string::npos);
    bytes[at + raw.size() / 2] = static_cast<char>(bytes[at + raw.size() / 2] ^ 0x55);
    write_bytes(dir / kTestzlib, bytes);

    auto damaged = Archive::open(dir / kTestzlib);
    auto error = error_from([&] { damaged.read(damaged.members()[0]); });
    // The codec's words (zlib's message; ISA-L's code, spelled the same way here).
    CHECK(error.problem() == "member " + so.name + ": corrupt compressed data (invalid distance too far back)");
    CHECK(damaged.read(damaged.members()[1]).size() == damaged.members()[1].size);  // others unaffected
}

TEST_CASE("a central directory size that disagrees with the data is a size mismatch") {
    // libzip checks the CRC but not the inflated size; Archive counts the bytes.
    TempDir dir;
    std::string payload(3000, 'q');
    const std::string size_3000("\xb8\x0b\x00\x00", 4);
    auto forged = [&](const std::string& size_field) {
        write_zip(dir / "size.zip", {{"big.txt", payload, ZIP_CM_DEFLATE}});
        patch_file(dir / "size.zip", size_3000, size_field, 2);  // local header + central directory
        return Archive::open(dir / "size.zip");
    };
    auto claims_more = forged(std::string("\xb9\x0b\x00\x00", 4));
    REQUIRE(claims_more.members()[0].size == 3001);
    CHECK(error_from([&] { claims_more.read(claims_more.members()[0]); }).problem() ==
          "member big.txt: size mismatch (central directory says 3001 bytes, read 3000)");

    auto claims_less = forged(std::string("\xb7\x0b\x00\x00", 4));
    CHECK(error_from([&] { claims_less.stream(claims_less.members()[0], [](auto) {}); }).problem() ==
          "member big.txt: size mismatch (more than the 2999 bytes the central directory says)");
}

TEST_CASE("encrypted members and compression methods other than stored/deflate are refused") {
    TempDir dir;
    write_zip(dir / "secret.zip", {{"ok.txt", "fine"}, {"secret.txt", "hidden", ZIP_CM_DEFLATE, {}, {}, true}});
    CHECK(open_error(dir / "secret.zip").problem() == "member secret.txt: encrypted members are not supported");

    write_zip(dir / "bzip2.zip", {{"packed.txt", std::string(1000, 'b'), ZIP_CM_BZIP2}});
    CHECK(open_error(dir / "bzip2.zip").problem() ==
          "member packed.txt: compression method 12 is not supported (only stored and deflate)");
}

TEST_CASE("a moved-from archive finds nothing and the moved-to one works") {
    auto archive = Archive::open(auditwheel_dir() / kTestzlib);
    Archive moved = std::move(archive);
    CHECK(moved.find("testzlib-0.0.1.dist-info/WHEEL") != nullptr);
    CHECK(archive.find("testzlib-0.0.1.dist-info/WHEEL") == nullptr);  // NOLINT(bugprone-use-after-move)
    CHECK(moved.read(*moved.find("testzlib-0.0.1.dist-info/WHEEL")).size() == 104);
}

TEST_CASE("a seekable member: streamed once, then any range inflated again from the nearest window") {
    // 20 MiB that deflate codes in many blocks (text with a random walk through it),
    // so there are windows every SeekableMember::kMinSpacing; and the same stored.
    std::string content;
    content.reserve(20u << 20);
    std::uint64_t state = 6;
    while (content.size() < (20u << 20)) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        content += "symbol_" + std::to_string(state >> 40) + (state & 1 ? "\n" : " ");
    }
    content.resize(20u << 20);
    TempDir dir;
    write_zip(dir / "seek.zip", {{"big.bin", content, ZIP_CM_DEFLATE}, {"stored.bin", content.substr(0, 3u << 20), ZIP_CM_STORE}});
    auto archive = Archive::open(dir / "seek.zip");
    for (const auto& member : archive.members()) {
        CAPTURE(member.name);
        const std::string expected = member.name == "big.bin" ? content : content.substr(0, 3u << 20);
        std::string streamed;
        const zip::SeekableMember seekable(archive, member, [&](std::span<const std::uint8_t> chunk) {
            streamed.append(chunk.begin(), chunk.end());
        });
        CHECK(streamed == expected);
        CHECK(seekable.size() == expected.size());
        if (member.method == zip::Method::deflated) CHECK(seekable.window_count() >= 3);
        CHECK(seekable.window_count() <= zip::SeekableMember::kMaxWindows);
        const std::uint64_t size = expected.size();
        for (auto [begin, end] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
                 {0, 1}, {0, 100000}, {size - 10, size}, {size - 10, size + 50}, {4u << 20, (4u << 20) + 1},
                 {(9u << 20) + 12345, (13u << 20) + 7}, {size / 2, size / 2}, {size + 1, size + 9}}) {
            CAPTURE(begin);
            CAPTURE(end);
            std::string got;
            std::uint64_t next = begin;
            ByteRanges range;
            if (begin < end) range.add(begin, end);
            seekable.read(range, [&](std::span<const std::uint8_t> chunk, std::uint64_t at) {
                CHECK(at == next);
                next += chunk.size();
                got.append(chunk.begin(), chunk.end());
            });
            const std::uint64_t clamped = std::min<std::uint64_t>(end, size);
            CHECK(got == (begin < clamped ? expected.substr(begin, clamped - begin) : std::string()));
        }
        // Many small ranges in one sweep (how a streaming reader fetches a table of
        // entries), in order, each with its own bytes.
        ByteRanges ranges;
        for (std::uint64_t at = 1000; at + 100 < size; at += 9973) ranges.add(at, at + 100);
        std::string got, wanted;
        std::uint64_t last = 0;
        const std::uint64_t cost = seekable.read(ranges, [&](std::span<const std::uint8_t> chunk, std::uint64_t at) {
            CHECK(at >= last);
            last = at + chunk.size();
            got.append(chunk.begin(), chunk.end());
        });
        for (const auto& [begin, end] : ranges.ranges()) wanted += expected.substr(begin, end - begin);
        CHECK(got == wanted);
        // One sweep: the span once, plus at most a chunk per window it resumes from.
        CHECK(cost <= size + (seekable.window_count() + 1) * (256u << 10));
        ByteRanges late;
        late.add(size - 5000, size - 4000);
        late.add(size - 3000, size - 2000);
        CHECK(seekable.read(late, [](auto, auto) {}) <= zip::SeekableMember::spacing(size) + (512u << 10));
    }
}
