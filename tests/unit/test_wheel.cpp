// The wheel model: PEP 440 versions, file names, METADATA/WHEEL, RECORD, Wheel::open
// on real and broken wheels, and verify_wheel's findings one damage at a time.
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/wheel/filename.hpp"
#include "wheelfix/wheel/metadata.hpp"
#include "wheelfix/wheel/record.hpp"
#include "wheelfix/wheel/scan.hpp"
#include "wheelfix/wheel/verify.hpp"
#include "wheelfix/wheel/version.hpp"
#include "wheelfix/wheel/wheel.hpp"

#include "zip_test_support.hpp"

#include <doctest/doctest.h>

#include <openssl/evp.h>

using namespace wheelfix;
using namespace wheelfix::test;
using namespace wheelfix::wheel;

namespace {

std::string problems(const std::vector<VerifyFinding>& findings) {
    std::string out;
    for (const auto& finding : findings) out += finding.member + ": " + finding.problem + "\n";
    return out;
}

// verify_wheel on a freshly built wheel.
std::vector<VerifyFinding> verify_built(const WheelBuilder& builder) {
    TempDir dir;
    auto wheel = Wheel::open(builder.write(dir.path()));
    return verify_wheel(wheel, scan_members(wheel.archive()));
}

std::string sha512_b64(std::string_view bytes) {
    std::array<std::uint8_t, 64> digest{};
    unsigned int length = 0;
    REQUIRE(EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha512(), nullptr) == 1);
    return urlsafe_b64_nopad(digest);
}

}  // namespace

// ---- PEP 440 ------------------------------------------------------------------------

TEST_CASE("PEP 440 normalization of alternative spellings") {
    struct Case {
        const char* input;
        const char* normalized;
    };
    for (auto [input, normalized] : {
             Case{"1.0", "1.0"},
             Case{"v1.0", "1.0"},
             Case{"  1.0\n", "1.0"},
             Case{"1.0-RC1", "1.0rc1"},
             Case{"1.0.rc.1", "1.0rc1"},
             Case{"1.0c1", "1.0rc1"},
             Case{"1.0pre2", "1.0rc2"},
             Case{"1.0preview_2", "1.0rc2"},
             Case{"1.0alpha", "1.0a0"},
             Case{"1.0-beta.3", "1.0b3"},
             Case{"1.0-1", "1.0.post1"},
             Case{"1.0-r", "1.0.post0"},
             Case{"1.0rev4", "1.0.post4"},
             Case{"1.0.POST_5", "1.0.post5"},
             Case{"1.0-dev", "1.0.dev0"},
             Case{"1.0DEV7", "1.0.dev7"},
             Case{"1.0a1-1.dev2", "1.0a1.post1.dev2"},
             Case{"01.002.0003", "1.2.3"},
             Case{"0!1.0", "1.0"},
             Case{"2!1.0", "2!1.0"},
             Case{"0.3.21+CU130", "0.3.21+cu130"},
             Case{"0.3.21+cu130-torch2_10", "0.3.21+cu130.torch2.10"},
             Case{"1.0+0007.abc", "1.0+7.abc"},
             Case{"1.0.post1.dev2+ubuntu.1", "1.0.post1.dev2+ubuntu.1"},
         }) {
        CAPTURE(input);
        auto version = Version::parse(input);
        CHECK(version.normalized() == normalized);
        CHECK(version.original() == input);
    }
    auto local = Version::parse("0.3.21+cu130.Torch2.10");
    CHECK(local.public_part() == "0.3.21");
    CHECK(local.local() == "cu130.torch2.10");
    CHECK(local.local_segments() == std::vector<std::string>{"cu130", "torch2", "10"});
    CHECK(local.has_local());
    CHECK(local.release() == std::vector<std::uint64_t>{0, 3, 21});
    CHECK(Version::parse("3!1.2").epoch() == 3);
    CHECK_FALSE(Version::parse("1.2").has_local());
}

TEST_CASE("invalid PEP 440 versions") {
    for (const char* bad : {"", "v", "1.", ".1", "1..0", "1.0+", "1.0+a..b", "1.0+a_", "1.0-", "1.0a1a2",
                            "1.0.dev1.post1", "1.0 beta", "1!", "1.0@", "latest", "1.0+ab!c",
                            "99999999999999999999.0"}) {
        CAPTURE(bad);
        CHECK_FALSE(Version::try_parse(bad));
    }
    auto error = error_from([] { Version::parse("not-a-version"); });
    CHECK(error.file().empty());
    CHECK(error.problem() == "invalid PEP 440 version 'not-a-version'");
}

TEST_CASE("PEP 440 ordering") {
    // Strictly increasing, as PEP 440 / packaging orders them.
    const char* ascending[] = {
        "1.0.dev0", "1.0a0.dev0", "1.0a0", "1.0a1", "1.0a2.dev1", "1.0a2", "1.0a2.post1.dev0", "1.0a2.post1",
        "1.0b1", "1.0rc1.dev3", "1.0rc1", "1.0", "1.0+abc", "1.0+abc.1", "1.0+abd", "1.0+1", "1.0+5",
        "1.0+5.abc", "1.0+5.1", "1.0+10", "1.0.post0.dev0", "1.0.post0", "1.0.post1", "1.0.1", "1.1.dev0",
        "1.1", "1.10", "2.0", "1!0.1",
    };
    for (std::size_t i = 0; i + 1 < std::size(ascending); ++i) {
        CAPTURE(ascending[i]);
        CAPTURE(ascending[i + 1]);
        CHECK(Version::parse(ascending[i]) < Version::parse(ascending[i + 1]));
        CHECK(Version::parse(ascending[i + 1]) > Version::parse(ascending[i]));
    }
    CHECK(Version::parse("0.3.21+cu130") < Version::parse("0.3.21+cu130.torch2.10"));
    CHECK(Version::parse("0.3.21+cu130.torch2.9") < Version::parse("0.3.21+cu130.torch2.10"));
    CHECK(Version::parse("1.0+5") > Version::parse("1.0+abc"));
    CHECK(Version::parse("1.0") == Version::parse("1.0.0"));
    CHECK(Version::parse("1.0+01") == Version::parse("1.0+1"));
    CHECK(Version::parse("1.0+CU130") == Version::parse("1.0+cu130"));
    CHECK(Version::parse("1.0-RC1") == Version::parse("1.0rc1"));
    CHECK(Version::parse("1!1.0") > Version::parse("2.0"));
    CHECK(Version::parse("1.0+99999999999999999999999") > Version::parse("1.0+99999999999999999999998"));
    CHECK(Version::parse("1.0+100000000000000000000000") > Version::parse("1.0+99999999999999999999999"));
}

// ---- file names -----------------------------------------------------------------------

TEST_CASE("wheel file names: compressed tag sets, build tags, round trip") {
    auto name = parse_filename("sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
    CHECK(name.distribution == "sgl_kernel");
    CHECK(name.version == "0.3.21+cu130");
    CHECK(name.build.empty());
    CHECK(name.python_tags == std::vector<std::string>{"cp310"});
    CHECK(name.abi_tags == std::vector<std::string>{"abi3"});
    CHECK(name.platform_tags == std::vector<std::string>{"manylinux_2_17_x86_64", "manylinux2014_x86_64"});
    CHECK(name.tags() == std::vector<std::string>{"cp310-abi3-manylinux_2_17_x86_64", "cp310-abi3-manylinux2014_x86_64"});
    CHECK(format_filename(name) == "sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");

    auto built = parse_filename("pkg-1.0-1b-py2.py3-none-any.whl");
    CHECK(built.build == "1b");
    CHECK(built.tags() == std::vector<std::string>{"py2-none-any", "py3-none-any"});
    CHECK(format_filename(built) == "pkg-1.0-1b-py2.py3-none-any.whl");

    auto pypy = parse_filename("python_snappy-0.5.2-pp260-pypy_41-linux_x86_64.whl");
    CHECK(pypy.abi_tags == std::vector<std::string>{"pypy_41"});

    WheelFilename custom{"My.Odd--name", "2.0", "", {"cp312"}, {"cp312"}, {"linux_aarch64"}, ""};
    CHECK(format_filename(custom) == "My_Odd_name-2.0-cp312-cp312-linux_aarch64.whl");
}

TEST_CASE("wheel file names: PEP 825 variant labels") {
    auto labelled = parse_filename("sgl_kernel-0.3.21-cp310-abi3-manylinux_2_34_x86_64-cu13sm100.120.whl");
    CHECK(labelled.build.empty());
    CHECK(labelled.platform_tags == std::vector<std::string>{"manylinux_2_34_x86_64"});
    CHECK(labelled.variant_label == "cu13sm100.120");
    CHECK(format_filename(labelled) == "sgl_kernel-0.3.21-cp310-abi3-manylinux_2_34_x86_64-cu13sm100.120.whl");

    auto both = parse_filename("pkg-1.0-1b-py3-none-any-null.whl");  // build tag and label: seven parts
    CHECK(both.build == "1b");
    CHECK(both.variant_label == "null");
    auto digit_label = parse_filename("pkg-1.0-py3-none-any-13.whl");  // a label may start with a digit
    CHECK(digit_label.build.empty());
    CHECK(digit_label.variant_label == "13");
    CHECK(parse_filename("pkg-1.0-2-py3-none-any.whl").build == "2");  // six parts, third a digit: a build tag

    CHECK(valid_variant_label("abcdefghijklmnop"));  // 16
    CHECK_FALSE(valid_variant_label("abcdefghijklmnopq"));
    CHECK_FALSE(valid_variant_label(""));
    CHECK(with_variant_label("pkg-1.0-py3-none-any.whl", "x1") == "pkg-1.0-py3-none-any-x1.whl");
    CHECK(with_variant_label("pkg-1.0-py3-none-any-x1.whl", "x1") == "pkg-1.0-py3-none-any-x1.whl");
}

TEST_CASE("invalid wheel file names") {
    struct Case {
        const char* filename;
        const char* problem_starts;
    };
    for (auto [filename, problem] : {
             Case{"pkg-1.0-py3-none-any.zip", "not a wheel file name"},
             Case{".whl", "not a wheel file name"},
             Case{"pkg-1.0-none-any.whl", "wheel file name must be"},
             Case{"pkg-1.0-1-2-3-py3-none-any.whl", "wheel file name must be"},
             Case{"pkg-1.0-1-2-py3-none-any.whl", "invalid python tag '2'"},
             Case{"pkg-1.0-py3-none-any-Cu13.whl", "invalid variant label 'Cu13'"},
             Case{"pkg-1.0-py3-none-any-cu13sm90.100.120x.whl", "invalid variant label 'cu13sm90.100.120x'"},
             Case{"pkg-1.0-1-py3-none-any-a+b.whl", "invalid variant label 'a+b'"},
             Case{"pkg-1.0-abc-py3-none-any-x.whl", "invalid build tag 'abc'"},
             Case{"pkg-one.two-py3-none-any.whl", "invalid PEP 440 version 'one.two'"},
             Case{"pkg-1.0--none-any.whl", "invalid python tag ''"},
             Case{"pkg-1.0-py3..py2-none-any.whl", "invalid python tag 'py3..py2'"},
             Case{"pkg-1.0-py3-none-linux+x86.whl", "invalid platform tag 'linux+x86'"},
             Case{"p kg-1.0-py3-none-any.whl", "invalid distribution name 'p kg'"},
         }) {
        CAPTURE(filename);
        auto error = error_from([&] { parse_filename(filename); });
        CHECK(error.file() == filename);
        CHECK(error.problem().starts_with(problem));
    }
}

TEST_CASE("distribution name escaping and normalization") {
    CHECK(escape_distribution("python-snappy") == "python_snappy");
    CHECK(escape_distribution("Foo.._-Bar") == "Foo_Bar");
    CHECK(escape_distribution("sgl_kernel") == "sgl_kernel");
    CHECK(normalize_project_name("Foo.._-Bar") == "foo-bar");
    CHECK(normalize_project_name("python_snappy") == "python-snappy");
    CHECK(normalize_project_name("TORCH") == "torch");
}

// ---- RECORD ---------------------------------------------------------------------------

TEST_CASE("RECORD: python csv quoting, doubled quotes, CRLF, blank lines") {
    std::string text =
        "pkg/a.py,sha256=AAAA,12\r\n"
        "\"pkg/with,comma.py\",sha256=BBBB,3\n"
        "\"pkg/say \"\"hi\"\".txt\",sha384=CCCC,0\n"
        "\n"
        "pkg-1.0.dist-info/RECORD,,\n";
    auto entries = parse_record(text, "pkg-1.0.dist-info/RECORD");
    REQUIRE(entries.size() == 4);
    CHECK(entries[0].path == "pkg/a.py");
    CHECK(entries[0].hash_algorithm == "sha256");
    CHECK(entries[0].hash_value == "AAAA");
    CHECK(entries[0].size == 12u);
    CHECK(entries[0].line == 1);
    CHECK(entries[1].path == "pkg/with,comma.py");
    CHECK(entries[2].path == "pkg/say \"hi\".txt");
    CHECK(entries[2].hash_algorithm == "sha384");
    CHECK(entries[2].size == 0u);
    CHECK(entries[3].path == "pkg-1.0.dist-info/RECORD");
    CHECK(entries[3].hash_algorithm.empty());
    CHECK_FALSE(entries[3].size);
    CHECK(entries[3].line == 5);

    auto written = format_record(entries);
    CHECK(written ==
          "pkg/a.py,sha256=AAAA,12\n"
          "\"pkg/with,comma.py\",sha256=BBBB,3\n"
          "\"pkg/say \"\"hi\"\".txt\",sha384=CCCC,0\n"
          "pkg-1.0.dist-info/RECORD,,\n");
    auto again = parse_record(written, "RECORD");
    REQUIRE(again.size() == entries.size());
    for (std::size_t i = 0; i < again.size(); ++i) {
        CHECK(again[i].path == entries[i].path);
        CHECK(again[i].hash_value == entries[i].hash_value);
        CHECK(again[i].size == entries[i].size);
    }
}

TEST_CASE("RECORD: a quoted field may span lines; line numbers follow the text") {
    auto entries = parse_record("\"odd\nname\",sha256=AA,1\nnext,sha256=BB,2\n", "RECORD");
    REQUIRE(entries.size() == 2);
    CHECK(entries[0].path == "odd\nname");
    CHECK(entries[1].line == 3);
    CHECK(format_record(entries).starts_with("\"odd\nname\",sha256=AA,1\n"));
}

TEST_CASE("RECORD: malformed rows name the file and the line") {
    struct Case {
        const char* text;
        const char* problem;
    };
    for (auto [text, problem] : {
             Case{"a,sha256=AA,1\nb,sha256=BB\n", "line 2: expected 3 fields (path,hash,size), found 2"},
             Case{"a,sha256=AA,1,extra\n", "line 1: expected 3 fields (path,hash,size), found 4"},
             Case{"a,sha256=AA,12x\n", "line 1: malformed size '12x'"},
             Case{"a,sha256=AA,-1\n", "line 1: malformed size '-1'"},
             Case{"a,nohash,1\n", "line 1: malformed hash 'nohash' (expected algorithm=value)"},
             Case{"a,sha256=,1\n", "line 1: malformed hash 'sha256=' (expected algorithm=value)"},
             Case{",sha256=AA,1\n", "line 1: empty path"},
             Case{"ok,,\n\"open,sha256=AA,1\n", "line 2: unterminated quoted field"},
             Case{"\"a\"b,sha256=AA,1\n", "line 1: unexpected text after a closing quote"},
         }) {
        CAPTURE(text);
        auto error = error_from([&] { parse_record(text, "x-1.0.dist-info/RECORD"); });
        CHECK(error.file() == "x-1.0.dist-info/RECORD");
        CHECK(error.problem() == problem);
    }
}

TEST_CASE("RECORD hashes") {
    CHECK(record_hash_sha256("") == "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
    CHECK(record_hash_sha256("abc") == "sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
    CHECK(hash_is_strong("sha256"));
    CHECK(hash_is_strong("sha384"));
    CHECK(hash_is_strong("sha512"));
    CHECK_FALSE(hash_is_strong("sha1"));
    CHECK_FALSE(hash_is_strong("md5"));
    CHECK_FALSE(hash_is_strong(""));
}

// ---- METADATA / WHEEL -------------------------------------------------------------------

TEST_CASE("METADATA: repeats, continuation lines, body kept byte for byte") {
    std::string text =
        "Metadata-Version: 2.1\n"
        "Name: sgl-kernel\n"
        "Version: 0.3.21+cu130\n"
        "License: Apache\n"
        "        with a second line\n"
        "\tand a tabbed third\n"
        "Requires-Dist: torch (==2.9.0)\n"
        "requires-dist: numpy>=1.26 ; python_version >= \"3.10\"\n"
        "Description-Content-Type: text/markdown\n"
        "\n"
        "# Title\r\n\nBody: with a colon\n  indented\n\n\ntrailing blank lines\n\n";
    auto file = parse_headers(text, "METADATA");
    REQUIRE(file.headers.size() == 7);
    CHECK(file.first("name") == "sgl-kernel");
    CHECK(file.first("VERSION") == "0.3.21+cu130");
    CHECK(file.first("License") == "Apache\n        with a second line\n\tand a tabbed third");
    CHECK(file.all("Requires-Dist") ==
          std::vector<std::string>{"torch (==2.9.0)", "numpy>=1.26 ; python_version >= \"3.10\""});
    CHECK_FALSE(file.first("Summary"));
    REQUIRE(file.body);
    CHECK(*file.body == "# Title\r\n\nBody: with a colon\n  indented\n\n\ntrailing blank lines\n\n");
    CHECK(format_headers(file) == text);
}

TEST_CASE("METADATA: CRLF line ends, no body, an empty body, errors") {
    auto crlf = parse_headers("Name: x\r\nVersion: 1.0\r\n", "METADATA");
    CHECK(crlf.first("Version") == "1.0");
    CHECK_FALSE(crlf.body);
    CHECK(format_headers(crlf) == "Name: x\nVersion: 1.0\n");

    std::string wheel_text = "Wheel-Version: 1.0\nTag: py2-none-any\nTag: py3-none-any\n\n";
    auto wheel_file = parse_headers(wheel_text, "WHEEL");
    CHECK(wheel_file.body == "");
    CHECK(wheel_file.all("tag").size() == 2);
    CHECK(format_headers(wheel_file) == wheel_text);

    auto junk = error_from([] { parse_headers("Name: x\nthis is not a header\n", "pkg-1.0.dist-info/METADATA"); });
    CHECK(junk.file() == "pkg-1.0.dist-info/METADATA");
    CHECK(junk.problem() == "line 2: not a 'Name: value' header line");
    CHECK(error_from([] { parse_headers("  leading continuation\n", "M"); }).problem() ==
          "line 1: continuation line before any header");
    CHECK(error_from([] { parse_headers("Bad Name: x\n", "M"); }).problem() == "line 1: not a 'Name: value' header line");
}

TEST_CASE("format_headers keeps a programmatic multi-line value parseable") {
    HeaderFile file;
    file.headers.emplace_back("Description", "first\nsecond");
    auto text = format_headers(file);
    CHECK(parse_headers(text, "M").first("Description") == "first\n        second");
}

TEST_CASE("Requires-Dist parsing") {
    auto old_style = parse_requirement("torch (>=2.9,<2.10) ; extra == 'gpu'");
    CHECK(old_style.name == "torch");
    CHECK(old_style.specifier == ">=2.9,<2.10");
    CHECK(old_style.marker == "extra == 'gpu'");

    auto pep508 = parse_requirement("Torch[cuda, distributed]>=2.9; python_version>='3.10'");
    CHECK(pep508.name == "Torch");
    CHECK(pep508.extras == std::vector<std::string>{"cuda", "distributed"});
    CHECK(pep508.specifier == ">=2.9");
    CHECK(pep508.marker == "python_version>='3.10'");

    auto bare = parse_requirement("  numpy  ");
    CHECK(bare.name == "numpy");
    CHECK(bare.specifier.empty());
    CHECK(bare.marker.empty());

    auto url = parse_requirement("torch @ https://example.org/torch.whl;v=1 ; sys_platform == 'linux'");
    CHECK(url.name == "torch");
    CHECK(url.url == "https://example.org/torch.whl;v=1");
    CHECK(url.specifier.empty());
    CHECK(url.marker == "sys_platform == 'linux'");
}

// ---- Wheel::open on real wheels ---------------------------------------------------------------

TEST_CASE("every auditwheel test wheel opens as a wheel and verifies clean (but one)") {
    // auditwheel's mips64 test wheel really is inconsistent: its WHEEL says cp311.
    const std::string mips64_findings =
        "testsimple-0.0.1.dist-info/WHEEL: tag cp313-cp313-linux_mips64 from the file name is missing from WHEEL\n"
        "testsimple-0.0.1.dist-info/WHEEL: WHEEL lists tag cp311-cp311-linux_mips64 that the file name does not have\n";
    for (const auto& path : auditwheel_wheels()) {
        CAPTURE(path);
        std::string expected = path.filename() == "testsimple-0.0.1-cp313-cp313-linux_mips64.whl" ? mips64_findings : "";
        auto wheel = Wheel::open(path);
        CHECK(wheel.dist_info() ==
              escape_distribution(wheel.metadata_name()) + "-" + wheel.metadata_version() + ".dist-info");
        CHECK(wheel.filename().version == wheel.metadata_version());
        CHECK(!wheel.record().empty());
        CHECK(!wheel.wheel_file().all("Tag").empty());
        CHECK(problems(verify_wheel(wheel, scan_members(wheel.archive()))) == expected);
    }
}

TEST_CASE("a real wheel's parts") {
    auto wheel = Wheel::open(auditwheel_dir() / "python_snappy-0.5.2-pp260-pypy_41-linux_x86_64.whl");
    CHECK(wheel.dist_info() == "python_snappy-0.5.2.dist-info");
    CHECK(wheel.record_path() == "python_snappy-0.5.2.dist-info/RECORD");
    CHECK(wheel.metadata_name() == "python-snappy");
    CHECK(wheel.metadata_version() == "0.5.2");
    CHECK(wheel.metadata().all("Requires-Dist") == std::vector<std::string>{"cffi (>=1.0.0)"});
    CHECK(wheel.wheel_file().first("Root-Is-Purelib") == "false");
    CHECK(wheel.filename().tags() == std::vector<std::string>{"pp260-pypy_41-linux_x86_64"});
    CHECK(wheel.torch_requirements().empty());
    CHECK(wheel.archive().find(wheel.record_path()) != nullptr);
}

// ---- Wheel::open on broken wheels -------------------------------------------------------------

TEST_CASE("what a wheel cannot be opened without") {
    TempDir dir;
    auto open_error = [&](const WheelBuilder& builder) {
        auto path = builder.write(dir.path());
        auto error = error_from([&] { Wheel::open(path); });
        CHECK(error.file() == path.string());
        return error.problem();
    };
    WheelBuilder no_dist_info;
    no_dist_info.edit_members = [](auto& members) {
        for (auto& member : members) member.name.replace(0, member.name.find('/'), "misc");
    };
    CHECK(open_error(no_dist_info) == "no top-level .dist-info directory");

    WheelBuilder two;
    two.edit_members = [](auto& members) { members.push_back({"other-2.0.dist-info/METADATA", "Name: other\n"}); };
    CHECK(open_error(two) == "several .dist-info directories (demo_pkg-1.0.dist-info, other-2.0.dist-info)");

    for (const char* missing : {"METADATA", "WHEEL", "RECORD"}) {
        WheelBuilder builder;
        builder.edit_members = [&](auto& members) {
            std::erase_if(members, [&](const ZipEntry& member) { return member.name.ends_with(missing); });
        };
        CHECK(open_error(builder) == "missing demo_pkg-1.0.dist-info/" + std::string(missing));
    }

    WheelBuilder versionless;
    versionless.metadata = "Metadata-Version: 2.1\nName: demo-pkg\n";
    CHECK(open_error(versionless) == "demo_pkg-1.0.dist-info/METADATA has no Version");

    WheelBuilder garbled;
    garbled.metadata = "Metadata-Version: 2.1\nName demo-pkg\n";
    CHECK(open_error(garbled) == "demo_pkg-1.0.dist-info/METADATA: line 2: not a 'Name: value' header line");

    WheelBuilder bad_record;
    bad_record.edit_members = [](auto& members) { members.back().data = "only,two\n"; };
    CHECK(open_error(bad_record) ==
          "demo_pkg-1.0.dist-info/RECORD: line 1: expected 3 fields (path,hash,size), found 2");

    WheelBuilder bad_name;
    bad_name.filename = "demo_pkg-1.0.whl";
    CHECK(open_error(bad_name).starts_with("wheel file name must be"));

    WheelBuilder slip;
    slip.files.emplace_back("../evil.py", "x");
    CHECK(open_error(slip) == "member ../evil.py: unsafe name ('..' component)");

    // Case-insensitive file systems unpack these onto one another.
    WheelBuilder shouting;
    shouting.edit_members = [](auto& members) { members.push_back({"DEMO_PKG-1.0.DIST-INFO/METADATA", "Name: x\n"}); };
    CHECK(open_error(shouting) == "several .dist-info directories (DEMO_PKG-1.0.DIST-INFO, demo_pkg-1.0.dist-info)");
    WheelBuilder two_metadata;
    two_metadata.edit_members = [](auto& members) { members.push_back({"demo_pkg-1.0.dist-info/metadata", "Name: x\n"}); };
    CHECK(open_error(two_metadata) ==
          "members demo_pkg-1.0.dist-info/METADATA and demo_pkg-1.0.dist-info/metadata differ only in case");
}

TEST_CASE("torch requirements in any spelling") {
    WheelBuilder builder;
    builder.metadata = "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n"
                       "Requires-Dist: numpy\n"
                       "Requires-Dist: Torch (==2.9.0)\n"
                       "Requires-Dist: torch-vision>=0.20\n"
                       "Requires-Dist: TORCH>=2.8; extra == 'cuda'\n";
    TempDir dir;
    auto wheel = Wheel::open(builder.write(dir.path()));
    auto torch = wheel.torch_requirements();
    REQUIRE(torch.size() == 2);
    CHECK(torch[0].name == "Torch");
    CHECK(torch[0].specifier == "==2.9.0");
    CHECK(torch[1].specifier == ">=2.8");
    CHECK(torch[1].marker == "extra == 'cuda'");
}

// ---- verify_wheel, one damage at a time -------------------------------------------------------

TEST_CASE("a freshly built wheel verifies clean") {
    WheelBuilder builder;
    CHECK(problems(verify_built(builder)) == "");
    builder.record_lists_itself = false;  // RECORD need not list itself
    CHECK(problems(verify_built(builder)) == "");
}

TEST_CASE("verify: a flipped byte in a member") {
    TempDir dir;
    WheelBuilder builder;
    auto path = builder.write(dir.path());
    patch_file(path, "stored member payload", "stored member pAyload");
    auto wheel = Wheel::open(path);
    CHECK(error_from([&] { scan_members(wheel.archive()); }).problem() == "member demo_pkg/core.py: CRC mismatch");
}

TEST_CASE("verify: a flipped byte in a real wheel's deflated extension") {
    TempDir dir;
    auto name = std::string("testzlib-0.0.1-cp310-cp310-linux_x86_64.whl");
    auto bytes = read_bytes(auditwheel_dir() / name);
    auto so = "testzlib.cpython-310-x86_64-linux-gnu.so";
    {
        auto original = Wheel::open(auditwheel_dir() / name);
        auto raw = original.archive().read_raw(*original.archive().find(so));
        auto at = bytes.find(std::string(raw.begin(), raw.end()));
        REQUIRE(at != std::string::npos);
        bytes[at + raw.size() / 2] = static_cast<char>(bytes[at + raw.size() / 2] ^ 0x55);
    }
    write_bytes(dir / name, bytes);
    auto wheel = Wheel::open(dir / name);
    // The codec's words (zlib's message; ISA-L's code, spelled the same way here).
    CHECK(error_from([&] { scan_members(wheel.archive()); }).problem() ==
          "member " + std::string(so) + ": corrupt compressed data (invalid distance too far back)");
}

TEST_CASE("verify: RECORD disagreeing with the members") {
    SUBCASE("wrong size") {
        WheelBuilder builder;
        builder.edit_record = [](auto& record) { record[0].size = 999; };
        CHECK(problems(verify_built(builder)) == "demo_pkg/__init__.py: size mismatch: RECORD says 999, member has 25\n");
    }
    SUBCASE("wrong sha256") {
        WheelBuilder builder;
        auto real = record_hash_sha256("from .core import answer\n").substr(7);
        builder.edit_record = [](auto& record) { record[0].hash_value = record_hash_sha256("other").substr(7); };
        CHECK(problems(verify_built(builder)) == "demo_pkg/__init__.py: sha256 mismatch: RECORD says " +
                                                    record_hash_sha256("other").substr(7) + ", member has " + real + "\n");
    }
    SUBCASE("missing RECORD line") {
        WheelBuilder builder;
        builder.edit_record = [](auto& record) { record.erase(record.begin() + 1); };
        CHECK(problems(verify_built(builder)) == "demo_pkg/core.py: not listed in RECORD\n");
    }
    SUBCASE("RECORD line without a member, and an unsafe one") {
        WheelBuilder builder;
        builder.edit_record = [](auto& record) {
            record.push_back({"demo_pkg/gone.py", "sha256", "AAAA", 1, 0});
            record.push_back({"../../etc/passwd", "sha256", "AAAA", 1, 0});
        };
        CHECK(problems(verify_built(builder)) ==
              "demo_pkg/gone.py: listed in RECORD but not in the wheel (RECORD line 6)\n"
              "../../etc/passwd: unsafe path in RECORD ('..' component) (RECORD line 7)\n");
    }
    SUBCASE("a line listed twice") {
        WheelBuilder builder;
        builder.edit_record = [](auto& record) { record.push_back(record[0]); };
        CHECK(problems(verify_built(builder)) == "demo_pkg/__init__.py: listed more than once in RECORD (RECORD line 6)\n");
    }
    SUBCASE("sha1 and md5 hashes are findings") {
        WheelBuilder builder;
        builder.edit_record = [](auto& record) {
            record[0].hash_algorithm = "sha1";
            record[1].hash_algorithm = "md5";
        };
        CHECK(problems(verify_built(builder)) ==
              "demo_pkg/__init__.py: weak hash algorithm sha1 (RECORD line 1); only sha256, sha384 and sha512 are accepted\n"
              "demo_pkg/core.py: weak hash algorithm md5 (RECORD line 2); only sha256, sha384 and sha512 are accepted\n");
    }
    SUBCASE("no hash, no size, malformed hash value") {
        WheelBuilder builder;
        builder.edit_record = [](auto& record) {
            record[0].hash_algorithm.clear();
            record[0].hash_value.clear();
            record[1].size.reset();
            record[2].hash_value = "not*base64";
        };
        CHECK(problems(verify_built(builder)) ==
              "demo_pkg/__init__.py: no hash (RECORD line 1)\n"
              "demo_pkg/core.py: no size (RECORD line 2)\n"
              "demo_pkg-1.0.dist-info/METADATA: malformed sha256 value 'not*base64' (RECORD line 3)\n");
    }
    SUBCASE("sha512 hashes are checked too") {
        WheelBuilder builder;
        auto content = builder.files[0].second;
        builder.edit_record = [&](auto& record) {
            record[0].hash_algorithm = "sha512";
            record[0].hash_value = sha512_b64(content);
            record[1].hash_algorithm = "sha512";
            record[1].hash_value = sha512_b64("something else");
        };
        CHECK(problems(verify_built(builder)) == "demo_pkg/core.py: sha512 mismatch: RECORD says " +
                                                    sha512_b64("something else") + ", member has " +
                                                    sha512_b64(builder.files[1].second) + "\n");
    }
    SUBCASE("RECORD signatures and directory entries are exempt") {
        WheelBuilder builder;
        builder.edit_members = [](auto& members) {
            members.push_back({"demo_pkg-1.0.dist-info/RECORD.jws", "{}"});
            members.push_back({"demo_pkg-1.0.dist-info/RECORD.p7s", "sig"});
        };
        CHECK(problems(verify_built(builder)) == "");
    }
}

TEST_CASE("verify: names, versions and tags") {
    SUBCASE("file name version differs from METADATA") {
        WheelBuilder builder;
        builder.filename = "demo_pkg-1.1-cp310-cp310-linux_x86_64.whl";
        CHECK(problems(verify_built(builder)) ==
              "demo_pkg-1.0.dist-info/METADATA: version mismatch: file name says 1.1, METADATA says 1.0\n");
    }
    SUBCASE("versions are compared PEP 440-normalized") {
        WheelBuilder builder;
        builder.filename = "demo_pkg-1.0+CU130-cp310-cp310-linux_x86_64.whl";
        builder.dist_info = "demo_pkg-1.0+cu130.dist-info";
        builder.metadata = "Metadata-Version: 2.1\nName: Demo.Pkg\nVersion: 1.0.0+cu130\n";
        CHECK(problems(verify_built(builder)) == "");
    }
    SUBCASE("local labels must agree") {
        WheelBuilder builder;
        builder.filename = "demo_pkg-1.0+cu130-cp310-cp310-linux_x86_64.whl";
        CHECK(problems(verify_built(builder)) ==
              "demo_pkg-1.0.dist-info/METADATA: version mismatch: file name says 1.0+cu130, METADATA says 1.0\n");
    }
    SUBCASE("invalid METADATA version") {
        WheelBuilder builder;
        builder.metadata = "Metadata-Version: 2.1\nName: demo-pkg\nVersion: one\n";
        CHECK(problems(verify_built(builder)) == "demo_pkg-1.0.dist-info/METADATA: Version 'one' is not a valid PEP 440 version\n");
    }
    SUBCASE("distribution name differs from METADATA") {
        WheelBuilder builder;
        builder.filename = "other_pkg-1.0-cp310-cp310-linux_x86_64.whl";
        CHECK(problems(verify_built(builder)) ==
              "demo_pkg-1.0.dist-info/METADATA: name mismatch: file name says other_pkg, METADATA says demo-pkg\n");
    }
    SUBCASE("dist-info directory differs from METADATA") {
        WheelBuilder builder;
        builder.dist_info = "demo_pkg-1.2.dist-info";
        CHECK(problems(verify_built(builder)) ==
              "demo_pkg-1.2.dist-info: dist-info directory does not match METADATA (expected demo_pkg-1.0.dist-info)\n");
        builder.dist_info = "demo.dist-info";
        CHECK(problems(verify_built(builder)) ==
              "demo.dist-info: dist-info directory does not match METADATA (expected demo_pkg-1.0.dist-info)\n");
    }
    SUBCASE("WHEEL tags disagree with the file name") {
        WheelBuilder builder;
        builder.filename = "demo_pkg-1.0-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl";
        builder.wheel = "Wheel-Version: 1.0\nTag: cp310-cp310-manylinux_2_17_x86_64\nTag: cp310-cp310-linux_x86_64\n";
        CHECK(problems(verify_built(builder)) ==
              "demo_pkg-1.0.dist-info/WHEEL: tag cp310-cp310-manylinux2014_x86_64 from the file name is missing from WHEEL\n"
              "demo_pkg-1.0.dist-info/WHEEL: WHEEL lists tag cp310-cp310-linux_x86_64 that the file name does not have\n");
    }
    SUBCASE("compressed tag sets match WHEEL's expanded lines in any order") {
        WheelBuilder builder;
        builder.filename = "demo_pkg-1.0-py2.py3-none-any.whl";
        builder.wheel = "Wheel-Version: 1.0\nTag: py3-none-any\nTag: py2-none-any\n";
        CHECK(problems(verify_built(builder)) == "");
    }
}
