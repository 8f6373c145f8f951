// Unit tests: the torch atlas (abi/atlas.hpp) built from the sample stand-in
// torches — format round trip, sharing, determinism, damage — and the release
// matrix and requirement (analysis/torch_matrix.hpp) of the sample extension.
#include "wheelfix/abi/atlas.hpp"
#include "wheelfix/abi/check.hpp"
#include "wheelfix/analysis/torch_check.hpp"
#include "wheelfix/analysis/torch_matrix.hpp"
#include "wheelfix/analysis/torch_verdict.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/zip/archive.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace wheelfix;
namespace fs = std::filesystem;

namespace {

const fs::path kSamples = fs::path(WHEELFIX_TEST_DATA) / ".." / ".." / "sample_wheels" / "dist";
const char* kSglWheel = "sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_x86_64.whl";
const char* kMember = "sgl_kernel/sm90/common_ops.abi3.so";

// A stand-in torch as `wheelfix index` of its wheel would record it.
abi::SymbolIndex stand_in(const std::string& version, const std::string& tag = "cp312") {
    abi::SymbolIndex index = abi::load_index(kSamples / ("torch-" + version) / "torch");
    index.source = "torch-" + version + "-" + tag + "-" + tag + "-manylinux_2_28_x86_64.whl";
    index.source_sha256 = std::string(64, 'a');
    return index;
}

std::vector<abi::SymbolIndex> stand_ins() { return {stand_in("2.11.0"), stand_in("2.9.0"), stand_in("2.10.0")}; }

std::string read_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

struct TempDir {
    fs::path path;
    TempDir() {
        char pattern[] = "/tmp/wheelfix-atlas-XXXXXX";
        path = ::mkdtemp(pattern);
    }
    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

abi::ElfImports sample_imports() {
    auto archive = zip::Archive::open(kSamples / kSglWheel);
    const auto bytes = archive.read(*archive.find(kMember));
    return abi::imports_of(elf::ElfFile::parse(bytes));
}

std::vector<std::string> symbol_names(const abi::LibraryExports& library) {
    std::vector<std::string> names;
    for (const auto& symbol : library.symbols)
        names.push_back(symbol.name + (symbol.default_version ? "@@" : "@") + symbol.version + ":" +
                        std::to_string(symbol.type));
    return names;
}

}  // namespace

TEST_CASE("an atlas gives back each release's libraries exactly, sharing the symbols they have in common") {
    const abi::Atlas atlas = abi::Atlas::build(stand_ins());
    REQUIRE(atlas.entries().size() == 3);
    const auto releases = atlas.releases();
    REQUIRE(releases.size() == 3);
    CHECK(releases[0].torch_version == stand_in("2.9.0").torch_version);  // ordered by release number
    CHECK(releases[2].torch_version == stand_in("2.11.0").torch_version);
    CHECK(releases[0].arch == "x86_64");
    CHECK(releases[0].python_tags == std::vector<std::string>{"cp312"});
    std::size_t total = 0;
    for (std::size_t i = 0; i < releases.size(); ++i) {
        const abi::SymbolIndex original = stand_in(std::vector<std::string>{"2.9.0", "2.10.0", "2.11.0"}[i]);
        const abi::SymbolIndex back = atlas.index_for(releases[i], "");
        REQUIRE(back.libraries.size() == original.libraries.size());
        for (const abi::LibraryExports& library : original.libraries) {
            const abi::LibraryExports* found = back.find_library(library.file_name);
            REQUIRE(found != nullptr);
            CHECK(found->soname == library.soname);
            CHECK(found->needed == library.needed);
            CHECK(symbol_names(*found) == symbol_names(library));
            total += library.symbols.size();
        }
        CHECK(back.source_sha256 == std::string(64, 'a'));
    }
    CHECK(atlas.symbol_count() < total);  // shared names are stored once
}

TEST_CASE("the atlas file is the same bytes whatever the input order, and loads back equal") {
    TempDir dir;
    abi::Atlas::build(stand_ins()).save(dir.path / "a.gz");
    auto reversed = stand_ins();
    std::reverse(reversed.begin(), reversed.end());
    abi::Atlas::build(reversed).save(dir.path / "b.gz");
    CHECK(read_bytes(dir.path / "a.gz") == read_bytes(dir.path / "b.gz"));
    CHECK(abi::Atlas::is_atlas_file(dir.path / "a.gz"));
    const abi::Atlas loaded = abi::Atlas::load(dir.path / "a.gz");
    loaded.save(dir.path / "c.gz");
    CHECK(read_bytes(dir.path / "a.gz") == read_bytes(dir.path / "c.gz"));
    // An entry taken back out and rebuilt gives the same atlas (user atlases grow this way).
    std::vector<abi::SymbolIndex> entries;
    for (std::uint32_t i = 0; i < loaded.entries().size(); ++i) entries.push_back(loaded.entry_index(i));
    abi::Atlas::build(entries).save(dir.path / "d.gz");
    CHECK(read_bytes(dir.path / "a.gz") == read_bytes(dir.path / "d.gz"));
    CHECK_THROWS_AS(abi::Atlas::build({stand_in("2.9.0"), stand_in("2.9.0")}), InputError);
}

TEST_CASE("a damaged atlas is an InputError, never a crash") {
    TempDir dir;
    abi::Atlas::build(stand_ins()).save(dir.path / "a.gz");
    const std::string good = read_bytes(dir.path / "a.gz");
    CHECK_THROWS_AS(abi::Atlas::parse(good.substr(0, good.size() / 2), "half"), InputError);
    CHECK_THROWS_AS(abi::Atlas::parse("wheelfix-torch-atlas 2\n", "v2"), InputError);
    CHECK_THROWS_AS(abi::Atlas::parse("wheelfix-torch-atlas 1\nentries 99999999999\n", "count"), InputError);
    CHECK_THROWS_AS(abi::Atlas::parse("wheelfix-torch-atlas 1\nentries 0\nlibraries 1\nL 5 a -\n", "entry id"), InputError);
    CHECK_THROWS_AS(abi::Atlas::parse("wheelfix-torch-atlas 1\nentries 1\nt - - - w -\nlibraries 1\nL 0 a -\nsets 1\n"
                                      "3\nsymbols 0\nend\n",
                                      "node id"),
                    InputError);
    // The symbol lines are read on first need: damage there is an InputError then, by
    // either reader (the whole table, or the one-pass selection by name).
    const abi::Atlas damaged = abi::Atlas::parse(
        "wheelfix-torch-atlas 1\nentries 1\nt - - - w -\nlibraries 1\nL 0 a -\nsets 1\n0\nsymbols 1\n4 2 0 abc\nend\n",
        "prefix");
    CHECK_THROWS_AS(damaged.select({{"abc"}, {}}), InputError);
    CHECK_THROWS_AS(damaged.symbol_count(), InputError);
    CHECK_THROWS_AS(abi::Atlas::parse("wheelfix-torch-atlas 1\nentries 1\nt - - - w -\nlibraries 1\nL 0 a -\nsets 1\n"
                                      "0\nsymbols 1\n0 2 0 abc\n", "no end").symbol_count(),
                    InputError);
    const abi::Atlas tiny = abi::Atlas::parse(
        "wheelfix-torch-atlas 1\nentries 1\n2.0.0 - x86_64 cp312 w -\nlibraries 1\nL 0 libtorch.so -\nsets 1\n0\n"
        "symbols 2\n0 2 0 abc\n2 2 0 d\nend\n",
        "tiny");
    // The one-pass selection (nothing parsed yet) and the parsed table's agree.
    const abi::SymbolSelection names{{"abd", "zz", "abc"}, {}};
    CHECK(tiny.select(names).size() == 2);
    const abi::SymbolIndex index = tiny.index_for(tiny.releases().front(), "");
    CHECK(tiny.select(names).size() == 2);
    REQUIRE(index.libraries.size() == 1);
    CHECK(symbol_names(index.libraries[0]) == std::vector<std::string>{"abc@@:2", "abd@@:2"});
}

TEST_CASE("the sample extension's matrix: loads on 2.9 only, so auto pins >=2.9.0,<2.10") {
    const abi::Atlas atlas = abi::Atlas::build(stand_ins());
    const abi::ElfImports imports = sample_imports();
    abi::IndexOptions options;
    options.roots = imports.needed;
    std::vector<analysis::MatrixColumn> columns;
    std::vector<std::vector<abi::ElfCheck>> checks;
    for (const abi::AtlasRelease& release : analysis::select_releases(atlas.releases(), "all", "x86_64")) {
        const abi::SymbolIndex index = atlas.index_for(release, "", options);
        CHECK(index.libraries.size() < 8);  // only the NEEDED closure is materialised
        columns.push_back({release.torch_version, release.cuda_version, release.arch, "", index.source,
                           analysis::cuda_note("cu130", release.cuda_version), "", {}});
        checks.push_back({abi::check_imports(kMember, imports, index)});
    }
    const analysis::TorchMatrix matrix = analysis::build_matrix(columns, checks);
    REQUIRE(matrix.columns.size() == 3);
    CHECK(matrix.column_verdict(0) == analysis::Verdict::ok);
    CHECK(matrix.column_verdict(1) == analysis::Verdict::no);
    CHECK(matrix.column_verdict(2) == analysis::Verdict::no);
    CHECK(matrix.cells[0][1].first_missing.find("c10_cuda_check_implementation") != std::string::npos);
    CHECK(matrix.cells[0][1].near_miss.find("unsigned int") != std::string::npos);
    const analysis::StableAbiUse cpp{{}, {"_ZN3c10..."}};
    const analysis::StableAbiUse stable{{"aoti_torch_abi_version"}, {}};
    const analysis::TorchRequirement requirement = analysis::torch_verdict(matrix, cpp, {});
    CHECK(requirement.specifier == "torch>=2.9.0,<2.10");
    CHECK(requirement.built_for == "2.9.0");
    CHECK_FALSE(requirement.later_unproven);
    CHECK(requirement.contiguous);
    // Stable-ABI style: an open upper bound when the newest loads.
    const analysis::TorchMatrix newest_only = analysis::build_matrix({columns[2]}, {{abi::ElfCheck{}}});
    CHECK(analysis::torch_verdict(newest_only, stable, {}).specifier == "torch>=2.11.0");
    CHECK(analysis::torch_verdict(newest_only, cpp, {}).specifier == "torch>=2.11.0,<2.12");
    CHECK(analysis::torch_verdict(newest_only, cpp, {}).later_unproven);
}

TEST_CASE("the verdict: a C++ extension gets its one minor, a stable one its linkable range, both within the author's") {
    // Five releases; every column's symbols resolve.
    std::vector<analysis::MatrixColumn> columns;
    std::vector<std::vector<abi::ElfCheck>> checks;
    for (const char* version : {"2.8.0+cu128", "2.9.0+cu128", "2.9.1+cu128", "2.10.0+cu128", "2.11.0+cu130"}) {
        columns.push_back({version, "12.8", "x86_64", "", "", "", "", {}});
        checks.push_back({abi::ElfCheck{}});
    }
    const analysis::TorchMatrix matrix = analysis::build_matrix(columns, checks);
    const analysis::StableAbiUse cpp{{}, {"_ZN3c10..."}};
    const analysis::StableAbiUse stable{{"torch_library_impl"}, {}};
    analysis::TorchClaims claims;
    // C++: the lowest release that resolves names the minor.
    CHECK(analysis::torch_verdict(matrix, cpp, claims).specifier == "torch>=2.8.0,<2.9");
    // ... or the local version does.
    claims.built_for = wheel::Version::parse("2.9.1");
    CHECK(analysis::torch_verdict(matrix, cpp, claims).specifier == "torch>=2.9.0,<2.10");
    // The author's exact pin is kept, never widened.
    claims.author = wheel::SpecifierSet::parse("==2.9.1");
    CHECK(analysis::torch_verdict(matrix, cpp, claims).specifier == "torch==2.9.1");
    // --pin range widens to the symbol level, still within the author's range.
    claims.author = wheel::SpecifierSet::parse(">=2.9");
    const auto range = analysis::torch_verdict(matrix, cpp, claims, analysis::PinMode::range);
    CHECK(range.specifier == "torch>=2.9.0,<2.12");
    CHECK(range.symbol_level_only);
    // Stable ABI: the linkable range, floored by the author's.
    claims = {};
    claims.author = wheel::SpecifierSet::parse(">=2.10");
    CHECK(analysis::torch_verdict(matrix, stable, claims).specifier == "torch>=2.10.0");
    // The author's range and the linkable range do not meet: a finding, no pin.
    claims.author = wheel::SpecifierSet::parse("==2.5.0");
    const auto none = analysis::torch_verdict(matrix, stable, claims);
    CHECK_FALSE(none.any);
    CHECK_FALSE(none.pin);
    CHECK(none.finding.find("do not meet") != std::string::npos);
    // Built for a minor none of whose releases resolve: a finding too.
    claims = {};
    claims.built_for = wheel::Version::parse("2.7.0");
    CHECK_FALSE(analysis::torch_verdict(matrix, cpp, claims).any);
}

TEST_CASE("a CUDA runtime major the release's build does not bring bounds the range") {
    std::vector<analysis::MatrixColumn> columns;
    std::vector<std::vector<abi::ElfCheck>> checks;
    for (const char* version : {"2.10.0+cu128", "2.11.0+cu130"}) {
        columns.push_back({version, "", "x86_64", "", "", "", "", {}});
        checks.push_back({abi::ElfCheck{}});
    }
    analysis::TorchMatrix matrix = analysis::build_matrix(columns, checks);
    matrix.cells[0][1].verdict = analysis::Verdict::runtime;  // what check_releases sets for libcudart.so.12 on cu130
    const analysis::StableAbiUse stable{{"torch_library_impl"}, {}};
    CHECK(analysis::torch_verdict(matrix, stable, {}).specifier == "torch>=2.10.0,<2.11");
    const auto needs = analysis::cuda_runtime_needs({"libc.so.6", "libcudart.so.12", "libnvrtc.so.13", "libcufft.so.11"});
    REQUIRE(needs.size() == 2);
    CHECK(needs[0].distribution == "nvidia-cuda-runtime-cu12");
    CHECK(needs[1].major == 13);
}

TEST_CASE("the torch a local version names") {
    auto local = [](const char* version) {
        auto named = analysis::torch_from_local(wheel::Version::parse(version).local_segments());
        return named ? named->public_part() : std::string("-");
    };
    CHECK(local("0.3.21+cu130.torch2.10") == "2.10");
    CHECK(local("1.0+torch2.9.1") == "2.9.1");
    CHECK(local("1.0+pt29cu128") == "2.9");
    CHECK(local("1.0+cu128torch2.8") == "2.8");
    CHECK(local("1.0+pt29") == "2.9");
    CHECK(local("1.0+pt210") == "2.10");
    CHECK(local("1.0+cu128") == "-");
}

TEST_CASE("PEP 440 specifier sets: parse, match, intersect without widening") {
    using wheel::SpecifierSet;
    using wheel::Version;
    CHECK_FALSE(SpecifierSet::try_parse(">=2.9,<"));
    CHECK_FALSE(SpecifierSet::try_parse(">=2.*"));
    CHECK_FALSE(SpecifierSet::try_parse("~=2"));
    CHECK(SpecifierSet::parse(">=2.9, <2.10").text() == ">=2.9,<2.10");
    CHECK(SpecifierSet::parse("==2.9.*").contains(Version::parse("2.9.1+cu128")));
    CHECK_FALSE(SpecifierSet::parse("~=2.9.0").contains(Version::parse("2.10.0")));
    auto meet = [](const char* a, const char* b) {
        auto both = SpecifierSet::parse(a).intersect(SpecifierSet::parse(b));
        return both ? both->text() : std::string("(none)");
    };
    CHECK(meet(">=2.4.0", ">=2.10") == ">=2.10");
    CHECK(meet(">=2.9.0,<2.10", "==2.9.1") == "==2.9.1");
    CHECK(meet(">=2.7.0,<2.13", "==2.9.1") == "==2.9.1");
    CHECK(meet(">=2.4.0,<2.7", "==2.5.0") == "==2.5.0");
    CHECK(meet(">=2.10.0", "<2.10") == "(none)");
    CHECK(meet(">=2.9,<2.10", "==2.10.0") == "(none)");
    CHECK(meet(">=2.9,<2.10", "!=2.9.0") == ">=2.9,<2.10,!=2.9.0");
    CHECK(meet(">=2.9", "") == ">=2.9");
}

TEST_CASE("release selection: all, ranges, lists; what the atlas lacks is named") {
    const auto releases = abi::Atlas::build(stand_ins()).releases();
    CHECK(analysis::select_releases(releases, "all", "x86_64").size() == 3);
    CHECK(analysis::select_releases(releases, ">=2.10", "x86_64").size() == 2);
    CHECK(analysis::select_releases(releases, ">=2.9,<2.11", "x86_64").size() == 2);
    CHECK(analysis::select_releases(releases, "==2.10.*", "x86_64").size() == 1);
    CHECK(analysis::select_releases(releases, "2.11.0,2.9.0", "x86_64").front().torch_version ==
          stand_in("2.9.0").torch_version);
    CHECK_THROWS_AS(analysis::select_releases(releases, "2.8.0", "x86_64"), InputError);
    CHECK_THROWS_AS(analysis::select_releases(releases, ">=3", "x86_64"), InputError);
    CHECK_THROWS_AS(analysis::select_releases(releases, "all", "aarch64"), InputError);
}

TEST_CASE("libtorch_python of a CPython tag the atlas lacks is not covered, never missing") {
    abi::SymbolIndex with_python = stand_in("2.9.0");
    with_python.libraries.push_back({"libtorch_python.so", "libtorch_python.so", {"libtorch.so"},
                                     {{"_ZN5torch6python4initEv", "", true, 2}}, {}, {}});
    abi::SymbolIndex cp313 = with_python;
    cp313.source = "torch-2.9.0-cp313-cp313-manylinux_2_28_x86_64.whl";
    cp313.libraries.back().symbols.front().name = "_ZN5torch6python5init2Ev";
    const abi::Atlas atlas = abi::Atlas::build({with_python, cp313});
    REQUIRE(atlas.releases().size() == 1);
    const abi::AtlasRelease release = atlas.releases().front();
    CHECK(release.python_tags == std::vector<std::string>{"cp312", "cp313"});
    // cp313's libtorch_python is its own; the other libraries are stored once, with the primary.
    const abi::SymbolIndex for_313 = atlas.index_for(release, "cp313");
    REQUIRE(for_313.find_library("libtorch_python.so") != nullptr);
    CHECK(for_313.find_library("libtorch_python.so")->symbols.front().name == "_ZN5torch6python5init2Ev");
    CHECK(for_313.libraries.size() == with_python.libraries.size());
    const abi::SymbolIndex for_310 = atlas.index_for(release, "cp310");
    CHECK(for_310.find_library("libtorch_python.so") == nullptr);
    CHECK(for_310.not_covered == std::vector<std::string>{"libtorch_python.so"});
    const abi::ElfImports imports{{"libtorch_python.so", "libc10.so"}, {{"_ZN5torch6python4initEv", "", "", false}}};
    const abi::ElfCheck check = abi::check_imports("ext.so", imports, for_310);
    CHECK(check.missing_libraries.empty());
    CHECK(check.unresolved.empty());
    CHECK(check.not_covered == std::vector<std::string>{"libtorch_python.so"});
    CHECK(analysis::cell_of(check).verdict == analysis::Verdict::not_covered);
    CHECK(abi::check_imports("ext.so", imports, atlas.index_for(release, "cp312")).unresolved.empty());
}

TEST_CASE("atlas inputs collected one at a time keep only what build keeps, and build the same atlas") {
    // One release in three CPython tags; cp313's wheel ships one library more, so it is
    // the primary whatever the order, and the others keep only libtorch_python.
    std::vector<abi::SymbolIndex> tags;
    for (const std::string tag : {"cp311", "cp312", "cp313"}) {
        abi::SymbolIndex index = stand_in("2.9.0", tag);
        index.libraries.push_back({"libtorch_python.so", "libtorch_python.so", {"libtorch.so"},
                                   {{"_ZN5torch6python4initEv", "", true, 2}, {"wf_" + tag, "", true, 2}}, {}, {}});
        if (tag == "cp313") index.libraries.push_back({"libshm.so", "libshm.so", {}, {{"shm_x", "", true, 2}}, {}, {}});
        tags.push_back(std::move(index));
    }
    TempDir dir;
    abi::Atlas::build(tags).save(dir.path / "all.gz");
    const std::string expected = read_bytes(dir.path / "all.gz");
    for (const std::vector<int>& order : {std::vector<int>{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {0, 2, 1}}) {
        abi::AtlasInputs inputs;
        for (int i : order) inputs.add(tags[static_cast<std::size_t>(i)]);
        abi::Atlas::build(inputs).save(dir.path / "one.gz");
        CHECK(read_bytes(dir.path / "one.gz") == expected);
    }
    const abi::Atlas atlas = abi::Atlas::load(dir.path / "all.gz");
    const abi::AtlasRelease release = atlas.releases().front();
    CHECK(atlas.entries()[release.primary_entry].python_tag == "cp313");
    CHECK(atlas.index_for(release, "cp311").find_library("libshm.so") != nullptr);  // the primary's, shared
    CHECK(atlas.index_for(release, "cp311").find_library("libtorch_python.so")->symbols.back().name == "wf_cp311");
}

TEST_CASE("stable C ABI imports are told apart from C++ ones") {
    const abi::ElfImports stable{{"libtorch.so"}, {{"aoti_torch_empty_strided", "", "", false},
                                                    {"torch_call_dispatcher", "", "", false},
                                                    {"memcpy", "GLIBC_2.14", "libc.so.6", false}}};
    const abi::ElfImports mixed{{"libc10.so"}, {{"aoti_torch_get_device_type", "", "", false},
                                               {"_ZN3c106detail14torchCheckFailEPKcS2_jRKSs", "", "", false}}};
    CHECK(analysis::stable_abi_use({&stable}).stable_only());
    CHECK(analysis::stable_abi_use({&stable}).stable.size() == 2);
    CHECK_FALSE(analysis::stable_abi_use({&stable, &mixed}).stable_only());
    CHECK(analysis::stable_abi_use({&stable, &mixed}).cpp.size() == 1);
}

TEST_CASE("check report: releases grouped by what they miss, and where a missing symbol first resolves") {
    auto torch = [](std::string label, std::vector<std::string> missing) {
        analysis::TorchResult result;
        result.label = std::move(label);
        for (auto& name : missing) {
            analysis::GroupedSymbol group;
            group.symbol.name = std::move(name);
            result.unresolved.push_back(std::move(group));
        }
        return result;
    };
    analysis::CheckReport report;
    report.torches = {torch("2.7.1", {"_Za", "_Zb"}), torch("2.8.0", {"_Za", "_Zb"}), torch("2.9.1", {"_Zb"}),
                      torch("2.10.0", {}), torch("2.11.0", {})};
    using Run = std::pair<std::size_t, std::size_t>;
    CHECK(report.same_miss_runs() == std::vector<Run>{{0, 1}, {2, 2}, {3, 4}});
    CHECK(report.first_resolving(1, "_Za") == "2.9.1");
    CHECK(report.first_resolving(2, "_Zb") == "2.10.0");
    CHECK(report.first_resolving(4, "_Zb").empty());
}

TEST_CASE("torch matrix: adjacent column runs, distinct misses and the wheel's column summary") {
    using Run = std::pair<std::size_t, std::size_t>;
    CHECK(analysis::adjacent_runs({0, 1, 2, 5}) == std::vector<Run>{{0, 2}, {5, 5}});
    CHECK(analysis::adjacent_runs({}).empty());
    CHECK(analysis::public_version("2.9.1+cu128") == "2.9.1");
    CHECK(analysis::public_version("2.10.0") == "2.10.0");

    analysis::TorchMatrix matrix;
    matrix.members = {"a.so", "b.so"};
    matrix.columns.resize(3);
    analysis::MatrixCell ok;
    analysis::MatrixCell missing;
    missing.verdict = analysis::Verdict::no;
    missing.missing = 2;
    missing.first_missing = "f()";
    analysis::MatrixCell runtime;
    runtime.verdict = analysis::Verdict::runtime;
    runtime.first_missing = "libcudart.so.12";
    runtime.runtime_note = "needs nvidia-cuda-runtime-cu12 beside torch";
    matrix.cells = {{missing, missing, ok}, {ok, runtime, ok}};
    const auto misses = matrix.misses();
    REQUIRE(misses.size() == 2);
    CHECK(misses[0].member == "a.so");
    CHECK(misses[0].what == "f()");
    CHECK(misses[0].columns == std::vector<std::size_t>{0, 1});
    CHECK(misses[1].what == runtime.runtime_note);  // a runtime cell names what to install
    CHECK(matrix.column_summary(1).verdict == analysis::Verdict::no);
    CHECK(matrix.column_summary(1).missing == 2);
    CHECK(matrix.column_summary(2).verdict == analysis::Verdict::ok);
}

namespace {

// One release of one library exporting `names`, as `wheelfix index` would record it.
abi::Atlas one_library_atlas(std::vector<std::string> names) {
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    abi::SymbolIndex index;
    index.source = "torch-2.0.0-cp312-cp312-manylinux_2_28_x86_64.whl";
    index.torch_version = "2.0.0";
    abi::LibraryExports library{"libtorch.so", "libtorch.so", {}, {}, {}, {}};
    for (const std::string& name : names) library.symbols.push_back({name, "", true, 2});
    index.libraries.push_back(std::move(library));
    return abi::Atlas::build({index});
}

std::vector<std::string> selected_names(const abi::Atlas& atlas, const abi::SymbolSelection& selection) {
    const abi::Atlas::Subset subset = atlas.select(selection);
    const abi::SymbolIndex index = atlas.index_for(atlas.releases().front(), "", {}, &subset);
    std::vector<std::string> names;
    for (const abi::ExportedSymbol& symbol : index.libraries.front().symbols) names.push_back(symbol.name);
    return names;
}

}  // namespace

TEST_CASE("an atlas selection keeps exactly the names asked and the names holding a token, as find says") {
    // Tokens inside longer numbers ("14sizeXXXXXXXXXX" holds "4size"), numbers of several
    // digits, a name that needs escaping, and pseudo-random names over a small alphabet.
    std::vector<std::string> names{"_ZN3c104sizeEv", "_Z14sizeXXXXXXXXXX", "_Z112abcdefghijkl", "_Z4siz",
                                   "a 4size@x%", "_ZN2at6Tensor4sizeEl", "_Z104size", "4size"};
    std::uint32_t state = 12345;
    const auto next = [&] { return state = state * 1103515245u + 12345u, (state >> 16) & 0x7fff; };
    const std::string alphabet = "0123456789abcsize_Z %@";
    for (int i = 0; i < 3000; ++i) {
        std::string name;
        for (std::uint32_t n = 1 + next() % 24; n > 0; --n) name += alphabet[next() % alphabet.size()];
        names.push_back(name);
    }
    const std::vector<std::string> tokens{"4size", "12abcdefghijkl", "1a", "3ab_", "10aaaaaaaaaa", "2Z "};
    for (const bool parsed : {false, true}) {
        const abi::Atlas atlas = one_library_atlas(names);
        if (parsed) CHECK(atlas.symbol_count() > 0);  // the table built: select() reads it instead of the text
        const std::vector<std::string> got = selected_names(atlas, {{"_Z4siz", "a 4size@x%", "not exported"}, tokens});
        const abi::SymbolIndex whole = atlas.index_for(atlas.releases().front(), "");
        std::vector<std::string> expected;
        for (const abi::ExportedSymbol& symbol : whole.libraries.front().symbols)
            if (std::any_of(tokens.begin(), tokens.end(),
                            [&](const std::string& token) { return symbol.name.find(token) != std::string::npos; }) ||
                symbol.name == "_Z4siz" || symbol.name == "a 4size@x%")
                expected.push_back(symbol.name);
        CHECK(expected.size() > 20);
        CHECK(got == expected);
        CHECK(selected_names(atlas, {{}, {}}).empty());
    }
}

TEST_CASE("a release index of only what the imports consult checks them as the whole index does") {
    const abi::Atlas atlas = abi::Atlas::build(stand_ins());
    const abi::ElfImports imports = sample_imports();
    const abi::Atlas::Subset subset = atlas.select(abi::consulted_by({&imports}));
    const abi::Atlas other = abi::Atlas::build({stand_in("2.9.0")});
    CHECK_THROWS_AS(other.index_for(other.releases().front(), "", {}, &subset), std::logic_error);
    abi::IndexOptions options;
    options.roots = imports.needed;
    std::size_t near_misses = 0;
    for (const abi::AtlasRelease& release : atlas.releases()) {
        const abi::SymbolIndex whole = atlas.index_for(release, "", options);
        const abi::SymbolIndex part = atlas.index_for(release, "", options, &subset);
        REQUIRE(part.libraries.size() == whole.libraries.size());
        std::size_t whole_symbols = 0, part_symbols = 0;
        for (std::size_t i = 0; i < whole.libraries.size(); ++i) {
            CHECK(part.libraries[i].file_name == whole.libraries[i].file_name);
            whole_symbols += whole.libraries[i].symbols.size();
            part_symbols += part.libraries[i].symbols.size();
        }
        CHECK(part_symbols <= whole_symbols);
        abi::SignatureMemo memo;
        const abi::ElfCheck a = abi::check_imports(kMember, imports, whole);
        const abi::ElfCheck b = abi::check_imports(kMember, imports, part, nullptr, {}, &memo);
        CHECK(a.resolved == b.resolved);
        CHECK(a.system == b.system);
        CHECK(a.weak_missing == b.weak_missing);
        CHECK(a.missing_libraries == b.missing_libraries);
        REQUIRE(a.unresolved.size() == b.unresolved.size());
        for (std::size_t i = 0; i < a.unresolved.size(); ++i) {
            CHECK(a.unresolved[i].name == b.unresolved[i].name);
            CHECK(a.unresolved[i].demangled == b.unresolved[i].demangled);
            REQUIRE(a.unresolved[i].near_misses.size() == b.unresolved[i].near_misses.size());
            for (std::size_t k = 0; k < a.unresolved[i].near_misses.size(); ++k) {
                CHECK(a.unresolved[i].near_misses[k].name == b.unresolved[i].near_misses[k].name);
                CHECK(a.unresolved[i].near_misses[k].library == b.unresolved[i].near_misses[k].library);
                CHECK(a.unresolved[i].near_misses[k].compatibility.reason ==
                      b.unresolved[i].near_misses[k].compatibility.reason);
            }
            near_misses += a.unresolved[i].near_misses.size();
        }
        // Several members against one index: each as alone, a shared miss explained once.
        const auto both = abi::check_imports({{"one.so", &imports}, {"two.so", &imports}}, part, nullptr, {}, &memo);
        REQUIRE(both.size() == 2);
        CHECK(both[1].member == "two.so");
        CHECK(both[1].unresolved.size() == b.unresolved.size());
    }
    CHECK(near_misses > 0);  // the comparison covered near misses, not only resolution
}
