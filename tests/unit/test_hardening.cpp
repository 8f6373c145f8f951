// Unit tests: what fuzzing and the crash-safety work (issue 6) fixed, one case per
// fix, on the inputs that found them (tests/data/fuzz-regressions/, also replayed
// through the fuzz targets by ctest's fuzz.* tests), plus the stale-temporary rule
// of OutputFile.
#include "wheelfix/abi/signature.hpp"
#include "wheelfix/elf/editor.hpp"
#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/output_file.hpp"
#include "wheelfix/zip/archive.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace wheelfix;

namespace {

std::vector<std::uint8_t> regression(const std::string& name) {
    std::ifstream in(std::string(WHEELFIX_TEST_DATA) + "/fuzz-regressions/" + name, std::ios::binary);
    REQUIRE_MESSAGE(in.good(), name);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Why our reader refuses a regression input ("" when it parses: the test then fails).
std::string refusal(const std::string& name) {
    const auto bytes = regression(name);
    try {
        (void)elf::ElfFile::parse(bytes);
    } catch (const elf::ElfError& error) {
        return error.what();
    }
    FAIL("the ambiguous file parsed: " << name);
    return "";
}

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("wfhard-" + std::to_string(::getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
};

void touch(const fs::path& path) { std::ofstream(path) << "x"; }

}  // namespace

TEST_CASE("hardening: a symbol name with control characters is not a signature") {
    // fuzz_symbol: the reason classify() gives spelled the parameter with a newline.
    CHECK(abi::parse_signature("_ZN3c104cuda9SetDeviceEa").has_value());
    CHECK_FALSE(abi::parse_signature("_ZN3c104cuda9Set\nDviceEa").has_value());
    CHECK_FALSE(abi::parse_signature(std::string("_ZN3c104cuda9Set\0DviceEa", 24)).has_value());
    CHECK_FALSE(abi::parse_signature("_ZN3c104cuda9Set\x1b" "DviceEa").has_value());
    CHECK(abi::parse_signature("_ZN3c104cuda9Set$DviceEa").has_value());  // '$' and '.' are identifier bytes
}

TEST_CASE("hardening: printable() keeps one line and no terminal control") {
    CHECK(printable("sgl_kernel/x.so") == "sgl_kernel/x.so");
    CHECK(printable("a\nb\x1b[2J") == "a\\x0ab\\x1b[2J");
    CHECK(printable(std::string("\0\x7f", 2)) == "\\x00\\x7f");
    CHECK(printable("caf\xc3\xa9") == "caf\xc3\xa9");  // UTF-8 passes
}

TEST_CASE("hardening: a member name with a control character is unsafe") {
    CHECK(zip::unsafe_name_reason("pkg/evil\nwheelfix: all fine.py") == "control character");
    CHECK(zip::unsafe_name_reason("pkg/\x1b[2Jevil.py") == "control character");
    CHECK(zip::unsafe_name_reason("pkg/caf\xc3\xa9.py") == std::nullopt);
}

TEST_CASE("hardening: an ELF error naming a section keeps to one line") {
    // fuzz_elf: a section whose name holds a newline and whose data lies past the end.
    auto bytes = regression("elf/section-name-with-newline");
    try {
        (void)elf::ElfFile::parse(bytes);
        FAIL("the damaged file parsed");
    } catch (const elf::ElfError& error) {
        CHECK(std::string(error.what()).find('\n') == std::string::npos);
        CHECK(std::string(error.what()).find("\\x0a") != std::string::npos);
    }
}

TEST_CASE("hardening: an executable whose memory image ends far past the file is not padded to it") {
    // fuzz_edit: p_memsz 0x800000000000054 put the appended segment (and so the
    // output size) 2^59 bytes out: a 4 EiB allocation. Now a one-line EditError.
    auto bytes = regression("edit/executable-memsz-far-beyond-file");
    auto elf = elf::ElfFile::parse(bytes);
    elf::EditRequest request;
    request.add_needed = {"libwf1.so", "libwf2.so", "libwf3.so", "libwf4.so", "libwf5.so"};
    CHECK_THROWS_AS((void)elf::plan_edits(elf, request), elf::EditError);
}

TEST_CASE("hardening: stale temporaries of dead writers go, live and foreign files stay") {
    TempDir dir;
    const auto mine = dir.path / (".a.whl.wheelfix-" + std::to_string(::getpid()) + "-1");
    const auto dead = dir.path / ".b.whl.wheelfix-999999998-2";
    const auto locked = dir.path / ".c.whl.wheelfix-999999997-3";
    const auto other_name = dir.path / ".notes.wheelfix-old";
    const auto visible = dir.path / "b.whl.wheelfix-999999996-4";
    for (const auto& path : {mine, dead, locked, other_name, visible}) touch(path);
    const int holder = ::open(locked.c_str(), O_RDONLY);
    REQUIRE(holder >= 0);
    REQUIRE(::flock(holder, LOCK_EX) == 0);  // a writer on another machine holds it

    remove_stale_temporaries(dir.path);
    ::close(holder);
    CHECK(fs::exists(mine));
    CHECK_FALSE(fs::exists(dead));
    CHECK(fs::exists(locked));
    CHECK(fs::exists(other_name));
    CHECK(fs::exists(visible));

    // A new output names its temporary with our pid, and a commit leaves only the result.
    {
        OutputFile output(dir.path / "new.whl");
        bool found = false;
        for (const auto& entry : fs::directory_iterator(dir.path))
            found |= entry.path().filename().string().starts_with(".new.whl.wheelfix-" + std::to_string(::getpid()) + "-");
        CHECK(found);
        output.write(std::vector<std::uint8_t>{1, 2, 3});
        output.commit();
    }
    CHECK(fs::file_size(dir.path / "new.whl") == 3);
    for (const auto& entry : fs::directory_iterator(dir.path))
        CHECK_FALSE(entry.path().filename().string().starts_with(".new.whl.wheelfix-"));
}

TEST_CASE("hardening: two outputs to one destination: the second commit refuses, atomically (issue 16)") {
    TempDir dir;
    auto write = [](OutputFile& output, std::uint8_t byte) { output.write(std::vector<std::uint8_t>{byte}); };
    OutputFile first(dir.path / "out.whl"), second(dir.path / "out.whl");  // both began while nothing was there
    write(first, 1);
    write(second, 2);
    first.commit();
    CHECK_THROWS_WITH_AS(second.commit(), doctest::Contains("already exists"), InputError);
    std::ifstream in(dir.path / "out.whl", std::ios::binary);
    CHECK(in.get() == 1);  // the first's, not replaced
    OutputFile replacing(dir.path / "out.whl", Existing::replace);
    write(replacing, 3);
    replacing.commit();
    CHECK(fs::file_size(dir.path / "out.whl") == 1);
    std::size_t entries = std::distance(fs::directory_iterator(dir.path), fs::directory_iterator());
    CHECK(entries == 1);  // no temporary left by the refused commit
}

TEST_CASE("hardening: reserve() allocates ahead and never changes what the file holds") {
    TempDir dir;
    struct stat info {};
    {
        OutputFile output(dir.path / "out.whl");
        output.reserve(std::uint64_t(4) << 20);  // more than will be written
        output.write(std::vector<std::uint8_t>(100000, 7));
        output.reserve(0);
        output.reserve(~std::uint64_t(0));  // beyond any file: nothing happens
        output.write(std::vector<std::uint8_t>{1, 2, 3});
        output.commit();
    }
    CHECK(fs::file_size(dir.path / "out.whl") == 100003);  // no trailing bytes from the reservation
    std::ifstream in(dir.path / "out.whl", std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(bytes.size() == 100003);
    CHECK(std::count(bytes.begin(), bytes.begin() + 100000, 7) == 100000);
    CHECK(bytes[100002] == 3);
    // The 4 MiB reserved past the end were given back at commit.
    REQUIRE(::stat((dir.path / "out.whl").c_str(), &info) == 0);
    CHECK(info.st_blocks * 512 < std::int64_t(1) << 20);
}

TEST_CASE("hardening: a staged file appears only when published; unpublished it leaves nothing (issue 16)") {
    TempDir dir;
    auto count = [&] { return std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()); };
    {
        StagedFile staged(dir.path / "a.whl", Existing::refuse);
        CHECK(staged.path().filename() == "a.whl");  // readers parse the wheel's own name
        CHECK(staged.path().parent_path().filename().string().starts_with(".a.whl.wheelfix-"));
        OutputFile output(staged.path());
        output.write(std::vector<std::uint8_t>{1});
        output.commit();
        CHECK_FALSE(fs::exists(dir.path / "a.whl"));
    }
    CHECK(count() == 0);
    {
        StagedFile staged(dir.path / "a.whl", Existing::refuse);
        OutputFile output(staged.path());
        output.write(std::vector<std::uint8_t>{1});
        output.commit();
        staged.publish();
    }
    CHECK(fs::file_size(dir.path / "a.whl") == 1);
    CHECK(count() == 1);
    StagedFile late(dir.path / "a.whl", Existing::refuse);
    { OutputFile output(late.path()); output.commit(); }
    CHECK_THROWS_WITH_AS(late.publish(), doctest::Contains("already exists"), InputError);
}

TEST_CASE("hardening: a dynamic table naming two string tables is refused") {
    // fuzz_edit: DT_STRTAB twice (0x2c50, then 0x710). ld.so takes the last, our
    // reader and editor took the first: the editor rewrote a table ld.so never reads.
    CHECK(refusal("edit/dt-strtab-given-twice") == "dynamic tag 0x5 given twice, 0x2c50 and 0x710");
}

TEST_CASE("hardening: a file with two dynamic symbol tables is refused") {
    // fuzz_edit: .gnu.version's type damaged to SHT_DYNSYM. The editor, shifting the
    // st_value of symbols defined in the moved .dynstr, took its versym entries for
    // symbols and wrote into them; the edited file then failed its own reading.
    CHECK(refusal("edit/two-dynsym-sections") == "2 SHT_DYNSYM sections (one dynamic symbol table at most)");
}

TEST_CASE("hardening: an edit that would rewrite the section name table is refused") {
    // fuzz_edit: section headers whose .shstrtab lies over the ELF header. Moving the
    // program headers rewrote e_phoff, so a section name lost its NUL and the edited
    // file no longer read back.
    auto bytes = regression("edit/shstrtab-over-elf-header");
    const auto elf = elf::ElfFile::parse(bytes);
    elf::EditRequest request;
    request.set_soname = "libf.so";
    request.drop_absolute = true;
    request.force_kind = elf::SearchPathKind::rpath;
    try {
        (void)elf::plan_edits(elf, request);
        FAIL("the edit was planned");
    } catch (const elf::EditError& error) {
        CHECK(std::string(error.what()).starts_with("the section name table shares bytes with what the edit rewrites"));
    }
}

TEST_CASE("hardening: dynamic symbols named from a string table other than DT_STRTAB's are refused") {
    // fuzz_edit: DT_STRTAB damaged to 0x240 (112 bytes) while .dynsym links .dynstr
    // at 0x4d8 (558 bytes). ld.so names the symbols from the first, readers from the
    // second; the editor rebuilt the first and the symbols' names fell outside it.
    CHECK(refusal("edit/dynsym-names-not-dt-strtab") ==
              "the dynamic symbols' string table (offset 0x4d8, 558 bytes) is not DT_STRTAB's (offset 0x240, 112 bytes)");
}

TEST_CASE("hardening: a file with two PT_DYNAMIC segments is refused") {
    // fuzz_edit (a saved input re-edited by tests/e2e/test_fuzz_outputs.py): ld.so
    // takes the last PT_DYNAMIC, readelf and we took the first; after the editor
    // moved the table, readelf still listed the old one.
    CHECK(refusal("edit/two-pt-dynamic") == "2 PT_DYNAMIC segments (ld.so reads the last, other readers the first)");
}
