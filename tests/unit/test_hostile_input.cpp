// Unit tests: hostile input, issue 16's input side. Each test feeds one crafted
// input to the module that owns the parse (not to the CLI) and checks that it is
// refused with a one-line InputError/ElfError, or bounded, instead of hanging or
// allocating what the file claims. The e2e side (every command, exit 2, within
// 10 s and 512 MiB) is tests/e2e/test_bad_input.py over tests/bad/make_corpus.py.
#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/elf/streamed_elf.hpp"
#include "wheelfix/util/argfile.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/wheel/name_fold.hpp"

#include <doctest/doctest.h>
#include <zlib.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace wheelfix;

namespace {

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("wfhostile-" + std::to_string(::getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
};

std::vector<std::uint8_t> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE_MESSAGE(in.good(), path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

template <class T>
void put(std::vector<std::uint8_t>& bytes, std::size_t at, T value) {
    std::memcpy(bytes.data() + at, &value, sizeof value);  // little endian, as the fixture
}

// A gzip stream of `zeros` zero bytes.
std::string gzip_of_zeros(std::size_t zeros) {
    z_stream stream{};
    REQUIRE(deflateInit2(&stream, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) == Z_OK);
    std::string out;
    std::vector<char> chunk(1 << 20, '\0'), buffer(1 << 16);
    for (std::size_t left = zeros; left > 0 || stream.avail_in == 0;) {
        const std::size_t n = std::min(left, chunk.size());
        left -= n;
        stream.next_in = reinterpret_cast<Bytef*>(chunk.data());
        stream.avail_in = static_cast<uInt>(n);
        const int flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
        int status = Z_OK;
        do {
            stream.next_out = reinterpret_cast<Bytef*>(buffer.data());
            stream.avail_out = static_cast<uInt>(buffer.size());
            status = deflate(&stream, flush);
            out.append(buffer.data(), buffer.size() - stream.avail_out);
        } while (stream.avail_out == 0);
        if (flush == Z_FINISH && status == Z_STREAM_END) break;
    }
    deflateEnd(&stream);
    return out;
}

}  // namespace

TEST_CASE("hostile: extended section numbering with a count no file holds ends (streamed and whole)") {
    // e_shnum 0 means the count is section 0's sh_size; 2^62 of them used to make the
    // streamed learner loop for ever (inspect, check and index of a wheel).
    auto bytes = read_bytes(std::string(WHEELFIX_TEST_DATA) + "/elf/libplain.so");
    std::uint64_t shoff = 0;
    std::memcpy(&shoff, bytes.data() + 0x28, 8);
    put<std::uint16_t>(bytes, 0x3C, 0);
    put<std::uint64_t>(bytes, shoff + 32, std::uint64_t(1) << 62);
    CHECK_THROWS_AS((void)elf::ElfFile::parse(bytes), elf::ElfError);

    elf::StreamedElf streamed(bytes.size(), elf::StreamedElf::Needs::inspection);
    for (std::size_t at = 0; at < bytes.size(); at += 4096)
        streamed.consume(std::span(bytes).subspan(at, std::min<std::size_t>(4096, bytes.size() - at)));
    CHECK(streamed.kept_bytes() <= bytes.size());
    auto fetch = [&](const ByteRanges& ranges, const elf::FetchSink& sink) {
        for (const auto& [begin, end] : ranges.ranges()) sink(std::span(bytes).subspan(begin, end - begin), begin);
    };
    CHECK_THROWS_AS((void)elf::read_streamed(streamed, fetch,
                                             [](std::span<const std::uint8_t> image, const ByteRanges* present) {
                                                 return elf::ElfFile::parse(image, present).sections().size();
                                             }),
                    elf::ElfError);
}

TEST_CASE("hostile: a dynamic string table over the limit is refused before a byte of it is read") {
    auto bytes = read_bytes(std::string(WHEELFIX_TEST_DATA) + "/elf/libplain.so");
    const auto elf = elf::ElfFile::parse(bytes);
    bool patched = false;
    // DT_STRSZ claims a gigabyte; the table itself may lie past the file's end: the
    // limit is what refuses it (not a range check that a larger file would pass).
    for (const auto& ph : elf.program_headers()) {
        if (ph.type != 2) continue;  // PT_DYNAMIC
        for (std::uint64_t at = ph.offset; at + 16 <= ph.offset + ph.filesz; at += 16) {
            std::int64_t tag = 0;
            std::memcpy(&tag, bytes.data() + at, 8);
            if (tag == 10) {  // DT_STRSZ
                put<std::uint64_t>(bytes, at + 8, std::uint64_t(1) << 30);
                patched = true;
            }
        }
    }
    REQUIRE(patched);
    try {
        (void)elf::ElfFile::parse(bytes);
        FAIL("parsed");
    } catch (const elf::ElfError& error) {
        const std::string what = error.what();
        CHECK_MESSAGE(what.find("over wheelfix's limit") != std::string::npos, what);
    }
}

TEST_CASE("hostile: a gzip index that inflates without end stops at the cap") {
    TempDir tmp;
    const fs::path bomb = tmp.path / "bomb.index.gz";
    const std::string compressed = gzip_of_zeros(abi::kMaxIndexText + (4u << 20));  // ~100 MiB of zeros, ~100 KiB
    std::ofstream(bomb, std::ios::binary).write(compressed.data(), static_cast<std::streamsize>(compressed.size()));
    try {
        (void)abi::load_index_file(bomb);
        FAIL("a gzip bomb loaded");
    } catch (const InputError& error) {
        CHECK(error.file() == bomb.string());
        CHECK(error.problem().find("limit") != std::string::npos);
    }
    // A truncated stream ends too (no progress without input).
    const fs::path cut = tmp.path / "cut.index.gz";
    std::ofstream(cut, std::ios::binary).write(compressed.data(), 40);
    CHECK_THROWS_AS((void)abi::load_index_file(cut), InputError);
}

TEST_CASE("hostile: an index whose symbol count exceeds what the file can hold is refused") {
    TempDir tmp;
    const fs::path index = tmp.path / "count.index";
    write_text(index, "wheelfix-symbol-index 1\nlibrary libx.so\nsymbols 99999999\nF a\nend\n");
    CHECK_THROWS_AS((void)abi::load_index_file(index), InputError);
}

TEST_CASE("hostile: @file arguments: no device, no FIFO, no endless fan-out") {
    TempDir tmp;
    try {
        (void)expand_argument_files({"@/dev/zero"});
        FAIL("@/dev/zero expanded");
    } catch (const InputError& error) {
        CHECK(error.file() == "@/dev/zero");
        CHECK(error.problem().find("character device") != std::string::npos);
    }
    const fs::path fifo = tmp.path / "args.fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_THROWS_WITH_AS((void)expand_argument_files({"@" + fifo.string()}), doctest::Contains("FIFO"), InputError);
    // a names b twice, b names a twice: 2^16 reads below the depth limit.
    write_text(tmp.path / "a", "@" + (tmp.path / "b").string() + " @" + (tmp.path / "b").string() + "\n");
    write_text(tmp.path / "b", "@" + (tmp.path / "a").string() + " @" + (tmp.path / "a").string() + "\n");
    CHECK_THROWS_AS((void)expand_argument_files({"@" + (tmp.path / "a").string()}), InputError);
    // An argument file over 32 MiB is refused, not read.
    write_text(tmp.path / "big", std::string((32 << 20) + 1, 'x'));
    CHECK_THROWS_WITH_AS((void)expand_argument_files({"@" + (tmp.path / "big").string()}), doctest::Contains("larger"),
                         InputError);
    // 20,000 wheel paths (2.5 MB) expand: the bound is memory, not a count.
    std::string many;
    for (int i = 0; i < 20000; ++i) many += "wheelhouse/sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux_2_28_x86_64-" + std::to_string(i) + ".whl\n";
    write_text(tmp.path / "many", many);
    CHECK(expand_argument_files({"@" + (tmp.path / "many").string()}).size() == 20000);
    // More than 64 MiB of arguments (three files of 25 MiB) is refused.
    write_text(tmp.path / "words", std::string(25 << 20, 'x'));
    const std::string words = "@" + (tmp.path / "words").string();
    CHECK_THROWS_WITH_AS((void)expand_argument_files({words, words, words}), doctest::Contains("64 MiB"), InputError);
    // The ordinary case still works.
    write_text(tmp.path / "ok", "--set-rpath '$ORIGIN'\n");
    CHECK(expand_argument_files({"relink", "@" + (tmp.path / "ok").string()}) ==
          std::vector<std::string>{"relink", "--set-rpath", "$ORIGIN"});
}

TEST_CASE("hostile: FIFOs, sockets and devices are refused without being opened") {
    TempDir tmp;
    const fs::path fifo = tmp.path / "in.whl";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);  // nobody writes: an open for reading would block
    CHECK_THROWS_WITH_AS(refuse_special_file(fifo), doctest::Contains("is a FIFO"), InputError);
    CHECK_THROWS_AS(MappedFile{fifo}, InputError);
    CHECK_THROWS_AS((void)read_regular_file(fifo, 100), InputError);
    CHECK_FALSE(starts_like_zip(fifo));
    CHECK_THROWS_WITH_AS(refuse_existing_output(fifo, true), doctest::Contains("FIFO"), InputError);
    CHECK_THROWS_WITH_AS(refuse_special_file("/dev/null"), doctest::Contains("character device"), InputError);
    const fs::path socket_path = tmp.path / "s.sock";
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socket_path.c_str(), sizeof address.sun_path - 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    CHECK_THROWS_WITH_AS(refuse_special_file(socket_path), doctest::Contains("socket"), InputError);
    ::close(fd);
    CHECK_NOTHROW(refuse_special_file(tmp.path));                // a directory passes
    CHECK_NOTHROW(refuse_special_file(tmp.path / "missing"));    // the open reports it
    CHECK_THROWS_AS((void)abi::load_index(fifo), InputError);    // --torch FIFO
}

TEST_CASE("hostile: a dangling symbolic link under torch/lib is skipped with a note") {
    TempDir tmp;
    const fs::path lib = tmp.path / "torch" / "lib";
    fs::create_directories(lib);
    fs::copy_file(std::string(WHEELFIX_TEST_DATA) + "/elf/libplain.so", lib / "libplain.so");
    fs::create_symlink("libgone.so.1", lib / "libgone.so");
    const auto index = abi::load_index(tmp.path / "torch");
    REQUIRE(index.libraries.size() == 1);
    CHECK(index.libraries[0].file_name == "libplain.so");
    REQUIRE(index.notes.size() == 1);
    CHECK(index.notes[0].find("libgone.so") != std::string::npos);
}

TEST_CASE("hostile: names that differ only by case or by NFC/NFD collide") {
    using wheel::folded;
    using wheel::name_collisions;
    CHECK(wheel::normalised("caf\u00e9") == "cafe\u0301");
    CHECK(folded("Caf\u00c9.py") == folded("cafe\u0301.py"));
    CHECK(folded("\u1ec7") == folded("e\u0323\u0302"));  // Vietnamese ệ, fully decomposed
    CHECK(folded("\u0419") == folded("\u0438\u0306"));   // Cyrillic Й / и + breve
    CHECK(folded("a\xff") == "a\xff");                   // not UTF-8: kept as it is
    const auto collisions = name_collisions({"pkg/Mod.py", "pkg/mod.py", "pkg/caf\u00e9.py", "pkg/cafe\u0301.py",
                                             "pkg/other.py"});
    REQUIRE(collisions.size() == 2);
    CHECK(collisions[0].why == "differ only in case");
    CHECK(collisions[1].why == "differ only in Unicode normalisation (NFC/NFD)");
    CHECK(name_collisions({"a/b.py", "a/B/c.py"}).empty());  // different paths, no collision
}
