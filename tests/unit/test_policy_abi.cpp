// Unit tests: manylinux policy table and tag logic, demangling, torch namespaces,
// RPATH entry classification.
#include "wheelfix/abi/demangle.hpp"
#include "wheelfix/analysis/elf_report.hpp"
#include "wheelfix/policy/manylinux.hpp"

#include <doctest/doctest.h>

using namespace wheelfix;

TEST_CASE("dotted versions compare numerically") {
    CHECK(policy::compare_dotted("2.2.5", "2.17") < 0);
    CHECK(policy::compare_dotted("3.4.30", "3.4.9") > 0);
    CHECK(policy::compare_dotted("1.3", "1.3.0") == 0);
}

TEST_CASE("platform tags parse, legacy aliases included") {
    auto t = policy::parse_platform_tag("manylinux2014_x86_64");
    CHECK(t.kind == policy::PlatformTag::Kind::manylinux);
    CHECK(t.minor == 17);
    CHECK(t.arch == "x86_64");
    t = policy::parse_platform_tag("manylinux_2_28_aarch64");
    CHECK(t.minor == 28);
    CHECK(t.arch == "aarch64");
    t = policy::parse_platform_tag("musllinux_1_2_x86_64");
    CHECK(t.kind == policy::PlatformTag::Kind::musllinux);
    CHECK(t.minor == 2);
    CHECK(policy::parse_platform_tag("linux_armv7l").kind == policy::PlatformTag::Kind::linux);
    CHECK(policy::parse_platform_tag("any").kind == policy::PlatformTag::Kind::other);
    CHECK(policy::parse_platform_tag("manylinux_x_28_x86_64").kind == policy::PlatformTag::Kind::other);
}

TEST_CASE("platform_change_problem: retagging keeps the architecture and the C library") {
    using V = std::vector<std::string>;
    auto problem = [](V before, V after) { return policy::platform_change_problem(before, after); };
    CHECK(problem({"manylinux2014_x86_64"}, {"manylinux_2_28_x86_64"}).empty());
    CHECK(problem({"linux_x86_64"}, {"manylinux_2_17_x86_64", "manylinux2014_x86_64"}).empty());
    CHECK(problem({"linux_x86_64"}, {"musllinux_1_2_x86_64"}).empty());  // linux_ does not say which libc
    CHECK(problem({"any"}, {"any"}).empty());
    CHECK(problem({"any"}, {"manylinux_2_28_aarch64"}).empty());  // no architecture named before
    CHECK(problem({"manylinux2014_x86_64"}, {"manylinux_2_28_aarch64"}).find("is for aarch64") != std::string::npos);
    CHECK(problem({"manylinux2014_x86_64"}, {"any"}).find("'any'") != std::string::npos);
    CHECK(problem({"manylinux2014_x86_64"}, {"foo"}).find("not a Linux platform tag") != std::string::npos);
    CHECK(problem({"manylinux2014_x86_64"}, {"macosx_11_0_arm64"}).find("not a Linux platform tag") != std::string::npos);
    CHECK(problem({"manylinux2014_x86_64"}, {"musllinux_1_2_x86_64"}).find("is musl") != std::string::npos);
    CHECK(problem({"musllinux_1_1_x86_64"}, {"manylinux_2_28_x86_64"}).find("is glibc") != std::string::npos);
}

TEST_CASE("versioned zlib and libatomic imports cost the tag as auditwheel's policy says") {
    policy::NeededVersions needs;
    needs.glibc = "2.2.5";
    needs.zlib = "1.2.0";  // manylinux1 knows no versioned zlib; manylinux2010 does
    REQUIRE(policy::lowest_manylinux_tag(needs, "x86_64"));
    CHECK(policy::lowest_manylinux_tag(needs, "x86_64")->tag == "manylinux_2_12");
    CHECK(policy::first_violation(needs, policy::manylinux_policy().front()) == "ZLIB_1.2.0");
    needs.zlib = "1.2.9";  // crc32_z, inflateGetDictionary ...
    CHECK(policy::lowest_manylinux_tag(needs, "x86_64")->tag == "manylinux_2_27");
    needs.zlib = "1.3";  // newer than every policy's zlib
    CHECK(policy::lowest_manylinux_tag(needs, "x86_64") == nullptr);
    needs.zlib.clear();
    needs.libatomic = "1.2";
    CHECK(policy::lowest_manylinux_tag(needs, "x86_64")->tag == "manylinux_2_24");
    policy::NeededVersions older_zlib;
    older_zlib.zlib = "1.2.2";
    CHECK(policy::newest(needs, older_zlib).zlib == "1.2.2");
}

TEST_CASE("the lowest honest manylinux tag follows glibc and libstdc++ needs") {
    policy::NeededVersions needs;
    needs.glibc = "2.14";
    REQUIRE(policy::lowest_manylinux_tag(needs, "x86_64"));
    CHECK(policy::lowest_manylinux_tag(needs, "x86_64")->tag == "manylinux_2_17");
    CHECK(policy::lowest_manylinux_tag(needs, "x86_64")->alias == "manylinux2014");
    needs.glibc = "2.2.5";
    CHECK(policy::lowest_manylinux_tag(needs, "x86_64")->tag == "manylinux_2_5");
    needs.glibcxx = "3.4.30";  // gcc 12's libstdc++ needs at least manylinux_2_35
    CHECK(policy::lowest_manylinux_tag(needs, "x86_64")->tag == "manylinux_2_35");
    needs.glibcxx.clear();
    needs.glibc = "2.34";
    CHECK(policy::lowest_manylinux_tag(needs, "aarch64")->tag == "manylinux_2_34");
    needs.glibc = "2.99";
    CHECK(policy::lowest_manylinux_tag(needs, "x86_64") == nullptr);
    CHECK(policy::lowest_manylinux_tag({}, "no-such-arch") == nullptr);
}

TEST_CASE("first_violation names the symbol version a tag does not allow") {
    const policy::ManylinuxTag* tag2014 = nullptr;
    for (const auto& row : policy::manylinux_policy())
        if (row.tag == "manylinux_2_17" && row.arch == "x86_64") tag2014 = &row;
    REQUIRE(tag2014);
    policy::NeededVersions needs;
    needs.glibc = "2.17";
    CHECK(policy::first_violation(needs, *tag2014).empty());
    needs.glibcxx = "3.4.21";
    CHECK(policy::first_violation(needs, *tag2014) == "GLIBCXX_3.4.21");
    needs.glibc = "2.34";
    CHECK(policy::first_violation(needs, *tag2014) == "GLIBC_2.34");
}

TEST_CASE("demangle uses the C++ runtime and leaves C names alone") {
    CHECK(abi::demangle("_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib") ==
          "c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool)");
    CHECK(abi::demangle("_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jbPNS0_19CUDAErrorLogCaptureE") ==
          "c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, unsigned int, bool, "
          "c10::cuda::CUDAErrorLogCapture*)");
    CHECK(abi::demangle("cudaMalloc") == "cudaMalloc");
    CHECK(abi::demangle("_Zgarbage") == "_Zgarbage");
}

TEST_CASE("top_namespace reads nested, const, vtable and typeinfo names") {
    CHECK(abi::top_namespace("_ZN3c104cuda9SetDeviceEa") == "c10");
    CHECK(abi::top_namespace("_ZNK2at10TensorBase4sizeEl") == "at");
    CHECK(abi::top_namespace("_ZTIN3c105ErrorE") == "c10");
    CHECK(abi::top_namespace("_ZTVN5torch8autograd4NodeE") == "torch");
    CHECK(abi::top_namespace("_ZNSt6thread6_StateD2Ev") == "std");
    CHECK(abi::top_namespace("_ZSt9terminatev") == "std");
    CHECK(abi::top_namespace("_Z3fooi").empty());
    CHECK(abi::top_namespace("malloc").empty());
    CHECK(abi::top_namespace("_ZN99").empty());  // length past the end
    CHECK(abi::is_torch_namespace("c10"));
    CHECK_FALSE(abi::is_torch_namespace("std"));
}

TEST_CASE("RPATH entries: absolute, $ORIGIN-relative, climbing out of the wheel") {
    auto entry = analysis::classify_search_path("/opt/ci/build/torch/lib", 2);
    CHECK(entry.absolute);
    CHECK_FALSE(entry.outside_wheel);
    entry = analysis::classify_search_path("$ORIGIN/../../torch/lib", 2);
    CHECK_FALSE(entry.absolute);
    CHECK_FALSE(entry.outside_wheel);
    CHECK(analysis::classify_search_path("$ORIGIN/../../../lib", 2).outside_wheel);
    CHECK(analysis::classify_search_path("${ORIGIN}/../..", 1).outside_wheel);
    CHECK_FALSE(analysis::classify_search_path("$ORIGIN/a/../..", 1).outside_wheel);
    CHECK_FALSE(analysis::classify_search_path("$ORIGIN/../../../lib", std::nullopt).outside_wheel);
}
