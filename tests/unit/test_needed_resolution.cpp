// Unit tests: ld.so.conf parsing and the NEEDED resolver (analysis/needed_resolution.hpp)
// against a fake root built from the repo's ELF fixtures.
#include "wheelfix/analysis/needed_resolution.hpp"
#include "wheelfix/policy/library_classes.hpp"
#include "wheelfix/util/error.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace wheelfix;
namespace fs = std::filesystem;

namespace {

const fs::path kElf = fs::path(WHEELFIX_TEST_DATA) / "elf";

struct FakeRoot {
    fs::path path;
    FakeRoot() {
        char pattern[] = "/tmp/wheelfix-resolve-XXXXXX";
        path = ::mkdtemp(pattern);
    }
    ~FakeRoot() {
        std::error_code ignored;
        fs::permissions(path / "opt/locked/liblocked.so.1", fs::perms::owner_all, ignored);
        fs::remove_all(path, ignored);
    }
    fs::path put_text(const std::string& relative, const std::string& text) const {
        fs::create_directories((path / relative).parent_path());
        std::ofstream(path / relative, std::ios::binary) << text;
        return path / relative;
    }
    fs::path put_copy(const std::string& relative, const fs::path& from) const {
        fs::create_directories((path / relative).parent_path());
        fs::copy_file(from, path / relative, fs::copy_options::overwrite_existing);
        return path / relative;
    }
};

analysis::ElfReport report(std::string name, std::vector<std::string> needed, std::string machine = "x86_64",
                           std::string elf_class = "ELF64") {
    analysis::ElfReport r;
    r.name = std::move(name);
    r.needed = std::move(needed);
    r.machine = std::move(machine);
    r.elf_class = std::move(elf_class);
    return r;
}

const analysis::ResolvedNeed& need_named(const analysis::ElfNeeds& object, const std::string& name) {
    for (const auto& need : object.needs)
        if (need.name == name) return need;
    FAIL("no need named " << name);
    return object.needs.front();
}

}  // namespace

TEST_CASE("ld.so.conf: include globs, relative includes, comments, hwcap, loops, separators") {
    FakeRoot root;
    root.put_text("etc/ld.so.conf", "# the system's\ninclude /etc/ld.so.conf.d/*.conf\n/opt/first  # after\nhwcap 0 nosegneg\n");
    root.put_text("etc/ld.so.conf.d/a.conf", "/opt/a:/opt/b,/opt/c/\ninclude more/*.conf\n");
    root.put_text("etc/ld.so.conf.d/more/m.conf", "/opt/more\ninclude /etc/ld.so.conf\n");  // a loop back: read once
    root.put_text("etc/ld.so.conf.d/z.conf", "/opt/z\n/opt/a\nrelative/dir\n");
    auto dirs = analysis::read_ld_so_conf(root.path);
    CHECK(dirs == std::vector<std::string>{"/opt/a", "/opt/b", "/opt/c", "/opt/more", "/opt/z", "/opt/first"});
    CHECK(analysis::read_ld_so_conf(root.path / "nowhere").empty());
}

TEST_CASE("ld.so.conf: an include that names itself ends") {
    FakeRoot root;
    root.put_text("etc/ld.so.conf", "include ld.so.conf\n/opt/x\n");
    CHECK(analysis::read_ld_so_conf(root.path) == std::vector<std::string>{"/opt/x"});
}

TEST_CASE("default directories follow the class and machine") {
    auto x86 = analysis::default_directories("ELF64", "x86_64");
    CHECK(x86 == std::vector<std::string>{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"});
    auto i686 = analysis::default_directories("ELF32", "i686");
    CHECK(i686.front() == "/lib/i386-linux-gnu");
    CHECK(std::find(i686.begin(), i686.end(), "/lib64") == i686.end());
}

TEST_CASE("installed paths: .data/platlib and purelib install at the root") {
    CHECK(analysis::installed_path("pkg/x.so") == "pkg/x.so");
    CHECK(analysis::installed_path("pkg-1.0.data/platlib/pkg/x.so") == "pkg/x.so");
    CHECK(analysis::installed_path("pkg-1.0.data/purelib/y.so") == "y.so");
    CHECK(!analysis::installed_path("pkg-1.0.data/scripts/tool").has_value());
}

TEST_CASE("library classes: the data file parses and names what it lists") {
    const auto& classes = policy::library_classes();
    using policy::NamedClass;
    CHECK(policy::classify_name(classes, "libc.so.6", false).named == NamedClass::system);
    CHECK(policy::classify_name(classes, "libc.so.6", true).named == NamedClass::none);  // musl's is libc.so
    CHECK(policy::classify_name(classes, "libc.so", true).named == NamedClass::system);
    CHECK(policy::classify_name(classes, "libmvec.so.1", false).rule->since_tag == "manylinux_2_24");
    CHECK(policy::classify_name(classes, "libcuda.so.1", false).named == NamedClass::driver);
    CHECK(policy::classify_name(classes, "libnvidia-ml.so.1", false).named == NamedClass::driver);
    CHECK(policy::classify_name(classes, "libtorch_cuda.so", false).named == NamedClass::torch);
    CHECK(policy::classify_name(classes, "libc10.so", false).named == NamedClass::torch);
    auto cudart = policy::classify_name(classes, "libcudart.so.13", false);
    REQUIRE(cudart.named == NamedClass::nvidia);
    CHECK(policy::distribution(*cudart.rule, 12) == "nvidia-cuda-runtime-cu12");
    CHECK(policy::distribution(*cudart.rule, 13) == "nvidia-cuda-runtime");
    CHECK(policy::classify_name(classes, "libfoo.so.1", false).named == NamedClass::none);
    CHECK_THROWS_AS(policy::parse_library_classes("system libx.so.1\n", "t"), InputError);
    CHECK_THROWS_AS(policy::parse_library_classes("weird libx.so.1\n", "t"), InputError);
}

TEST_CASE("tag_allowing: a system library raises the tag to the policy that allows it") {
    CHECK(policy::tag_allowing("manylinux_2_5", {"libc.so.6", "libmvec.so.1", "libfoo.so.1"}, "x86_64", false) ==
          "manylinux_2_24");
    CHECK(policy::tag_allowing("manylinux_2_5", {"libexpat.so.1"}, "x86_64", false) == "manylinux_2_12");
    CHECK(policy::tag_allowing("manylinux_2_28", {"libmvec.so.1", "libexpat.so.1"}, "x86_64", false) == "manylinux_2_28");
    CHECK(policy::tag_allowing("", {"libmvec.so.1"}, "x86_64", false).empty());
    CHECK(policy::tag_allowing("musllinux_1_1", {"libc.so", "libmvec.so.1"}, "x86_64", true) == "musllinux_1_1");
}

TEST_CASE("resolver: ld.so's order, the classes, skips and problems") {
    FakeRoot root;
    root.put_text("etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
    root.put_text("etc/ld.so.conf.d/opt.conf", "/opt/conf\n");  // as the system sees it
    // A graft found through ld.so.conf; an aarch64 library of the same name earlier
    // on --ldpaths is skipped, the x86_64 one in the default directory is taken.
    root.put_copy("opt/conf/libplain.so", kElf / "libplain.so");
    root.put_copy("ldpaths/libversioned.so.1", kElf / "libversioned-aarch64.so");
    root.put_copy("usr/lib/x86_64-linux-gnu/libversioned.so.1", kElf / "libversioned.so");
    root.put_text("ldpaths/libtext.so.1", "INPUT(-lfoo)\n");
    fs::create_symlink("libloop.so.1", root.path / "ldpaths/libloop.so.1");
    auto locked = root.put_copy("opt/locked/liblocked.so.1", kElf / "libplain.so");
    fs::permissions(locked, fs::perms::none);
    bool can_read_anyway = ::access(locked.c_str(), R_OK) == 0;  // root reads everything

    auto ext = report("pkg/sub/ext.so", {"libinwheel.so", "libplain.so", "libversioned.so.1", "libc.so.6",
                                         "libtorch_cpu.so", "libcudart.so.13", "libcuda.so.1", "libnothere.so.9",
                                         "libtext.so.1", "libloop.so.1", "libexcluded.so.2"});
    ext.runpath = "$ORIGIN/../../pkg.libs:$ORIGIN/../../../outside";
    auto inwheel = report("pkg.libs/libinwheel.so", {"libc.so.6"});
    std::vector<analysis::WheelElf> elves{{"pkg/sub/ext.so", "pkg/sub/ext.so", &ext},
                                          {"pkg-1.0.data/platlib/pkg.libs/libinwheel.so", "pkg.libs/libinwheel.so", &inwheel}};
    analysis::SearchContext context;
    context.root = root.path;
    context.ldpaths = {(root.path / "ldpaths").string()};
    context.exclude = {"libexcl*"};
    auto result = analysis::resolve_needed(elves, {}, context);
    REQUIRE(result.members.size() == 2);
    const auto& needs = result.members[0];
    using C = analysis::LibraryClass;

    auto& in = need_named(needs, "libinwheel.so");
    CHECK(in.library_class == C::in_wheel);
    CHECK(in.location == "pkg.libs/libinwheel.so");
    CHECK(in.via == "RUNPATH");

    auto& plain = need_named(needs, "libplain.so");
    CHECK(plain.library_class == C::graft);
    CHECK(plain.via == "ld.so.conf");
    CHECK(plain.location == (root.path / "opt/conf/libplain.so").string());

    auto& versioned = need_named(needs, "libversioned.so.1");
    CHECK(versioned.library_class == C::graft);
    CHECK(versioned.via == "default");
    REQUIRE(!versioned.skipped.empty());
    CHECK(versioned.skipped.back().find("aarch64 ELF64, not x86_64 ELF64") != std::string::npos);

    CHECK(need_named(needs, "libc.so.6").library_class == C::system);
    CHECK(need_named(needs, "libtorch_cpu.so").library_class == C::torch);
    CHECK(need_named(needs, "libtorch_cpu.so").distribution == "torch");
    CHECK(need_named(needs, "libcudart.so.13").library_class == C::nvidia);
    CHECK(need_named(needs, "libcudart.so.13").distribution == "nvidia-cuda-runtime");
    CHECK(need_named(needs, "libcuda.so.1").library_class == C::driver);
    CHECK(need_named(needs, "libexcluded.so.2").library_class == C::excluded);
    CHECK(need_named(needs, "libnothere.so.9").library_class == C::missing);
    auto& text = need_named(needs, "libtext.so.1");
    CHECK(text.library_class == C::missing);
    CHECK(text.problem.find("not an ELF file") != std::string::npos);
    auto& loop = need_named(needs, "libloop.so.1");
    CHECK(loop.library_class == C::missing);
    REQUIRE(!loop.skipped.empty());
    CHECK(loop.skipped.back().find("symlink loop") != std::string::npos);

    // Grafts: libplain's own NEEDED (libz, libc: system), libversioned's (libm, libc).
    REQUIRE(result.grafts.size() == 2);
    CHECK(result.grafts[0].needed_name == "libplain.so");
    CHECK(result.grafts[0].needed_by == std::vector<std::string>{"pkg/sub/ext.so"});
    CHECK(result.grafts[1].soname == "libversioned.so.1");
    CHECK(need_named(result.graft_needs[0], "libz.so.1").library_class == C::system);

    auto missing = result.missing();
    REQUIRE(missing.size() == 3);
    CHECK(missing[0].name == "libnothere.so.9");
    CHECK(missing[0].needed_by == std::vector<std::string>{"pkg/sub/ext.so"});
    // Outside the wheel and not allowed: the grafts and the missing, in the order met;
    // torch, nvidia, driver, system and excluded names are not among them.
    std::vector<std::string> outside;
    for (const auto& library : result.outside_wheel()) outside.push_back(library.name);
    CHECK(outside == std::vector<std::string>{"libplain.so", "libversioned.so.1", "libnothere.so.9", "libtext.so.1",
                                              "libloop.so.1"});
    CHECK(result.outside_wheel()[0].library_class == C::graft);
    CHECK(result.outside_wheel()[0].location == (root.path / "opt/conf/libplain.so").string());
    CHECK(result.names_of(C::graft) == std::vector<std::string>{"libplain.so", "libversioned.so.1"});

    if (!can_read_anyway) {
        auto lonely = report("x.so", {"liblocked.so.1"});
        context.ldpaths = {(root.path / "opt/locked").string()};
        auto locked_result = analysis::resolve_needed({{"x.so", "x.so", &lonely}}, {}, context);
        auto& need = need_named(locked_result.members[0], "liblocked.so.1");
        CHECK(need.library_class == C::missing);
        CHECK(need.skipped.back().find("cannot be read") != std::string::npos);
    }
}

TEST_CASE("resolver: a grafted library's own RUNPATH finds its dependency; wrong class in the wheel is skipped") {
    FakeRoot root;
    root.put_copy("vendor/libwfuser32.so", kElf / "libwfuser32.so");
    root.put_copy("vendor/base/libwfbase32.so.1", kElf / "libwfbase32.so");
    auto ext = report("ext.so", {"libwfuser32.so"}, "i686", "ELF32");
    ext.rpath = "$ORIGIN";
    auto wrong = report("libwfuser32.so", {}, "x86_64", "ELF64");  // same name, other class, in the wheel
    std::vector<analysis::WheelElf> elves{{"ext.so", "ext.so", &ext}, {"libwfuser32.so", "libwfuser32.so", &wrong}};
    analysis::SearchContext context;
    context.root = root.path;
    context.ldpaths = {(root.path / "vendor").string()};
    auto result = analysis::resolve_needed(elves, {}, context);
    auto& user = need_named(result.members[0], "libwfuser32.so");
    CHECK(user.library_class == analysis::LibraryClass::graft);
    CHECK(user.via == "--ldpaths");
    CHECK(user.skipped.front().find("in the wheel") != std::string::npos);
    REQUIRE(result.grafts.size() == 2);
    CHECK(result.grafts[1].needed_name == "libwfbase32.so.1");
    CHECK(need_named(result.graft_needs[0], "libwfbase32.so.1").via == "RUNPATH");
    CHECK(result.grafts[1].needed_by == std::vector<std::string>{"libwfuser32.so"});
}

TEST_CASE("resolver: a non-ELF member where ld.so looks stops the search") {
    FakeRoot root;
    auto ext = report("pkg/ext.so", {"libdata.so.1"});
    ext.runpath = "$ORIGIN";
    auto result = analysis::resolve_needed({{"pkg/ext.so", "pkg/ext.so", &ext}}, {"pkg/libdata.so.1"},
                                           analysis::SearchContext{{}, root.path, {}, false, {}});
    auto& need = need_named(result.members[0], "libdata.so.1");
    CHECK(need.library_class == analysis::LibraryClass::missing);
    CHECK(need.problem.find("not an ELF file") != std::string::npos);
}
