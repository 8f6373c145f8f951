// retag's parts: the local label (torch and CUDA segments), the torch pin, the
// METADATA/WHEEL edits that keep every other byte, write_wheel_changes (dist-info
// renamed, metadata replaced, payload raw) and retag_wheel's refusals.
#include "wheelfix/repair/retag.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/wheel/local_label.hpp"
#include "wheelfix/wheel/metadata_edit.hpp"
#include "wheelfix/wheel/rewrite.hpp"
#include "wheelfix/wheel/verify.hpp"

#include "zip_test_support.hpp"

#include <doctest/doctest.h>

using namespace wheelfix;
using namespace wheelfix::test;
using namespace wheelfix::wheel;

namespace {

std::string retagged(std::string_view version, std::string_view torch, std::optional<std::string> cuda = std::nullopt,
                     LocalFormat format = LocalFormat::dotted) {
    return relabel_version(Version::parse(version), LocalLabelRequest{Version::parse(torch), cuda, format}).normalized();
}

std::string problems(const std::vector<VerifyFinding>& findings) {
    std::string out;
    for (const auto& finding : findings) out += finding.member + ": " + finding.problem + "\n";
    return out;
}

repair::RetagOptions options_for(std::string_view torch) {
    repair::RetagOptions options;
    options.request.torch = Version::parse(torch);
    return options;
}

repair::RetagResult retag_file(const fs::path& path, const repair::RetagOptions& options, const fs::path& out_dir) {
    auto wheel = Wheel::open(path);
    repair::require_agreeing_versions(wheel, options.fix_version);
    return repair::retag_wheel(wheel, scan_members(wheel.archive()), options, out_dir);
}

std::string member_text(const Wheel& wheel, const std::string& name) {
    auto bytes = wheel.archive().read(*wheel.archive().find(name));
    return std::string(bytes.begin(), bytes.end());
}

}  // namespace

// ---- local label ----------------------------------------------------------------------

TEST_CASE("relabel_version appends the torch segment after the CUDA one, or starts a label") {
    CHECK(retagged("0.3.21+cu130", "2.10") == "0.3.21+cu130.torch2.10");
    CHECK(retagged("0.3.21+cu130", "2.10.0") == "0.3.21+cu130.torch2.10");
    CHECK(retagged("0.3.21+cu130", "2.10.0+cu130") == "0.3.21+cu130.torch2.10");  // torch's own label is not ours
    CHECK(retagged("0.3.21", "2.10") == "0.3.21+torch2.10");
    CHECK(retagged("0.3.21+cu130.something", "2.10") == "0.3.21+cu130.torch2.10.something");
    CHECK(retagged("0.3.21+abc", "2.10") == "0.3.21+abc.torch2.10");
    // A numeric segment after cu130 would read as part of the torch segment: append instead.
    CHECK(retagged("0.3.21+cu130.7", "2.10") == "0.3.21+cu130.7.torch2.10");
    CHECK(retagged("1!0.3+cu130", "2.10") == "1!0.3+cu130.torch2.10");
}

TEST_CASE("relabel_version replaces an existing torch segment where it stands, in any spelling") {
    CHECK(retagged("0.3.21+cu130.torch2.9", "2.10") == "0.3.21+cu130.torch2.10");
    CHECK(retagged("0.3.21+cu130.torch2.9.1", "2.10") == "0.3.21+cu130.torch2.10");
    CHECK(retagged("0.3.21+torch29.cu130", "2.10") == "0.3.21+torch2.10.cu130");
    CHECK(retagged("0.3.21+cu130.torch.2.9.x", "2.10") == "0.3.21+cu130.torch2.10.x");
    CHECK(retagged("0.3.21+CU130.Torch2.9", "2.10") == "0.3.21+cu130.torch2.10");
    CHECK(retagged("0.3.21+cu130-torch2_9", "2.10") == "0.3.21+cu130.torch2.10");
    CHECK(retagged("1.0RC1", "2.10") == "1.0rc1+torch2.10");
    // Idempotent: retagging the result for the same torch changes nothing.
    CHECK(retagged(retagged("0.3.21+cu130.x", "2.10"), "2.10") == "0.3.21+cu130.torch2.10.x");
}

TEST_CASE("relabel_version sets or replaces the CUDA segment") {
    CHECK(retagged("0.3.21+cu128.torch2.9", "2.10", "13.0") == "0.3.21+cu130.torch2.10");
    CHECK(retagged("0.3.21", "2.10", "13.0") == "0.3.21+cu130.torch2.10");
    CHECK(retagged("0.3.21+abc", "2.10", "12.8") == "0.3.21+cu128.torch2.10.abc");
    CHECK(cuda_segment("13") == "cu130");
    CHECK(cuda_segment("12.8.1") == "cu128");
    CHECK(cuda_segment("CU126") == "cu126");
    CHECK(error_from([] { cuda_segment("thirteen"); }).file() == "--cuda");
    CHECK(error_from([] { cuda_segment("13.x"); }).file() == "--cuda");
}

TEST_CASE("relabel_version without a torch (repair of a wheel that does not use it) leaves the torch segment") {
    auto without_torch = [](std::string_view version, std::optional<std::string> cuda) {
        return relabel_version(Version::parse(version), LocalLabelRequest{std::nullopt, std::move(cuda)}).normalized();
    };
    CHECK(without_torch("1.0", std::nullopt) == "1.0");
    CHECK(without_torch("0.3.21+cu130.torch2.9", std::nullopt) == "0.3.21+cu130.torch2.9");
    CHECK(without_torch("0.3.21+cu128.torch2.9", "13.0") == "0.3.21+cu130.torch2.9");
    CHECK(without_torch("1.0", "13.0") == "1.0+cu130");
}

TEST_CASE("the torch segment spellings, and what they refuse") {
    CHECK(retagged("0.3.21+cu130", "2.10.0", {}, LocalFormat::compact) == "0.3.21+cu130.torch210");
    CHECK(retagged("0.3.21+cu130", "2.10.0", {}, LocalFormat::full) == "0.3.21+cu130.torch2.10.0");
    CHECK(retagged("0.3.21+cu130", "2.10", {}, LocalFormat::full) == "0.3.21+cu130.torch2.10");
    CHECK(retagged("0.3.21+cu130.torch210", "2.11", {}, LocalFormat::compact) == "0.3.21+cu130.torch211");
    CHECK(parse_local_format("compact") == LocalFormat::compact);
    CHECK_FALSE(parse_local_format("short"));
    auto error = error_from([] { retagged("0.3.21", "2"); });
    CHECK(error.file() == "--torch");
    CHECK(error.problem().find("MAJOR.MINOR") != std::string::npos);
    // Every result parses back as the same PEP 440 version it prints.
    for (const char* version : {"0.3.21+cu130", "0.3.21", "2!1.0.post1.dev3+CU_130-x", "1.0a1+torch"}) {
        auto result = relabel_version(Version::parse(version), LocalLabelRequest{Version::parse("2.10"), "13.0"});
        CHECK(Version::parse(result.normalized()) == result);
        CHECK(result.local().starts_with("cu130.torch2.10"));
    }
}

// ---- torch pin and METADATA / WHEEL edits ---------------------------------------------------

TEST_CASE("torch_pin_specifier: minor series, exact release, none") {
    CHECK(torch_pin_specifier(Version::parse("2.10"), TorchPin::minor)->text() == ">=2.10,<2.11");
    CHECK(torch_pin_specifier(Version::parse("2.10.1+cu130"), TorchPin::minor)->text() == ">=2.10,<2.11");
    CHECK(torch_pin_specifier(Version::parse("2.9.0+cu130"), TorchPin::exact)->text() == "==2.9.0");
    CHECK(torch_pin_specifier(Version::parse("2.10"), TorchPin::exact)->text() == "==2.10");
    CHECK_FALSE(torch_pin_specifier(Version::parse("2.10"), TorchPin::none));
}

TEST_CASE("set_version changes the Version line only, keeping line ends and the body") {
    std::string metadata = "Metadata-Version: 2.1\nName: x\nversion:  1.0\nSummary: s\n  continued\n\nBody\nVersion: 9\n";
    CHECK(set_version(metadata, "1.0+torch2.10") ==
          "Metadata-Version: 2.1\nName: x\nversion: 1.0+torch2.10\nSummary: s\n  continued\n\nBody\nVersion: 9\n");
    CHECK(set_version("Name: x\r\nVersion: 1.0\r\n\r\nbody\r\n", "2.0") == "Name: x\r\nVersion: 2.0\r\n\r\nbody\r\n");
    CHECK(set_version("Name: x\nVersion: 1.0", "2.0") == "Name: x\nVersion: 2.0");
    CHECK_THROWS_AS(set_version("Name: x\n\n", "2.0"), InputError);
}

TEST_CASE("pin_torch replaces torch requirements keeping extras and markers, or adds one") {
    std::string metadata = "Name: x\nRequires-Dist: numpy\nRequires-Dist: torch (>=2.9) ; extra == 'gpu'\n"
                           "Requires-Dist: Torch[cuda,x]>=2.0\nRequires-Dist: triton\nSummary: s\n\nRequires-Dist: torch\n";
    auto pinned = pin_torch(metadata, SpecifierSet::parse(">=2.10,<2.11"));
    CHECK(pinned.text == "Name: x\nRequires-Dist: numpy\nRequires-Dist: torch>=2.10,<2.11; extra == 'gpu'\n"
                         "Requires-Dist: Torch[cuda,x]>=2.10,<2.11\nRequires-Dist: triton\nSummary: s\n\n"
                         "Requires-Dist: torch\n");
    REQUIRE(pinned.changes.size() == 2);
    CHECK(pinned.changes[0].first == "torch (>=2.9) ; extra == 'gpu'");
    CHECK(pinned.changes[0].second == "torch>=2.10,<2.11; extra == 'gpu'");

    auto added = pin_torch("Name: x\nRequires-Dist: numpy\nSummary: s\n\nbody\n", SpecifierSet::parse("==2.10.0"));
    CHECK(added.text == "Name: x\nRequires-Dist: numpy\nRequires-Dist: torch==2.10.0\nSummary: s\n\nbody\n");
    REQUIRE(added.changes.size() == 1);
    CHECK(added.changes[0].first.empty());
    CHECK(pin_torch("Name: x\r\nSummary: s\r\n\r\nbody", SpecifierSet::parse("==2.10")).text ==
          "Name: x\r\nSummary: s\r\nRequires-Dist: torch==2.10\r\n\r\nbody");
    CHECK(pin_torch("Name: x\nSummary: s", SpecifierSet::parse("==2.10")).text == "Name: x\nSummary: s\nRequires-Dist: torch==2.10");

    // Never wider than the author's: an exact pin stays exact; one that excludes the torch is refused.
    CHECK(pin_torch("Name: x\nRequires-Dist: torch==2.10.1\n", SpecifierSet::parse(">=2.10,<2.11")).text ==
          "Name: x\nRequires-Dist: torch==2.10.1\n");
    CHECK(pin_torch("Name: x\nRequires-Dist: torch>=2.10\n", SpecifierSet::parse(">=2.4.0")).text == "Name: x\nRequires-Dist: torch>=2.10\n");
    CHECK_THROWS_AS(pin_torch("Name: x\nRequires-Dist: torch==2.9.1\n", SpecifierSet::parse(">=2.10,<2.11")), InputError);
    CHECK(pin_torch("Name: x\nRequires-Dist: torch>=2.9,<2.10\n", SpecifierSet::parse(">=2.10,<2.11"), PinWrite::replace)
              .text == "Name: x\nRequires-Dist: torch>=2.10,<2.11\n");

    auto url = pin_torch("Name: x\nRequires-Dist: torch @ https://example.org/torch.whl\n\n", SpecifierSet::parse("==2.10"));
    CHECK(url.text == "Name: x\nRequires-Dist: torch @ https://example.org/torch.whl\n\n");
    CHECK(url.changes.empty());
}

TEST_CASE("same_requirement compares what a requirement asks, not how it is spelled") {
    const auto same = [](std::string_view a, std::string_view b) {
        return same_requirement(parse_requirement(a), parse_requirement(b));
    };
    CHECK(same("nvidia-cuda-runtime-cu12>=12,<13", "NVIDIA_CUDA_Runtime.cu12 (>=12.0, <13)"));
    CHECK(same("x[b, a]>=1 ; 'nvidia' in variant_namespaces", "X[A,B]>=1;\"nvidia\" in  variant_namespaces"));
    CHECK_FALSE(same("x>=1", "x>=2"));
    CHECK_FALSE(same("x>=1,<2", "x>=1"));
    CHECK_FALSE(same("x>=1", "y>=1"));
    CHECK_FALSE(same("x[a]>=1", "x>=1"));
    CHECK_FALSE(same("x>=1; extra == 'a'", "x>=1"));
    CHECK_FALSE(same("x>=1; extra == 'a b'", "x>=1; extra == 'ab'"));  // white space inside quotes counts
    CHECK_FALSE(same("x @ https://a/x.whl", "x @ https://b/x.whl"));
    CHECK(same("x>=1,<2", "x >= 1, < 2"));
}

TEST_CASE("requirement_summaries: name, specifier and marker as reports show them") {
    CHECK(requirement_summaries({parse_requirement("torch (>=2.9,<2.10); extra == 'gpu'"),
                                 parse_requirement("Torch[cuda]==2.9.1"), parse_requirement("torch")}) ==
          std::vector<std::string>{"torch >=2.9,<2.10; extra == 'gpu'", "Torch ==2.9.1", "torch"});
}

TEST_CASE("add_requirements writes each as given, after the last Requires-Dist, unless METADATA holds it already") {
    const std::vector<Requirement> added = {parse_requirement("nvidia-cuda-runtime>=13,<14 ; 'nvidia' in variant_namespaces"),
                                            parse_requirement("numpy (>=1.26)")};
    // Held as another spelling of the same requirement: not written twice.
    CHECK(add_requirements("Name: x\nRequires-Dist: NumPy>=1.26\nSummary: s\n\nbody\n", added) ==
          "Name: x\nRequires-Dist: NumPy>=1.26\n"
          "Requires-Dist: nvidia-cuda-runtime>=13,<14 ; 'nvidia' in variant_namespaces\nSummary: s\n\nbody\n");
    // A narrower or marked requirement on the same name is another requirement: both written, byte for byte.
    CHECK(add_requirements("Name: x\r\nRequires-Dist: numpy>=2; extra == 'fast'\r\n\r\n", added) ==
          "Name: x\r\nRequires-Dist: numpy>=2; extra == 'fast'\r\n"
          "Requires-Dist: nvidia-cuda-runtime>=13,<14 ; 'nvidia' in variant_namespaces\r\n"
          "Requires-Dist: numpy (>=1.26)\r\n\r\n");
    // Twice in the list: once in METADATA.
    CHECK(add_requirements("Name: x\n", {added[1], parse_requirement("numpy>=1.26")}) ==
          "Name: x\nRequires-Dist: numpy (>=1.26)\n");
    CHECK(add_requirements("Name: x\nRequires-Dist: numpy>=1.26\n", {added[1]}) == "Name: x\nRequires-Dist: numpy>=1.26\n");
}

TEST_CASE("set_tags writes one Tag line per tag where the first one stood") {
    std::string wheel_file = "Wheel-Version: 1.0\nTag: cp310-abi3-manylinux2014_x86_64\nBuild: 1\n\n";
    CHECK(set_tags(wheel_file, {"cp310-abi3-manylinux_2_17_x86_64", "cp310-abi3-manylinux2014_x86_64"}) ==
          "Wheel-Version: 1.0\nTag: cp310-abi3-manylinux_2_17_x86_64\nTag: cp310-abi3-manylinux2014_x86_64\nBuild: 1\n\n");
    CHECK(set_tags("Wheel-Version: 1.0\nTag: a-b-c\nRoot-Is-Purelib: false\nTag: a-b-d\n", {"a-b-e"}) ==
          "Wheel-Version: 1.0\nTag: a-b-e\nRoot-Is-Purelib: false\n");
    CHECK(set_tags("Wheel-Version: 1.0\n\n", {"a-b-e"}) == "Wheel-Version: 1.0\nTag: a-b-e\n\n");
}

// ---- write_wheel_changes -----------------------------------------------------------------------

TEST_CASE("write_wheel_changes renames the dist-info directory and replaces METADATA; the payload is copied raw") {
    TempDir dir;
    WheelBuilder builder;
    builder.directories.push_back("demo_pkg-1.0.dist-info/");
    auto input = Wheel::open(builder.write(dir.path()));
    WheelChanges changes;
    changes.dist_info.rename_to = "demo_pkg-1.0+torch2.10.dist-info";
    changes.dist_info.replaced["METADATA"] = set_version(member_text(input, "demo_pkg-1.0.dist-info/METADATA"), "1.0+torch2.10");
    auto out = dir.path() / "out" / "demo_pkg-1.0+torch2.10-cp310-cp310-linux_x86_64.whl";
    fs::create_directories(out.parent_path());
    write_wheel_changes(input, std::move(changes), out, {});

    auto output = Wheel::open(out);
    CHECK(output.dist_info() == "demo_pkg-1.0+torch2.10.dist-info");
    CHECK(output.metadata_version() == "1.0+torch2.10");
    CHECK(problems(verify_wheel(output, scan_members(output.archive()))) == "");
    std::vector<std::string> names;
    for (const auto& member : output.archive().members()) names.push_back(member.name);
    CHECK(names == std::vector<std::string>{"demo_pkg/", "demo_pkg/__init__.py", "demo_pkg/core.py",
                                            "demo_pkg-1.0+torch2.10.dist-info/", "demo_pkg-1.0+torch2.10.dist-info/METADATA",
                                            "demo_pkg-1.0+torch2.10.dist-info/WHEEL", "demo_pkg-1.0+torch2.10.dist-info/RECORD"});
    for (const char* name : {"demo_pkg/core.py", "demo_pkg/__init__.py"})
        CHECK(input.archive().read_raw(*input.archive().find(name)) == output.archive().read_raw(*output.archive().find(name)));
    CHECK(member_text(input, "demo_pkg-1.0.dist-info/WHEEL") == member_text(output, "demo_pkg-1.0+torch2.10.dist-info/WHEEL"));
    CHECK(member_text(output, output.record_path()).find("demo_pkg-1.0.dist-info") == std::string::npos);
}

TEST_CASE("write_wheel_changes refuses replacing RECORD or a missing file, and a bad directory name") {
    TempDir dir;
    auto input = Wheel::open(WheelBuilder{}.write(dir.path()));
    auto out = dir.path() / "o.whl";
    auto refused = [&](DistInfoChanges dist_info) {
        return error_from([&] { write_wheel_changes(input, WheelChanges{{}, {}, std::move(dist_info)}, out, {}); });
    };
    CHECK(refused({std::nullopt, {{"RECORD", "x"}}, {}}).problem().find("cannot replace") != std::string::npos);
    CHECK(refused({std::nullopt, {{"entry_points.txt", "x"}}, {}}).problem().find("cannot replace") != std::string::npos);
    CHECK(refused({"demo_pkg-2.0", {}, {}}).problem().find("not a .dist-info") != std::string::npos);
    CHECK(refused({"a/b.dist-info", {}, {}}).problem().find("not a .dist-info") != std::string::npos);
    CHECK(refused({std::nullopt, {}, {{"RECORD", "x"}}}).problem().find("cannot add") != std::string::npos);
    CHECK(refused({std::nullopt, {}, {{"METADATA", "x"}}}).problem().find("cannot add") != std::string::npos);
    CHECK(refused({std::nullopt, {}, {{"../escape", "x"}}}).problem().find("cannot add") != std::string::npos);
    CHECK_FALSE(fs::exists(out));
}

// ---- retag_wheel ---------------------------------------------------------------------------------

TEST_CASE("retag_wheel: new names, pinned METADATA, and a wheel that verifies") {
    TempDir dir;
    auto options = options_for("2.10.0");
    options.request.cuda = "13.0";
    auto result = retag_file(WheelBuilder{}.write(dir.path()), options, dir.path() / "out");
    CHECK(result.file_name.after == "demo_pkg-1.0+cu130.torch2.10-cp310-cp310-linux_x86_64.whl");
    CHECK(result.version.after == "1.0+cu130.torch2.10");
    CHECK(result.dist_info.after == "demo_pkg-1.0+cu130.torch2.10.dist-info");
    CHECK(result.pin_specifier->text() == ">=2.10,<2.11");
    auto output = Wheel::open(result.output);
    CHECK(problems(verify_wheel(output, scan_members(output.archive()))) == "");
    CHECK(member_text(output, output.dist_info() + "/METADATA") ==
          "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0+cu130.torch2.10\nRequires-Dist: numpy\n"
          "Requires-Dist: torch>=2.10,<2.11\n\nA body.\n");
}

TEST_CASE("retag_wheel --platform: the file name and WHEEL's Tag lines expand to the same set") {
    TempDir dir;
    WheelBuilder builder;
    builder.filename = "demo_pkg-1.0-py2.py3-none-linux_x86_64.whl";
    builder.wheel = "Wheel-Version: 1.0\nTag: py2-none-linux_x86_64\nTag: py3-none-linux_x86_64\n\n";
    auto options = options_for("2.9");
    options.platform = "manylinux_2_17_x86_64.manylinux2014_x86_64";
    auto result = retag_file(builder.write(dir.path()), options, dir.path() / "out");
    CHECK(result.file_name.after == "demo_pkg-1.0+torch2.9-py2.py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
    CHECK(result.tags.after == std::vector<std::string>{"py2-none-manylinux_2_17_x86_64", "py2-none-manylinux2014_x86_64",
                                                        "py3-none-manylinux_2_17_x86_64", "py3-none-manylinux2014_x86_64"});
    auto output = Wheel::open(result.output);
    CHECK(problems(verify_wheel(output, scan_members(output.archive()))) == "");
    CHECK(member_text(output, output.dist_info() + "/WHEEL") ==
          "Wheel-Version: 1.0\nTag: py2-none-manylinux_2_17_x86_64\nTag: py2-none-manylinux2014_x86_64\n"
          "Tag: py3-none-manylinux_2_17_x86_64\nTag: py3-none-manylinux2014_x86_64\n\n");

    options.platform = "linux x86";
    CHECK(error_from([&] { retag_file(builder.write(dir.path()), options, dir.path() / "bad"); }).file() == "--platform");
    options.platform = "a-b";
    CHECK(error_from([&] { retag_file(builder.write(dir.path()), options, dir.path() / "bad"); }).file() == "--platform");
    CHECK_FALSE(fs::exists(dir.path() / "bad"));
}

TEST_CASE("retag_wheel refuses disagreeing versions unless fix_version, tampered wheels, and writing over the input") {
    TempDir dir;
    WheelBuilder renamed;
    renamed.filename = "demo_pkg-1.0+cu130-cp310-cp310-linux_x86_64.whl";  // the rename script's work
    auto path = renamed.write(dir.path());
    auto error = error_from([&] { retag_file(path, options_for("2.10"), dir.path() / "out"); });
    CHECK(error.problem().find("file name says 1.0+cu130 but METADATA says Version 1.0") != std::string::npos);
    CHECK(error.problem().find("--fix-version") != std::string::npos);

    auto options = options_for("2.10");
    options.fix_version = true;
    auto result = retag_file(path, options, dir.path() / "out");
    CHECK(result.file_name.after == "demo_pkg-1.0+torch2.10-cp310-cp310-linux_x86_64.whl");  // METADATA wins
    CHECK(result.fixed_file_name_version == "1.0+cu130");
    const Wheel fixed = Wheel::open(result.output);
    CHECK(problems(verify_wheel(fixed, scan_members(fixed.archive()))) == "");

    WheelBuilder tampered;
    tampered.edit_record = [](std::vector<RecordEntry>& record) { record[0].size = 1; };
    auto refused = error_from([&] { retag_file(tampered.write(dir.path()), options_for("2.10"), dir.path() / "t"); });
    CHECK(refused.problem().find("does not match its RECORD") != std::string::npos);
    CHECK_FALSE(fs::exists(dir.path() / "t"));

    WheelBuilder done;
    done.filename = "demo_pkg-1.0+torch2.10-cp310-cp310-linux_x86_64.whl";
    done.dist_info = "demo_pkg-1.0+torch2.10.dist-info";
    done.metadata = "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0+torch2.10\n\n";
    auto over = error_from([&] { retag_file(done.write(dir.path()), options_for("2.10"), dir.path()); });
    CHECK(over.problem().find("overwrite the input") != std::string::npos);
}

// ---- what retag proves of its input ---------------------------------------------------------

namespace {

// A wheel whose `member` was changed after RECORD was made: `grow` appends a byte,
// otherwise the last byte is replaced (same size).
fs::path tampered_wheel(const fs::path& dir, const std::string& member, bool grow) {
    WheelBuilder builder;
    builder.edit_members = [&](std::vector<ZipEntry>& members) {
        for (auto& entry : members)
            if (entry.name == member) {
                if (grow) entry.data += "#";
                else entry.data.back() = entry.data.back() == '#' ? '!' : '#';
            }
    };
    fs::create_directories(dir);
    return builder.write(dir);
}

std::string record_line(const Wheel& wheel, const std::string& member) {
    for (const auto& entry : wheel.record())
        if (entry.path == member) return entry.hash_algorithm + "=" + entry.hash_value + "," + std::to_string(entry.size.value_or(0));
    return "";
}

}  // namespace

TEST_CASE("retag_digests: sizes only by default, METADATA and WHEEL hashed; every member hashed with verify") {
    TempDir dir;
    auto wheel = Wheel::open(WheelBuilder{}.write(dir.path()));
    for (bool verify : {false, true}) {
        CAPTURE(verify);
        auto digests = repair::retag_digests(wheel, verify);
        REQUIRE(digests.size() == 5);  // two payload files, METADATA, WHEEL, RECORD
        for (const auto& digest : digests) {
            CAPTURE(digest.member->name);
            bool rewritten = digest.member->name.ends_with("/METADATA") || digest.member->name.ends_with("/WHEEL");
            CHECK(digest.hashed == (verify || rewritten));
            CHECK(digest.size == digest.member->size);
            if (digest.hashed) {
                auto bytes = wheel.archive().read(*digest.member);
                CHECK(digest.sha256 == sha256(bytes));
            }
        }
        CHECK(problems(verify_wheel(wheel, digests)) == "");
    }
}

TEST_CASE("retag: a size-changing tamper is refused by default; a same-size one only with verify, never laundered") {
    TempDir dir;
    auto retag_with = [&](const fs::path& path, bool verify, const fs::path& out) {
        auto wheel = Wheel::open(path);
        return repair::retag_wheel(wheel, repair::retag_digests(wheel, verify), options_for("2.10"), out);
    };
    auto grown = tampered_wheel(dir.path() / "grown", "demo_pkg/core.py", true);
    for (bool verify : {false, true}) {
        auto error = error_from([&] { retag_with(grown, verify, dir.path() / "g"); });
        CHECK(error.problem().find("does not match its RECORD") != std::string::npos);
        CHECK(error.problem().find("demo_pkg/core.py") != std::string::npos);
        CHECK_FALSE(fs::exists(dir.path() / "g"));
    }
    // METADATA is rewritten, so it is hashed even by default.
    auto metadata = tampered_wheel(dir.path() / "metadata", "demo_pkg-1.0.dist-info/METADATA", false);
    CHECK(error_from([&] { retag_with(metadata, false, dir.path() / "m"); }).problem().find("sha256 mismatch") !=
          std::string::npos);

    auto same_size = tampered_wheel(dir.path() / "same", "demo_pkg/core.py", false);
    auto refused = error_from([&] { retag_with(same_size, true, dir.path() / "v"); });
    CHECK(refused.problem().find("demo_pkg/core.py: sha256 mismatch") != std::string::npos);
    CHECK_FALSE(fs::exists(dir.path() / "v"));

    auto result = retag_with(same_size, false, dir.path() / "out");
    auto input = Wheel::open(same_size);
    auto output = Wheel::open(result.output);
    CHECK(record_line(output, "demo_pkg/core.py") == record_line(input, "demo_pkg/core.py"));  // the stale line, kept
    CHECK(problems(verify_wheel(output, scan_members(output.archive()))).find("demo_pkg/core.py: sha256 mismatch") != std::string::npos);
}

TEST_CASE("--pin parsed once: the words, a specifier, the default, and what each asks of the verdict") {
    using repair::PinRequest;
    using Kind = PinRequest::Kind;
    CHECK(repair::parse_pin_request("", false).kind == Kind::minor);
    CHECK(repair::parse_pin_request("", true).kind == Kind::verdict);
    CHECK(repair::parse_pin_request("exact", false).torch_pin() == TorchPin::exact);
    CHECK(repair::parse_pin_request("none", true).torch_pin() == TorchPin::none);
    const auto range = repair::parse_pin_request("range", true);
    CHECK(range.kind == Kind::range);
    CHECK(range.mode() == analysis::PinMode::range);
    CHECK(range.torch_pin() == TorchPin::minor);
    CHECK(repair::parse_pin_request("", true).mode() == analysis::PinMode::truth);
    const auto specifier = repair::parse_pin_request(">= 2.9, <2.11", false);
    CHECK(specifier.kind == Kind::specifier);
    CHECK(specifier.specifier->text() == ">=2.9,<2.11");
    CHECK_THROWS_AS(repair::parse_pin_request("major", false), InputError);
    CHECK_THROWS_AS(repair::parse_pin_request(">=x", false), InputError);
    CHECK_THROWS_AS(repair::parse_pin_request("Minor", false), InputError);
}

TEST_CASE("retag's options as given: what goes only with --torch auto, the pin each gives") {
    using repair::RetagCommand;
    const auto given = [](std::string torch, std::string pin = {}, std::vector<std::string> torch_from = {}) {
        RetagCommand command;
        command.torch = std::move(torch);
        command.pin = repair::parse_pin_request(pin, command.automatic());
        command.torch_from = std::move(torch_from);
        return command;
    };
    const auto refused = [](const RetagCommand& command, std::string_view option) {
        try {
            repair::check_retag_command(command);
        } catch (const InputError& error) {
            return std::string_view(error.what()).find(option) != std::string_view::npos;
        }
        return false;
    };
    CHECK(refused(given("2.10", "range"), "--pin range"));
    CHECK(refused(given("2.10", "", {"/t"}), "--torch-from"));
    CHECK(refused(given("2.x"), "--torch"));
    CHECK_NOTHROW(repair::check_retag_command(given("auto", "range")));
    CHECK_NOTHROW(repair::check_retag_command(given("2.10", ">=2.9,<2.11")));

    const Version torch = Version::parse("2.10");
    const auto minor = repair::retag_options(given("2.10"), torch, nullptr);
    CHECK(minor.pin == TorchPin::minor);
    CHECK_FALSE(minor.pin_specifier);
    CHECK(repair::retag_options(given("2.10", "exact"), torch, nullptr).pin == TorchPin::exact);
    CHECK(repair::retag_options(given("2.10", ">=2.9,<2.11"), torch, nullptr).pin_specifier->text() ==
          SpecifierSet::parse(">=2.9,<2.11").text());
    analysis::TorchRequirement verdict;
    verdict.pin = SpecifierSet::parse(">=2.9.0,<2.10");
    CHECK(repair::retag_options(given("auto"), torch, &verdict).pin_specifier->text() == verdict.pin->text());
    CHECK(repair::retag_options(given("auto", "range"), torch, &verdict).pin_specifier->text() == verdict.pin->text());
    CHECK_FALSE(repair::retag_options(given("auto", "none"), torch, &verdict).pin_specifier);
}
