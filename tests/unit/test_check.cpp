// Unit tests: resolution the way ld.so does it (check.hpp) against the sample
// stand-in torches and hand-made indexes; the symbol index (directory, options,
// index file round trip and damage; the streamed ELF reader is in test_streamed.cpp);
// the torch drift knowledge base.
#include "wheelfix/abi/check.hpp"
#include "wheelfix/abi/drifts.hpp"
#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/zip/archive.hpp"

#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace wheelfix;
namespace fs = std::filesystem;

namespace {

const fs::path kSamples = fs::path(WHEELFIX_TEST_DATA) / ".." / ".." / "sample_wheels" / "dist";
const char* kSglWheel = "sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_x86_64.whl";
const char* kCheck29 = "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib";
const char* kCheck210 = "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jb";
const char* kCheckLog = "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jbPNS0_19CUDAErrorLogCaptureE";

fs::path torch_tree(const char* version) { return kSamples / (std::string("torch-") + version) / "torch"; }

std::vector<std::uint8_t> sgl_extension() {
    auto archive = zip::Archive::open(kSamples / kSglWheel);
    return archive.read(*archive.find("sgl_kernel/sm90/common_ops.abi3.so"));
}

std::vector<std::uint8_t> read_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

abi::ElfCheck check_sample_against(const char* version) {
    const auto bytes = sgl_extension();
    return abi::check_elf("sgl_kernel/sm90/common_ops.abi3.so", elf::ElfFile::parse(bytes),
                          abi::load_index(torch_tree(version)));
}

const abi::Unresolved* find_unresolved(const abi::ElfCheck& check, const std::string& name) {
    for (const auto& unresolved : check.unresolved)
        if (unresolved.name == name) return &unresolved;
    return nullptr;
}

struct TempDir {
    fs::path path;
    TempDir() {
        char pattern[] = "/tmp/wheelfix-check-XXXXXX";
        path = ::mkdtemp(pattern);
    }
    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

void write_text(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

void write_gzip(const fs::path& path, const std::string& text) {
    gzFile file = gzopen(path.c_str(), "wb");
    REQUIRE(file != nullptr);
    gzwrite(file, text.data(), static_cast<unsigned>(text.size()));
    gzclose(file);
}

// A hand-made index: libA needs libB; libB exports the given symbols.
abi::SymbolIndex two_library_index(std::vector<abi::ExportedSymbol> b_symbols) {
    abi::SymbolIndex index;
    index.source = "test";
    abi::LibraryExports a;
    a.file_name = a.soname = "libA.so";
    a.needed = {"libB.so"};
    index.libraries.push_back(std::move(a));
    std::sort(b_symbols.begin(), b_symbols.end(),
              [](const abi::ExportedSymbol& x, const abi::ExportedSymbol& y) { return x.name < y.name; });
    abi::LibraryExports b;
    b.file_name = b.soname = "libB.so";
    b.symbols = std::move(b_symbols);
    index.libraries.push_back(std::move(b));
    return index;
}

abi::ElfImports imports(std::vector<std::string> needed, std::vector<abi::ImportedSymbol> symbols) {
    return {std::move(needed), std::move(symbols)};
}

std::vector<std::string> names_of(const abi::LibraryExports& library) {
    std::vector<std::string> names;
    for (const auto& symbol : library.symbols) names.push_back(symbol.name + "@" + symbol.version);
    return names;
}


}  // namespace

TEST_CASE("the sample extension loads against the torch 2.9 stand-in") {
    const abi::ElfCheck check = check_sample_against("2.9.0");
    CHECK(check.unresolved.empty());
    CHECK(check.missing_libraries.empty());
    CHECK(check.resolved == 5);  // the five torch imports the manifest lists
    CHECK(check.system == 0);    // check_elf is given no judge of what is the system's:
    CHECK(check.elsewhere > 0);  // libc, libstdc++, libcudart are all left outside torch
}

TEST_CASE("against 2.10 c10_cuda_check_implementation is missing, with a forwardable successor") {
    const abi::ElfCheck check = check_sample_against("2.10.0");
    REQUIRE(check.unresolved.size() == 1);
    const abi::Unresolved& miss = check.unresolved[0];
    CHECK(miss.name == kCheck29);
    CHECK(miss.is_torch);
    CHECK(miss.demangled == "c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool)");
    REQUIRE(miss.near_misses.size() == 1);
    CHECK(miss.near_misses[0].name == kCheck210);
    CHECK(miss.near_misses[0].library == "libc10_cuda.so");
    CHECK(miss.near_misses[0].compatibility.forwardable);
    CHECK(miss.near_misses[0].compatibility.appended_zero_params == 0);
}

TEST_CASE("against 2.11 SetDevice is missing too; both successors are forwardable") {
    const abi::ElfCheck check = check_sample_against("2.11.0");
    REQUIRE(check.unresolved.size() == 2);
    const abi::Unresolved* set_device = find_unresolved(check, "_ZN3c104cuda9SetDeviceEa");
    REQUIRE(set_device != nullptr);
    REQUIRE(set_device->near_misses.size() == 1);
    CHECK(set_device->near_misses[0].name == "_ZN3c104cuda9SetDeviceEab");
    CHECK(set_device->near_misses[0].compatibility.appended_zero_params == 1);
    const abi::Unresolved* cuda_check = find_unresolved(check, kCheck29);
    REQUIRE(cuda_check != nullptr);
    REQUIRE(cuda_check->near_misses.size() == 1);
    CHECK(cuda_check->near_misses[0].name == kCheckLog);
    CHECK(cuda_check->near_misses[0].compatibility.forwardable);
}

TEST_CASE("the search scope is NEEDED, breadth-first, by SONAME") {
    const auto index = two_library_index({{"_ZN3c103fooEv", "", true, 2}});
    const abi::ImportedSymbol foo{"_ZN3c103fooEv", "", "", false};
    CHECK(abi::check_imports("x.so", imports({"libA.so"}, {foo}), index).resolved == 1);  // through libA -> libB
    const abi::ElfCheck unreachable = abi::check_imports("x.so", imports({}, {foo}), index);
    CHECK(unreachable.resolved == 0);  // exported, but not in scope: ld.so would not find it
    REQUIRE(unreachable.unresolved.size() == 1);
    CHECK(unreachable.unresolved[0].is_torch);
    const abi::ElfCheck torch_missing =
        abi::check_imports("x.so", imports({"libtorch_python.so", "libcudart.so.13"}, {}), index);
    CHECK(torch_missing.missing_libraries == std::vector<std::string>{"libtorch_python.so"});
    // An index file is a selection of a torch's libraries: what it lacks is not covered, never missing.
    auto partial = index;
    partial.partial = true;
    const abi::ElfCheck uncovered =
        abi::check_imports("x.so", imports({"libtorch_python.so", "libcudart.so.13"}, {{"THPVariable_Wrap", "", "", false}}),
                           partial);
    CHECK(uncovered.missing_libraries.empty());
    CHECK(uncovered.not_covered == std::vector<std::string>{"libtorch_python.so"});
    CHECK((uncovered.unresolved.empty() && uncovered.uncovered_symbols == 1));
}

TEST_CASE("a near miss exported under two versions is listed once (issue 16: printed twice)") {
    // c10::foo(int) wanted; libB defines c10::foo(int, bool) as foo@V1 and foo@@V2.
    const auto index = two_library_index({{"_ZN3c103fooEib", "V1", false, 2}, {"_ZN3c103fooEib", "V2", true, 2}});
    const abi::ImportedSymbol foo{"_ZN3c103fooEi", "", "", false};
    const abi::ElfCheck check = abi::check_imports("x.so", imports({"libA.so"}, {foo}), index);
    REQUIRE(check.unresolved.size() == 1);
    REQUIRE(check.unresolved[0].near_misses.size() == 1);
    CHECK(check.unresolved[0].near_misses[0].name == "_ZN3c103fooEib");
}

TEST_CASE("symbol versions are honoured as glibc's check_match does") {
    const auto index = two_library_index({{"v1", "V1", true, 2}, {"v2", "V2", false, 2}, {"plain", "", true, 2}});
    auto check = [&](abi::ImportedSymbol symbol) {
        return abi::check_imports("x.so", imports({"libA.so"}, {std::move(symbol)}), index);
    };
    CHECK(check({"v1", "V1", "libB.so", false}).resolved == 1);
    CHECK(check({"v1", "", "", false}).resolved == 1);       // unversioned takes the default version
    CHECK(check({"v2", "", "", false}).resolved == 0);       // but not a hidden one
    CHECK(check({"v2", "V2", "libB.so", false}).resolved == 1);  // which a versioned reference may take
    CHECK(check({"plain", "V9", "libB.so", false}).resolved == 1);  // an unversioned definition serves any
    const abi::ElfCheck wrong = check({"v1", "V7", "libB.so", false});
    REQUIRE(wrong.unresolved.size() == 1);
    CHECK(wrong.unresolved[0].version == "V7");
    CHECK(check({"gone", "", "", true}).weak_missing == 1);                 // weak: not an error
    CHECK(check({"gone", "", "", false}).unresolved.size() == 1);           // every NEEDED is in the index
}

TEST_CASE("system is only what the system's libraries define") {
    const auto index = two_library_index({{"plain", "", true, 2}});
    const abi::SystemLibrary system = [](std::string_view name) { return name == "libc.so.6" || name == "libm.so.6"; };
    auto check = [&](std::vector<std::string> needed, abi::ImportedSymbol symbol) {
        return abi::check_imports("x.so", imports(std::move(needed), {std::move(symbol)}), index, nullptr, system);
    };
    const abi::ElfCheck glibc = check({"libA.so", "libc.so.6"}, {"memcpy", "GLIBC_2.14", "libc.so.6", false});
    CHECK((glibc.system == 1 && glibc.elsewhere == 0));  // versioned against a system library
    const abi::ElfCheck cudart =
        check({"libA.so", "libc.so.6", "libcudart.so.12"}, {"cudaMalloc", "libcudart.so.12", "libcudart.so.12", false});
    CHECK((cudart.system == 0 && cudart.elsewhere == 1));  // NVIDIA's runtime is not the system's
    const abi::ElfCheck libm = check({"libA.so", "libm.so.6"}, {"gone", "", "", false});
    CHECK((libm.system == 1 && libm.elsewhere == 0));  // may come from libm, the only library outside
    const abi::ElfCheck private_lib = check({"libA.so", "libm.so.6", "libprivate.so"}, {"gone", "", "", false});
    CHECK((private_lib.system == 0 && private_lib.elsewhere == 1));  // may come from libprivate.so
    const abi::ElfCheck python = check({"libA.so", "libc.so.6"}, {"PyLong_FromLong", "", "", false});
    CHECK((python.system == 0 && python.elsewhere == 1));  // the interpreter's
    const abi::ElfCheck thp = check({"libA.so", "libc.so.6"}, {"THPVariable_Wrap", "", "", false});
    CHECK((thp.system == 0 && thp.unresolved.size() == 1 && thp.unresolved[0].is_torch));  // torch's, never the system's
    // Without a judge of what is the system's, nothing is counted as the system's.
    const abi::ElfCheck unjudged = abi::check_imports("x.so", imports({"libA.so", "libc.so.6"},
                                                                      {{"memcpy", "GLIBC_2.14", "libc.so.6", false}}), index);
    CHECK((unjudged.system == 0 && unjudged.elsewhere == 1));
}

TEST_CASE("an export under another version is a near miss") {
    const auto index = two_library_index({{kCheck29, "TORCH_2", true, 2}});
    const abi::ElfCheck check =
        abi::check_imports("x.so", imports({"libA.so"}, {{kCheck29, "TORCH_1", "libB.so", false}}), index);
    REQUIRE(check.unresolved.size() == 1);
    REQUIRE(check.unresolved[0].near_misses.size() == 1);
    CHECK(check.unresolved[0].near_misses[0].compatibility.reason.find("exported as " + std::string(kCheck29) +
                                                                        "@@TORCH_2, needed @TORCH_1") !=
          std::string::npos);
}

TEST_CASE("a torch directory: version.py, SONAMEs, NEEDED, sorted exports") {
    const abi::SymbolIndex index = abi::load_index(torch_tree("2.10.0"));
    CHECK(index.torch_version == "2.10.0+cu130");
    CHECK(index.cuda_version == "13.0");
    CHECK(index.label() == "2.10.0+cu130");
    REQUIRE(index.libraries.size() == 4);
    const abi::LibraryExports* cuda = index.find_library("libc10_cuda.so");
    REQUIRE(cuda != nullptr);
    CHECK(cuda->needed.front() == "libc10.so");
    CHECK(abi::find_symbol(*cuda, kCheck210).size() == 1);
    CHECK(abi::find_symbol(*cuda, kCheck29).empty());
    CHECK(std::is_sorted(cuda->symbols.begin(), cuda->symbols.end(),
                         [](const auto& a, const auto& b) { return a.name < b.name; }));
    // site-packages form: the directory holding torch/.
    CHECK(abi::load_index(torch_tree("2.10.0").parent_path()).libraries.size() == 4);
}

TEST_CASE("version.py in both of torch's forms") {
    TempDir dir;
    fs::create_directory(dir.path / "lib");
    fs::copy_file(torch_tree("2.9.0") / "lib" / "libc10.so", dir.path / "lib" / "libc10.so");
    write_text(dir.path / "version.py", "__version__ = \"2.4.1+cu121\"\ncuda_version = 'x'\ncuda = '12.1'\n");
    auto index = abi::load_index(dir.path);
    CHECK(index.torch_version == "2.4.1+cu121");
    CHECK(index.cuda_version == "12.1");
    write_text(dir.path / "version.py", "__version__ = '2.9.1+cpu'\ncuda: Optional[str] = None\n");
    index = abi::load_index(dir.path);
    CHECK(index.torch_version == "2.9.1+cpu");
    CHECK(index.cuda_version.empty());
    CHECK(index.label() == "2.9.1+cpu");
}

TEST_CASE("IndexOptions: globs and the NEEDED closure of roots") {
    abi::IndexOptions globs;
    globs.library_globs = {"libc10*"};
    CHECK(abi::load_index(torch_tree("2.9.0"), globs).libraries.size() == 2);
    abi::IndexOptions roots;
    roots.roots = {"libtorch_cuda.so"};
    CHECK(abi::load_index(torch_tree("2.9.0"), roots).libraries.size() == 4);  // cuda -> cpu, c10_cuda, c10
    roots.roots = {"libc10_cuda.so", "libcudart.so.13"};
    CHECK(abi::load_index(torch_tree("2.9.0"), roots).libraries.size() == 2);
    abi::IndexOptions closure;
    closure.library_globs = {"libtorch_cpu.so"};
    closure.with_dependencies = true;  // libtorch_cpu.so needs libc10.so
    const auto with_needed = abi::load_index(torch_tree("2.9.0"), closure);
    REQUIRE(with_needed.libraries.size() == 2);
    CHECK(with_needed.libraries[0].file_name == "libtorch_cpu.so");
    CHECK(with_needed.libraries[1].file_name == "libc10.so");
}

TEST_CASE("an index file round-trips, escapes odd names and is deterministic") {
    TempDir dir;
    abi::SymbolIndex index = abi::load_index(torch_tree("2.11.0"));
    index.libraries[0].symbols.push_back({"zz odd@name%", "VER 1", false, 1});
    abi::save_index(index, dir.path / "a.idx");
    abi::save_index(index, dir.path / "b.idx");
    CHECK(read_bytes(dir.path / "a.idx") == read_bytes(dir.path / "b.idx"));
    const abi::SymbolIndex loaded = abi::load_index(dir.path / "a.idx");
    CHECK(loaded.torch_version == index.torch_version);
    CHECK(loaded.cuda_version == index.cuda_version);
    CHECK(loaded.source == index.source);
    REQUIRE(loaded.libraries.size() == index.libraries.size());
    for (std::size_t i = 0; i < index.libraries.size(); ++i) {
        CHECK(loaded.libraries[i].file_name == index.libraries[i].file_name);
        CHECK(loaded.libraries[i].soname == index.libraries[i].soname);
        CHECK(loaded.libraries[i].needed == index.libraries[i].needed);
        CHECK(names_of(loaded.libraries[i]) == names_of(index.libraries[i]));
    }
    const auto& odd = loaded.libraries[0].symbols.back();
    CHECK(odd.name == "zz odd@name%");
    CHECK(odd.version == "VER 1");
    CHECK_FALSE(odd.default_version);
    CHECK(odd.type == 1);
}

TEST_CASE("damaged or foreign index files are InputErrors") {
    TempDir dir;
    auto fails_with = [&](const std::string& text, const std::string& expected, bool compress = true) {
        const fs::path path = dir.path / "x.idx";
        if (compress) write_gzip(path, text);
        else write_text(path, text);
        try {
            abi::load_index(path);
            FAIL("loaded: " << text);
        } catch (const InputError& error) {
            CHECK_MESSAGE(std::string(error.what()).find(expected) != std::string::npos, std::string(error.what()));
        }
    };
    fails_with("wheelfix-symbol-index 2\nend\n", "unsupported index format");
    fails_with("wheelfix-symbol-index 1\nlibrary libx.so\nsymbols 3\nF a\n", "truncated");
    fails_with("wheelfix-symbol-index 1\nlibrary libx.so\nsymbols 2\nF b\nF a\nend\n", "not sorted");
    fails_with("wheelfix-symbol-index 1\nlibrary libx.so\nsymbols 1\nQ a\nend\n", "bad symbol type");
    fails_with("wheelfix-symbol-index 1\nsoname libx.so\nend\n", "before any 'library'");
    fails_with("wheelfix-symbol-index 1\nlibrary libx.so\nsymbols 99999999999\nend\n", "symbol count");
    fails_with("wheelfix-symbol-index 1\n", "no 'end'");
    fails_with("\x1f\x8b\x08garbage", "damaged or truncated gzip", false);
    fails_with("hello", "not a torch directory, a wheel or a wheelfix symbol index", false);
    // A plain-text index is accepted as is.
    write_text(dir.path / "plain.idx", "wheelfix-symbol-index 1\ntorch 9.9\nlibrary libx.so\nsymbols 1\nF a@@V\nend\n");
    const auto plain = abi::load_index(dir.path / "plain.idx");
    CHECK(plain.torch_version == "9.9");
    CHECK(plain.libraries.at(0).symbols.at(0).version == "V");
}

TEST_CASE("the embedded drift knowledge base parses and every drift is forwardable") {
    const auto& drifts = abi::known_drifts();
    REQUIRE(drifts.size() >= 4);
    for (const abi::Drift& drift : drifts) {
        CAPTURE(drift.symbol);
        const auto old_signature = abi::parse_signature(drift.symbol);
        const auto new_signature = abi::parse_signature(drift.successor);
        REQUIRE(old_signature);
        REQUIRE(new_signature);
        CHECK(abi::classify(*old_signature, *new_signature).forwardable);
        CHECK_FALSE(drift.source.empty());
        CHECK_FALSE(drift.since.empty());
    }
    const auto for_check = abi::drifts_for(kCheck29);
    REQUIRE(for_check.size() == 2);
    CHECK(for_check[0]->successor == kCheck210);
    CHECK(for_check[0]->since == "2.10.0");
    CHECK(for_check[0]->source.starts_with("c10/cuda/CUDAException.h"));
    CHECK(abi::drifts_for("_ZN3c104cuda9SetDeviceEa").size() == 1);
}

TEST_CASE("drift files with mistakes are refused with the line") {
    auto refuses = [](const std::string& text, const std::string& expected) {
        try {
            abi::parse_drifts(text, "my.drifts");
            FAIL("accepted: " << text);
        } catch (const InputError& error) {
            CHECK_MESSAGE(std::string(error.what()).find(expected) != std::string::npos, std::string(error.what()));
        }
    };
    refuses("symbol: _Z1fi\nsuccessor: _Z1fj\nsince: 1\n", "line 3: entry ending here lacks 'source'");
    refuses("symbol: _Z1fi\nsymbol: _Z1fi\n", "line 2: 'symbol' given twice");
    refuses("# c\nsymbl: _Z1fi\n", "line 2: unknown key 'symbl'");
    refuses("symbol: f\nsuccessor: g\nsince: 1\nsource: x\n", "mangled C++ names");
    const auto two = abi::parse_drifts("symbol: _Z1fi\nsuccessor: _Z1fj\nsince: 1\nsource: x\n\n# gap\n\n"
                                       "symbol: _Z1gi\nsuccessor: _Z1gj\nsince: 2\nsource: y\nnote: n\n",
                                       "two");
    REQUIRE(two.size() == 2);
    CHECK(two[1].note == "n");
}
