// Unit tests: target profiles (parser, built-ins), SM coverage (cubin a/f/plain,
// PTX), CUDA modules (sibling variants), evaluate() findings, musllinux tags.
#include "wheelfix/analysis/modules.hpp"
#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/cuda/coverage.hpp"
#include "wheelfix/analysis/profile_findings.hpp"
#include "wheelfix/policy/profile.hpp"
#include "wheelfix/util/error.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace wheelfix;
using cuda::ArchVariant;
using cuda::EntryKind;
using cuda::FatbinEntry;

namespace {

const std::filesystem::path kData = WHEELFIX_TEST_DATA;

FatbinEntry code(EntryKind kind, std::uint32_t sm, ArchVariant variant = ArchVariant::plain) {
    FatbinEntry e;
    e.kind = kind;
    e.sm = sm;
    e.variant = variant;
    return e;
}

FatbinEntry cubin(std::uint32_t sm, ArchVariant variant = ArchVariant::plain) { return code(EntryKind::cubin, sm, variant); }
FatbinEntry ptx(std::uint32_t sm, ArchVariant variant = ArchVariant::plain) { return code(EntryKind::ptx, sm, variant); }

// The GPUs among `gpus` that some entry of `entries` runs on.
std::vector<std::uint32_t> covered(std::vector<FatbinEntry> entries, std::vector<std::uint32_t> gpus) {
    std::vector<std::uint32_t> out;
    for (auto gpu : gpus)
        if (cuda::best_entry_for(entries, gpu)) out.push_back(gpu);
    return out;
}

std::string best(std::vector<FatbinEntry> entries, std::uint32_t sm) {
    auto found = cuda::best_entry_for(entries, sm);
    return found ? cuda::describe_entry(*found) : "none";
}

// The InputError parse_profile throws for `text`, as "file: problem".
std::string parse_error(std::string_view text) {
    try {
        policy::parse_profile(text, "mine", "mine.profile");
    } catch (const InputError& error) {
        return error.file() + ": " + error.problem();
    }
    return "no error";
}

analysis::ElfReport report_of(std::string name, std::vector<FatbinEntry> fatbin = {}, std::vector<std::string> needed = {},
                        std::optional<int> cudart = std::nullopt, std::vector<std::string> search_path = {}) {
    analysis::ElfReport report;
    report.name = std::move(name);
    report.machine = "x86_64";
    report.fatbin = std::move(fatbin);
    report.needed = std::move(needed);
    report.cudart_major = cudart;
    for (auto& path : search_path) report.search_path.push_back(analysis::SearchPathEntry{path, false, false});
    if (!report.search_path.empty()) report.runpath = "set";
    return report;
}

const std::vector<std::uint32_t> kAllGpus = {80, 86, 89, 90, 100, 103, 110, 120, 121};

}  // namespace

TEST_SUITE("profiles") {

TEST_CASE("a profile file with every key parses") {
    auto profile = policy::parse_profile(
        "# a comment line\n"
        "description  CUDA 13 on my cluster   # trailing comment\n"
        "cuda-runtime-major 13\n"
        "\n"
        "sm 100 103\n"
        "sm 120\n"
        "rpath {root}/nvidia/cu13/lib\n"
        "rpath $ORIGIN/../torch/lib\n"
        "rpath {root}/nvidia/cu13/lib\n"  // repeated: kept once
        "min-platform manylinux2014\n"
        "replace-needed libnvToolsExt.so.1 libnvtx3interop.so.1\n",
        "mine", "mine.profile");
    CHECK(profile.name == "mine");
    CHECK(profile.source == "mine.profile");
    CHECK(profile.description == "CUDA 13 on my cluster");
    CHECK(profile.cuda_runtime_major == 13);
    CHECK(profile.sms == std::vector<std::uint32_t>{100, 103, 120});
    CHECK(profile.rpaths == std::vector<std::string>{"{root}/nvidia/cu13/lib", "$ORIGIN/../torch/lib"});
    REQUIRE(profile.min_platform);
    CHECK(profile.min_platform_name() == "manylinux_2_17");
    REQUIRE(profile.replace_needed.size() == 1);
    CHECK(profile.replace_needed[0].from == "libnvToolsExt.so.1");
    CHECK(profile.replace_needed[0].to == "libnvtx3interop.so.1");
    CHECK(policy::parse_profile("min-platform musllinux_1_2", "m", "m").min_platform_name() == "musllinux_1_2");
}

TEST_CASE("bad profile files: InputError at file:line naming the problem") {
    CHECK(parse_error("sm 100\nsmm 120\n") ==
          "mine.profile:2: unknown key 'smm' (keys: description, cuda-runtime-major, sm, rpath, min-platform, "
          "replace-needed)");
    CHECK(parse_error("# only comments\n\n") ==
          "mine.profile: empty target profile (keys: description, cuda-runtime-major, sm, rpath, min-platform, "
          "replace-needed)");
    CHECK(parse_error("sm sm_100\n") == "mine.profile:1: 'sm_100' is not a compute capability (write 100 for sm_100)");
    CHECK(parse_error("sm\n") == "mine.profile:1: 'sm' takes compute capabilities such as 100 (for sm_100)");
    CHECK(parse_error("sm 100\n\nsm 120 100\n") == "mine.profile:3: sm 100 listed twice");
    CHECK(parse_error("cuda-runtime-major 13\ncuda-runtime-major 12\n") == "mine.profile:2: 'cuda-runtime-major' given twice");
    CHECK(parse_error("cuda-runtime-major thirteen\n") == "mine.profile:1: 'thirteen' is not a CUDA major version");
    CHECK(parse_error("cuda-runtime-major 13 12\n").starts_with("mine.profile:1: 'cuda-runtime-major' takes one number"));
    CHECK(parse_error("rpath /usr/local/cuda/lib64\n") ==
          "mine.profile:1: rpath '/usr/local/cuda/lib64' must start with {root} or $ORIGIN (a wheel cannot rely on "
          "absolute paths)");
    CHECK(parse_error("rpath {root}/a:{root}/b\n") == "mine.profile:1: rpath '{root}/a:{root}/b' holds ':'; give one directory a line");
    CHECK(parse_error("min-platform manylinux_2_28_x86_64\n") ==
          "mine.profile:1: 'manylinux_2_28_x86_64' is not a manylinux or musllinux tag (e.g. manylinux_2_28, musllinux_1_2)");
    CHECK(parse_error("min-platform linux\n").starts_with("mine.profile:1: 'linux' is not a manylinux"));
    CHECK(parse_error("replace-needed libcudart.so.12\n") == "mine.profile:1: 'replace-needed' takes two sonames: OLD NEW");
    CHECK(parse_error("replace-needed a.so b.so\nreplace-needed a.so c.so\n") == "mine.profile:2: replace-needed a.so given twice");
    CHECK(parse_error("description\n") == "mine.profile:1: 'description' takes a text");
}

TEST_CASE("built-in profiles") {
    CHECK(policy::builtin_profile_names() ==
          std::vector<std::string>{"cuda12-hopper", "cuda13-blackwell", "cuda13-blackwell-all"});
    auto blackwell = policy::load_profile("cuda13-blackwell");
    CHECK(blackwell.name == "cuda13-blackwell");
    CHECK(blackwell.source == "built-in");
    CHECK(blackwell.cuda_runtime_major == 13);
    CHECK(blackwell.sms == std::vector<std::uint32_t>{100, 120});
    CHECK(blackwell.rpaths ==
          std::vector<std::string>{"{root}/nvidia/cu13/lib", "{root}/torch/lib", "{root}/nvidia/nccl/lib"});
    CHECK(blackwell.min_platform_name() == "manylinux_2_28");
    CHECK(blackwell.replace_needed.empty());
    auto all = policy::load_profile("cuda13-blackwell-all");
    CHECK(all.sms == std::vector<std::uint32_t>{100, 103, 120, 121});
    CHECK(all.rpaths == blackwell.rpaths);
    auto hopper = policy::load_profile("cuda12-hopper");
    CHECK(hopper.cuda_runtime_major == 12);
    CHECK(hopper.sms == std::vector<std::uint32_t>{90});
    CHECK(hopper.rpaths.front() == "{root}/nvidia/cuda_runtime/lib");
}

TEST_CASE("load_profile: unknown names list the built-ins; files load by path") {
    try {
        policy::load_profile("cuda14-rubin");
        FAIL("no error");
    } catch (const InputError& error) {
        CHECK(error.file() == "cuda14-rubin");
        CHECK(error.problem() ==
              "no such target profile; built-in profiles: cuda12-hopper, cuda13-blackwell, cuda13-blackwell-all "
              "(or give a profile file)");
    }
    auto dir = std::filesystem::temp_directory_path() / "wheelfix-unit-profiles";
    std::filesystem::create_directories(dir);
    auto path = dir / "cluster.profile";
    std::ofstream(path) << "cuda-runtime-major 13\nsm 100\nbogus line\n";
    try {
        policy::load_profile(path.string());
        FAIL("no error");
    } catch (const InputError& error) {
        CHECK(error.file() == path.string() + ":3");
    }
    std::ofstream(path) << "cuda-runtime-major 13\nsm 100\n";
    auto profile = policy::load_profile(path.string());
    CHECK(profile.name == "cluster");
    CHECK(profile.source == path.string());
    CHECK_THROWS_AS(policy::load_profile((dir / "missing.profile").string()), InputError);
    std::filesystem::remove_all(dir);
}

TEST_CASE("SM coverage: plain cubins run on later minors of their major only") {
    using U = std::vector<std::uint32_t>;
    CHECK(covered({cubin(80)}, kAllGpus) == U{80, 86, 89});  // binary compatibility within 8.x
    CHECK(covered({cubin(86)}, kAllGpus) == U{86, 89});      // never on an older minor
    CHECK(covered({cubin(90)}, kAllGpus) == U{90});           // never across majors
    CHECK(covered({cubin(100)}, kAllGpus) == U{100, 103});
    CHECK(covered({cubin(120)}, kAllGpus) == U{120, 121});    // 12.x is not 10.x
}

TEST_CASE("SM coverage: family (f) cubins cover their family, arch-specific (a) only their SM") {
    using U = std::vector<std::uint32_t>;
    CHECK(covered({cubin(100, ArchVariant::family_specific)}, kAllGpus) == U{100, 103});
    CHECK(covered({cubin(120, ArchVariant::family_specific)}, kAllGpus) == U{120, 121});
    CHECK(covered({cubin(103, ArchVariant::family_specific)}, kAllGpus) == U{103});
    CHECK(covered({cubin(100, ArchVariant::arch_specific)}, kAllGpus) == U{100});
    CHECK(covered({cubin(120, ArchVariant::arch_specific)}, kAllGpus) == U{120});
    CHECK(covered({cubin(90, ArchVariant::arch_specific)}, kAllGpus) == U{90});
}

TEST_CASE("SM coverage: PTX JITs forward; a/f PTX only on its SM/family; LTO IR never") {
    using U = std::vector<std::uint32_t>;
    CHECK(covered({ptx(90)}, kAllGpus) == U{90, 100, 103, 110, 120, 121});
    CHECK(covered({ptx(120)}, kAllGpus) == U{120, 121});
    CHECK(covered({ptx(100, ArchVariant::arch_specific)}, kAllGpus) == U{100});
    CHECK(covered({ptx(120, ArchVariant::family_specific)}, kAllGpus) == U{120, 121});
    CHECK(covered({code(EntryKind::ltoir, 100)}, kAllGpus).empty());
}

TEST_CASE("SM coverage: the entry the driver would pick") {
    std::vector<FatbinEntry> sgl = {cubin(100, ArchVariant::arch_specific), cubin(120, ArchVariant::arch_specific), ptx(120)};
    CHECK(best(sgl, 100) == "cubin sm_100a");
    CHECK(best(sgl, 103) == "none");
    CHECK(best(sgl, 120) == "cubin sm_120a");
    CHECK(best(sgl, 121) == "PTX compute_120 (JIT)");
    // An exact cubin beats a family one, a family one beats PTX; newest compatible wins.
    CHECK(best({ptx(100), cubin(100, ArchVariant::family_specific), cubin(103, ArchVariant::arch_specific)}, 103) ==
          "cubin sm_103a");
    CHECK(best({ptx(100), cubin(100, ArchVariant::family_specific)}, 103) == "cubin sm_100f");
    CHECK(best({cubin(80), cubin(86)}, 89) == "cubin sm_86");
    CHECK(best({ptx(90), ptx(100)}, 103) == "PTX compute_100 (JIT)");
}

TEST_CASE("SM coverage over nvcc 13 output: tests/data/fatbin/blackwell_variants.o") {
    // -gencode arch=compute_100a,code=sm_100a, compute_100f/sm_100f, compute_103a/sm_103a,
    // compute_120f/sm_120f, compute_121a/sm_121a, PTX compute_120f and compute_100a.
    auto report = analysis::inspect_file(kData / "fatbin" / "blackwell_variants.o");
    CHECK(best(report.fatbin, 100) == "cubin sm_100a");
    CHECK(best(report.fatbin, 103) == "cubin sm_103a");
    CHECK(best(report.fatbin, 120) == "cubin sm_120f");
    CHECK(best(report.fatbin, 121) == "cubin sm_121a");
    CHECK(best(report.fatbin, 110) == "none");
    CHECK(best(report.fatbin, 90) == "none");
}

TEST_CASE("CUDA modules: same file name in sibling directories are variants") {
    std::vector<analysis::ElfReport> elves = {
        report_of("sgl_kernel/sm90/common_ops.abi3.so", {cubin(90, ArchVariant::arch_specific)}),
        report_of("sgl_kernel/libhelper.so"),  // no device code: not a CUDA module
        report_of("sgl_kernel/sm100/common_ops.abi3.so", {cubin(100, ArchVariant::arch_specific), ptx(120)}),
        report_of("a/x/_C.so", {cubin(100)}),
        report_of("b/y/_C.so", {cubin(120)}),      // other parent: another module
        report_of("pkg/_ops.so", {cubin(100)}),
        report_of("other/_ops.so", {cubin(120)}),  // top-level packages are never siblings
    };
    auto modules = analysis::group_cuda_modules(elves);
    REQUIRE(modules.size() == 5);
    CHECK(modules[0].name == "sgl_kernel/{sm90,sm100}/common_ops.abi3.so");
    CHECK(modules[0].variants == std::vector<std::size_t>{0, 2});
    CHECK(modules[1].name == "a/x/_C.so");
    CHECK(modules[2].name == "b/y/_C.so");
    CHECK(modules[3].name == "pkg/_ops.so");
    CHECK(modules[4].name == "other/_ops.so");

    const std::uint32_t sms[] = {90, 100, 103, 120};
    auto support = analysis::module_support(modules[0], elves, sms);
    CHECK(support[0].member == "sgl_kernel/sm90/common_ops.abi3.so");
    CHECK(support[0].how == "cubin sm_90a");
    CHECK(support[1].member == "sgl_kernel/sm100/common_ops.abi3.so");
    CHECK(support[1].how == "cubin sm_100a");
    CHECK_FALSE(support[2].runs);
    CHECK(support[3].how == "PTX compute_120 (JIT)");
    CHECK(modules[0].blackwell.size() == 4);  // kBlackwellSms
    CHECK(analysis::module_code_summary(modules[0], elves) ==
          "cubin sm_90a in sm90/; cubin sm_100a, PTX compute_120 (JIT) in sm100/");
}

TEST_CASE("evaluate: CUDA runtime, SM coverage, platform and RUNPATH findings") {
    auto profile = policy::load_profile("cuda13-blackwell");
    analysis::WheelReport report;
    report.elves = {
        report_of("sgl_kernel/sm90/common_ops.abi3.so", {cubin(90, ArchVariant::arch_specific)}, {"libcudart.so.13"}, 13,
            {"$ORIGIN/../../nvidia/cu13/lib", "${ORIGIN}/../../torch/lib/", "$ORIGIN/./../../nvidia/nccl/lib"}),
        report_of("sgl_kernel/sm100/common_ops.abi3.so", {cubin(100, ArchVariant::arch_specific)}, {"libcudart.so.12"}, 12,
            {"/opt/ci/build/torch/lib"}),
        report_of("sgl_kernel/libpure.so", {}, {"libc.so.6"}),  // links neither CUDA nor torch: RUNPATH not judged
    };
    report.modules = analysis::group_cuda_modules(report.elves);
    report.honest_tag = "manylinux_2_34";
    report.platform_claims = {{"manylinux2014_x86_64", "2.17", true, "GLIBC_2.34", ""}};

    auto findings = analysis::evaluate(profile, report);
    REQUIRE(findings.size() == 4);
    CHECK(findings[0].kind == analysis::Finding::Kind::cuda_runtime);
    CHECK(findings[0].member == "sgl_kernel/sm100/common_ops.abi3.so");
    CHECK(findings[0].message ==
          "sgl_kernel/sm100/common_ops.abi3.so needs libcudart.so.12; cuda13-blackwell needs CUDA runtime 13 "
          "(libcudart.so.13)");
    CHECK_FALSE(findings[0].repair_fixes);
    CHECK(findings[1].kind == analysis::Finding::Kind::sm);
    CHECK(findings[1].message ==
          "sgl_kernel/{sm90,sm100}/common_ops.abi3.so has no code for sm_120 that cuda13-blackwell needs "
          "(has: cubin sm_90a in sm90/; cubin sm_100a in sm100/)");
    CHECK(findings[2].kind == analysis::Finding::Kind::platform);
    CHECK(findings[2].message ==
          "tag manylinux2014_x86_64: older than manylinux_2_28, the oldest cuda13-blackwell allows; the binaries "
          "need GLIBC_2.34; repair sets manylinux_2_34_x86_64");
    CHECK(findings[2].repair_fixes);
    CHECK(findings[3].kind == analysis::Finding::Kind::runpath);
    CHECK(findings[3].member == "sgl_kernel/sm100/common_ops.abi3.so");
    // What repair adds follows the same rule: nothing for libpure.so.
    CHECK(analysis::missing_search_path(profile, report.elves.back(), 1).empty());
    CHECK(analysis::missing_search_path(profile, report.elves.at(1), 1).size() == 3);
    CHECK(findings[3].message ==
          "sgl_kernel/sm100/common_ops.abi3.so: RUNPATH does not reach $ORIGIN/../../nvidia/cu13/lib, "
          "$ORIGIN/../../torch/lib, $ORIGIN/../../nvidia/nccl/lib, where cuda13-blackwell installs its libraries");
    CHECK(findings[3].repair_fixes);
    CHECK(std::string(analysis::kind_name(findings[3].kind)) == "runpath");
}

TEST_CASE("evaluate: a wheel that fits has no findings; the platform target") {
    auto profile = policy::load_profile("cuda13-blackwell");
    analysis::WheelReport report;
    report.elves = {report_of("pkg/ops/_C.so", {cubin(100, ArchVariant::family_specific), cubin(120, ArchVariant::family_specific)},
                        {"libcudart.so.13", "libtorch.so"}, 13,
                        {"$ORIGIN/../../nvidia/cu13/lib", "$ORIGIN/../../torch/lib", "$ORIGIN/../../nvidia/nccl/lib"})};
    report.modules = analysis::group_cuda_modules(report.elves);
    report.honest_tag = "manylinux_2_17";
    report.platform_claims = {{"manylinux_2_28_x86_64", "2.28", false, "", ""}};
    CHECK(analysis::evaluate(profile, report).empty());
    CHECK(analysis::target_platform_tag(profile, report) == "manylinux_2_28_x86_64");  // raised to the floor
    report.honest_tag = "manylinux_2_34";
    CHECK(analysis::target_platform_tag(profile, report) == "manylinux_2_34_x86_64");
    report.platform_claims = {{"linux_x86_64", "", false, "", ""}};
    auto findings = analysis::evaluate(profile, report);
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].message ==
          "tag linux_x86_64: a plain linux tag, which PyPI and pip's manylinux checks do not accept; repair sets "
          "manylinux_2_34_x86_64");
    // cuda13-blackwell-all asks for sm_103 and sm_121 too: the f cubins cover them.
    CHECK(analysis::evaluate(policy::load_profile("cuda13-blackwell-all"), report).size() == 1);
}

TEST_CASE("evaluate: a bare ELF file and a profile that maps libcudart") {
    auto profile = policy::parse_profile("cuda-runtime-major 13\nsm 90\nrpath {root}/lib\n"
                                         "replace-needed libcudart.so.12 libcudart.so.13\n",
                                         "remap", "remap.profile");
    auto report = report_of("ops.so", {cubin(90, ArchVariant::arch_specific)}, {"libcudart.so.12"}, 12, {"$ORIGIN/lib"});
    auto findings = analysis::evaluate(profile, report);
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].kind == analysis::Finding::Kind::cuda_runtime);
    CHECK(findings[0].repair_fixes);  // the profile maps .12 to .13
    CHECK(analysis::missing_search_path(profile, report, 0).empty());
    CHECK(analysis::missing_search_path(profile, report, 1) == std::vector<std::string>{"$ORIGIN/../lib"});
}

TEST_CASE("musllinux tags: lowest tag per architecture, musl 1.2 for time64 callers") {
    policy::NeededVersions needs;
    needs.links_musl = true;
    CHECK(policy::honest_tag(needs, "x86_64") == "musllinux_1_1");
    CHECK(policy::honest_tag(needs, "riscv64") == "musllinux_1_1");      // as auditwheel (#526)
    CHECK(policy::honest_tag(needs, "loongarch64") == "musllinux_1_2");  // 1_2 only
    CHECK(policy::honest_tag(needs, "mips64") == "");
    needs.musl = "1.2";
    CHECK(policy::lowest_musllinux_tag(needs, "i686")->tag == "musllinux_1_2");
    needs.links_musl = false;
    needs.glibc = "2.17";
    CHECK(policy::honest_tag(needs, "x86_64") == "manylinux_2_17");
}

TEST_CASE("musllinux: auditwheel's real musl wheels get musllinux tags, their glibc twins manylinux") {
    // The cp310 extension is named *-linux-gnu.so and NEEDs nothing: only its
    // .comment ("GCC: (Alpine 15.2.0)") says it was built against musl.
    for (const auto& entry : std::filesystem::directory_iterator(kData / "auditwheel" / "musllinux_1_2")) {
        auto report = analysis::inspect_wheel(entry.path());
        INFO(entry.path().filename().string());
        CHECK(report.needs.links_musl);
        CHECK(report.honest_tag.starts_with("musllinux_1_"));
    }
    auto cp310 = analysis::inspect_wheel(kData / "auditwheel" / "musllinux_1_2" /
                                         "testsimple-0.0.1-cp310-cp310-linux_x86_64.whl");
    CHECK(cp310.honest_tag == "musllinux_1_1");
    CHECK(cp310.elves.at(0).name == "testsimple.cpython-310-x86_64-linux-gnu.so");
    auto glibc = analysis::inspect_wheel(kData / "auditwheel" / "glibc" / "testsimple-0.0.1-cp313-cp313-linux_x86_64.whl");
    CHECK_FALSE(glibc.needs.links_musl);
    CHECK(glibc.honest_tag.starts_with("manylinux_2_"));
}

TEST_CASE("inspect_wheel with known members reads only the others and reports as if it had read all") {
    const auto path = kData / "auditwheel" / "glibc" / "testsimple-0.0.1-cp313-cp313-linux_x86_64.whl";
    const auto whole = analysis::inspect_wheel(path);
    REQUIRE(whole.record_findings.empty());
    REQUIRE(whole.elves.size() == 1);
    // Knowing nothing is reading everything.
    const auto none = analysis::inspect_wheel(path, [](const zip::Member&) { return std::nullopt; });
    CHECK(none.elves.size() == 1);
    CHECK(none.record_findings.empty());
    CHECK(none.honest_tag == whole.honest_tag);
    // The extension known (with a report that says something else, and a digest that
    // disagrees with RECORD): those are what the report holds, so it was not read.
    const std::string extension = whole.elves.at(0).name;
    analysis::ElfReport told = whole.elves.at(0);
    told.soname = "libtold.so";
    const auto known = analysis::inspect_wheel(path, [&](const zip::Member& member) -> std::optional<analysis::KnownMember> {
        if (member.name != extension) return std::nullopt;
        wheel::MemberDigest digest;
        digest.size = member.size;
        digest.is_elf = true;  // sha256 left all zero
        return analysis::KnownMember{digest, &told};
    });
    REQUIRE(known.elves.size() == 1);
    CHECK(known.elves.at(0).soname == "libtold.so");
    REQUIRE(known.record_findings.size() == 1);
    CHECK(known.record_findings.at(0).member == extension);
    CHECK(known.record_findings.at(0).problem.find("sha256 mismatch") != std::string::npos);
}

}  // TEST_SUITE
