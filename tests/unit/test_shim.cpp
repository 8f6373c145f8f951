// Unit tests: the shim generator (abi/shim.hpp). The images are read back with our
// ELF reader and their code decoded by hand: names, versions, NEEDED, relocations,
// the registers each forwarder zeroes and the GOT slot it jumps through, the stub's
// message; layout rules (64 KiB alignment); refusals. On an x86_64 host the shims
// are also loaded with dlopen and called: a forwarder to libc's strtol that must
// zero the two registers the caller filled with garbage, and a stub that must kill
// a child process with SIGABRT after writing its exact message; a shim of many
// symbols must let dlsym find every one (GNU hash). Also the pieces shim_wheel
// adds elsewhere: write_wheel_changes' added members and --map parsing.
#include "wheelfix/abi/shim.hpp"
#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/repair/shim_wheel.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/wheel/rewrite.hpp"
#include "wheelfix/wheel/verify.hpp"

#include <doctest/doctest.h>

#include <dlfcn.h>
#include <elf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

using namespace wheelfix;
using abi::ShimSpec;
using abi::ShimSymbol;

namespace {

const char* kOldCheck = "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib";
const char* kNewCheck = "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jbPNS0_19CUDAErrorLogCaptureE";
const char* kGone = "_ZN3c104cuda4goneEi";

ShimSymbol check_forwarder() {
    ShimSymbol symbol;
    symbol.name = kOldCheck;
    symbol.demangled = "c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool)";
    symbol.needed_by = "pkg/ops.so";
    symbol.target = kNewCheck;
    symbol.target_library = "libc10_cuda.so";
    symbol.appended_params = 1;
    symbol.appended_values = {0};  // the CUDAErrorLogCapture* rule: null
    symbol.integer_params_before = 5;
    return symbol;
}

ShimSymbol gone_stub() {
    ShimSymbol symbol;
    symbol.name = kGone;
    symbol.demangled = "c10::cuda::gone(int)";
    symbol.needed_by = "pkg/ops.so";
    return symbol;
}

ShimSpec sample_spec(std::string machine) {
    ShimSpec spec;
    spec.torch_version = "2.11.0+cu130";
    spec.machine = std::move(machine);
    spec.runpath = "$ORIGIN/../torch/lib";
    spec.symbols = {check_forwarder(), gone_stub()};
    return spec;
}

const elf::Symbol& symbol_named(const elf::ElfFile& file, std::string_view name) {
    const auto& symbols = file.dynamic_symbols();
    auto found = std::find_if(symbols.begin(), symbols.end(), [&](const elf::Symbol& s) { return s.name == name; });
    REQUIRE(found != symbols.end());
    return *found;
}

std::uint64_t read64(std::span<const std::uint8_t> bytes, std::size_t at) {
    std::uint64_t value = 0;
    for (int i = 7; i >= 0; --i) value = (value << 8) | bytes[at + static_cast<std::size_t>(i)];
    return value;
}

std::uint32_t read32(std::span<const std::uint8_t> bytes, std::size_t at) {
    return static_cast<std::uint32_t>(read64(bytes, at) & 0xffffffffu);
}

// The GOT slot that a R_*_GLOB_DAT relocation binds to `target`.
std::uint64_t got_slot_for(const elf::ElfFile& file, std::string_view target, std::uint32_t type) {
    const auto* rela = file.section(".rela.dyn");
    REQUIRE(rela != nullptr);
    auto bytes = file.section_bytes(*rela);
    for (std::size_t at = 0; at + 24 <= bytes.size(); at += 24) {
        auto info = read64(bytes, at + 8);
        if ((info & 0xffffffffu) != type) continue;
        const auto& symbol = file.dynamic_symbols().at((info >> 32) - 1);  // the reader skips index 0
        if (symbol.name == target) return read64(bytes, at);
    }
    FAIL("no GLOB_DAT relocation for " << target);
    return 0;
}

// The page an aarch64 `adrp` at `pc` addresses.
std::uint64_t adrp_page(std::uint32_t adrp, std::uint64_t pc) {
    std::int64_t pages = ((adrp >> 29) & 3) | (((adrp >> 5) & 0x7ffff) << 2);
    if (pages & (1 << 20)) pages -= 1 << 21;
    return (pc & ~0xfffull) + static_cast<std::uint64_t>(pages * 4096);
}

std::span<const std::uint8_t> code_of(const elf::ElfFile& file, const elf::Symbol& symbol) {
    auto offset = file.vaddr_to_offset(symbol.value);
    REQUIRE(offset.has_value());
    return file.bytes().subspan(*offset, symbol.size);
}

std::string message_of(const abi::ShimLibrary& library, std::uint64_t address, std::uint32_t length) {
    auto file = elf::ElfFile::parse(library.bytes);
    auto offset = file.vaddr_to_offset(address);
    REQUIRE(offset.has_value());
    return std::string(reinterpret_cast<const char*>(library.bytes.data() + *offset), length);
}

std::filesystem::path write_temporary(const abi::ShimLibrary& library) {
    auto path = std::filesystem::temp_directory_path() / ("wheelfix-unit-" + std::to_string(::getpid()) + "-" +
                                                           library.file_name);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(library.bytes.data()), static_cast<std::streamsize>(library.bytes.size()));
    return path;
}

}  // namespace

TEST_CASE("shim: named for the torch and the spec's hash, with a version node and the successors' NEEDED") {
    auto library = abi::build_shim(sample_spec("x86_64"));
    CHECK(std::regex_match(library.file_name, std::regex(R"(libwheelfix_shim_torch2\.11\.0_[0-9a-f]{8}\.so)")));
    CHECK(library.soname == library.file_name);
    CHECK(library.version_node == "WHEELFIX_TORCH_2.11.0");

    auto file = elf::ElfFile::parse(library.bytes);
    CHECK(file.type() == ET_DYN);
    CHECK(file.machine() == EM_X86_64);
    CHECK(file.soname() == library.soname);
    CHECK(file.needed() == std::vector<std::string_view>{"libc10_cuda.so"});
    CHECK(file.runpath() == "$ORIGIN/../torch/lib");
    REQUIRE(file.version_defs().size() == 2);
    CHECK(file.version_defs()[0].flags == VER_FLG_BASE);
    CHECK(file.version_defs()[0].names.at(0) == library.soname);
    CHECK(file.version_defs()[1].index == 2);
    CHECK(file.version_defs()[1].names.at(0) == "WHEELFIX_TORCH_2.11.0");

    for (const char* name : {kOldCheck, kGone}) {
        const auto& symbol = symbol_named(file, name);
        CHECK(symbol.defined());
        CHECK(symbol.type == STT_FUNC);
        CHECK(symbol.binding == STB_GLOBAL);
        CHECK(symbol.version == "WHEELFIX_TORCH_2.11.0");
        CHECK_FALSE(symbol.version_hidden);
    }
    const auto& successor = symbol_named(file, kNewCheck);
    CHECK_FALSE(successor.defined());
    CHECK(successor.version.empty());
    CHECK(file.section(".gnu.hash") != nullptr);
    CHECK(file.section(".hash") != nullptr);
}

TEST_CASE("shim: segments are aligned for 64 KiB pages; the stack is not executable") {
    for (const char* machine : {"x86_64", "aarch64"}) {
        auto file = elf::ElfFile::parse(abi::build_shim(sample_spec(machine)).bytes);
        int loads = 0;
        bool stack = false, dynamic = false;
        for (const auto& ph : file.program_headers()) {
            if (ph.type == PT_LOAD) {
                ++loads;
                CHECK(ph.align == 0x10000);
                CHECK(ph.offset % ph.align == ph.vaddr % ph.align);
            }
            if (ph.type == PT_GNU_STACK) {
                stack = true;
                CHECK((ph.flags & PF_X) == 0);
            }
            dynamic |= ph.type == PT_DYNAMIC;
        }
        CHECK(loads == 3);
        CHECK(stack);
        CHECK(dynamic);
    }
}

TEST_CASE("shim: the x86_64 forwarder zeroes r9 and jumps through the successor's GOT slot") {
    auto library = abi::build_shim(sample_spec("x86_64"));
    auto file = elf::ElfFile::parse(library.bytes);
    const auto& symbol = symbol_named(file, kOldCheck);
    auto code = code_of(file, symbol);
    REQUIRE(code.size() == 9);
    CHECK(std::vector<std::uint8_t>(code.begin(), code.begin() + 5) ==
          std::vector<std::uint8_t>{0x45, 0x31, 0xc9, 0xff, 0x25});  // xor %r9d,%r9d; jmp *disp(%rip)
    auto displacement = static_cast<std::int32_t>(read32(code, 5));
    CHECK(symbol.value + 9 + static_cast<std::uint64_t>(static_cast<std::int64_t>(displacement)) ==
          got_slot_for(file, kNewCheck, R_X86_64_GLOB_DAT));
}

TEST_CASE("shim: the aarch64 forwarder zeroes x5 and branches through the successor's GOT slot via x16") {
    auto library = abi::build_shim(sample_spec("aarch64"));
    auto file = elf::ElfFile::parse(library.bytes);
    CHECK(file.machine() == EM_AARCH64);
    const auto& symbol = symbol_named(file, kOldCheck);
    auto code = code_of(file, symbol);
    REQUIRE(code.size() == 16);
    CHECK(read32(code, 0) == 0xAA1F03E5u);  // mov x5, xzr
    auto adrp = read32(code, 4), ldr = read32(code, 8);
    CHECK((adrp & 0x9F00001Fu) == 0x90000010u);  // adrp x16
    CHECK((ldr & 0xFFC003FFu) == 0xF9400210u);   // ldr x16, [x16, #imm]
    CHECK(read32(code, 12) == 0xD61F0200u);      // br x16
    std::uint64_t slot = adrp_page(adrp, symbol.value + 4) + ((ldr >> 10) & 0xfff) * 8;
    CHECK(slot == got_slot_for(file, kNewCheck, R_AARCH64_GLOB_DAT));
}

TEST_CASE("shim: stubs point at their exact message, on both machines") {
    const std::string expected =
        "wheelfix shim: c10::cuda::gone(int) is not provided by torch 2.11.0+cu130 (needed by pkg/ops.so)\n";
    auto x86 = abi::build_shim(sample_spec("x86_64"));
    auto file = elf::ElfFile::parse(x86.bytes);
    const auto& stub = symbol_named(file, kGone);
    auto code = code_of(file, stub);
    REQUIRE(code.size() > 12);
    CHECK(code[0] == 0x48);  // lea disp(%rip),%rsi
    auto message = stub.value + 7 + static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(read32(code, 3))));
    CHECK(code[7] == 0xba);  // mov $length,%edx
    CHECK(message_of(x86, message, read32(code, 8)) == expected);

    auto arm = abi::build_shim(sample_spec("aarch64"));
    auto arm_file = elf::ElfFile::parse(arm.bytes);
    const auto& arm_stub = symbol_named(arm_file, kGone);
    auto arm_code = code_of(arm_file, arm_stub);
    auto adrp = read32(arm_code, 4), add = read32(arm_code, 8), movz = read32(arm_code, 12);
    std::uint64_t address = adrp_page(adrp, arm_stub.value + 4) + ((add >> 10) & 0xfff);
    CHECK(message_of(arm, address, (movz >> 5) & 0xffff) == expected);
}

TEST_CASE("shim: equal specs give equal bytes whatever the symbol order; any change renames the file") {
    auto spec = sample_spec("x86_64");
    auto first = abi::build_shim(spec);
    std::reverse(spec.symbols.begin(), spec.symbols.end());
    auto second = abi::build_shim(spec);
    CHECK(first.file_name == second.file_name);
    CHECK(first.bytes == second.bytes);
    spec.symbols[0].needed_by = "pkg/other.so";
    CHECK(abi::build_shim(spec).file_name != first.file_name);
    CHECK(abi::build_shim(sample_spec("aarch64")).file_name != first.file_name);
    auto ten = sample_spec("x86_64");
    ten.torch_version = "2.10.0+cu130";
    CHECK(abi::build_shim(ten).file_name.starts_with("libwheelfix_shim_torch2.10.0_"));
}

TEST_CASE("shim: which registers are zeroed; stack-passed appended parameters are refused") {
    ShimSymbol symbol = check_forwarder();
    CHECK(abi::zeroed_registers(symbol, "x86_64") == std::vector<unsigned>{5});
    symbol.passes_this = true;  // a member function: `this` takes rdi, the appended pointer would go on the stack
    CHECK_THROWS_AS(abi::zeroed_registers(symbol, "x86_64"), abi::ShimError);
    CHECK(abi::forwarder_obstacle(symbol, "x86_64").has_value());
    CHECK(abi::zeroed_registers(symbol, "aarch64") == std::vector<unsigned>{6});
    symbol.passes_this = false;
    symbol.returns_in_memory = true;  // sret: rdi on x86_64, x8 (no shift) on aarch64
    CHECK_THROWS_AS(abi::zeroed_registers(symbol, "x86_64"), abi::ShimError);
    CHECK(abi::zeroed_registers(symbol, "aarch64") == std::vector<unsigned>{5});
    symbol.returns_in_memory = false;
    symbol.integer_params_before = 1;
    symbol.appended_params = 2;
    CHECK(abi::zeroed_registers(symbol, "x86_64") == std::vector<unsigned>{1, 2});
    CHECK_FALSE(abi::forwarder_obstacle(symbol, "x86_64").has_value());
    CHECK(abi::forwarder_obstacle(symbol, "riscv64").has_value());

    auto spec = sample_spec("x86_64");
    spec.symbols[0].integer_params_before = 6;
    CHECK_THROWS_AS(abi::build_shim(spec), abi::ShimError);
}

TEST_CASE("shim: specs that cannot be honoured are refused") {
    auto spec = sample_spec("ppc64le");
    CHECK_THROWS_AS(abi::build_shim(spec), abi::ShimError);
    spec = sample_spec("x86_64");
    spec.symbols.clear();
    CHECK_THROWS_AS(abi::build_shim(spec), abi::ShimError);
    spec = sample_spec("x86_64");
    spec.symbols.push_back(gone_stub());
    CHECK_THROWS_AS(abi::build_shim(spec), abi::ShimError);  // listed twice
    spec = sample_spec("x86_64");
    spec.symbols[0].target = kGone;  // would jump to a symbol the shim itself defines
    CHECK_THROWS_AS(abi::build_shim(spec), abi::ShimError);
    spec = sample_spec("x86_64");
    spec.torch_version.clear();
    CHECK_THROWS_AS(abi::build_shim(spec), abi::ShimError);
    spec = sample_spec("x86_64");
    spec.symbols[1].name = std::string("bad\nname");
    CHECK_THROWS_AS(abi::build_shim(spec), abi::ShimError);
}

#if defined(__x86_64__)
TEST_CASE("shim: loaded with dlopen, a forwarder zeroes the appended registers and a stub aborts loudly") {
    ShimSpec spec;
    spec.torch_version = "9.9.9";
    spec.machine = "x86_64";
    ShimSymbol forward;  // long old(const char*)  ->  long strtol(const char*, char** = nullptr, int = 0)
    forward.name = "wheelfix_unit_old_strtol";
    forward.target = "strtol";
    forward.target_library = "libc.so.6";
    forward.integer_params_before = 1;
    forward.appended_params = 2;
    forward.appended_values = {0, 0};
    ShimSymbol stub;
    stub.name = "wheelfix_unit_gone";
    stub.demangled = "wheelfix_unit_gone()";
    stub.needed_by = "unit/test.so";
    spec.symbols = {forward, stub};
    auto library = abi::build_shim(spec);
    auto path = write_temporary(library);
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::filesystem::remove(path);
    REQUIRE_MESSAGE(handle != nullptr, ::dlerror());

    // Call it with garbage where the appended parameters go: without the zeroing,
    // strtol would store through 0x10 and reject base 99.
    using Garbage = long (*)(const char*, void*, long);
    void* old_address = ::dlsym(handle, "wheelfix_unit_old_strtol");
    REQUIRE(old_address != nullptr);
    auto old = reinterpret_cast<Garbage>(old_address);
    CHECK(old("0x1f", reinterpret_cast<void*>(0x10), 99) == 31);
    CHECK(old("017", reinterpret_cast<void*>(0x10), 10) == 15);  // base 0: octal

    void* gone_address = ::dlsym(handle, "wheelfix_unit_gone");
    REQUIRE(gone_address != nullptr);
    auto gone = reinterpret_cast<void (*)()>(gone_address);
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    std::fflush(nullptr);
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        std::signal(SIGABRT, SIG_DFL);  // not the test framework's crash report
        ::dup2(pipe_fds[1], 2);
        gone();
        ::_exit(0);  // not reached when the stub works
    }
    ::close(pipe_fds[1]);
    std::string text;
    char buffer[256];
    for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
    ::close(pipe_fds[0]);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(text == "wheelfix shim: wheelfix_unit_gone() is not provided by torch 9.9.9 (needed by unit/test.so)\n");
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGABRT);
    ::dlclose(handle);
}

TEST_CASE("shim: dlsym finds every one of many symbols through the hash tables") {
    ShimSpec spec;
    spec.torch_version = "9.9.9";
    spec.machine = "x86_64";
    for (int i = 0; i < 300; ++i) {
        ShimSymbol symbol;
        symbol.name = "wheelfix_unit_many_" + std::to_string(i * 7919);
        spec.symbols.push_back(symbol);
    }
    auto library = abi::build_shim(spec);
    auto path = write_temporary(library);
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::filesystem::remove(path);
    REQUIRE_MESSAGE(handle != nullptr, ::dlerror());
    auto file = elf::ElfFile::parse(library.bytes);
    std::set<void*> addresses;
    for (const auto& symbol : spec.symbols) {
        void* address = ::dlsym(handle, symbol.name.c_str());
        CHECK_MESSAGE(address != nullptr, symbol.name);
        addresses.insert(address);
        CHECK(address == static_cast<char*>(::dlsym(handle, spec.symbols[0].name.c_str())) +
                             (symbol_named(file, symbol.name).value - symbol_named(file, spec.symbols[0].name).value));
    }
    CHECK(addresses.size() == spec.symbols.size());
    CHECK(::dlsym(handle, "wheelfix_unit_many_1") == nullptr);
    ::dlclose(handle);
}
#endif

TEST_CASE("write_wheel_changes: added members get their mode and a RECORD line; clashes are refused") {
    namespace fs = std::filesystem;
    auto source = fs::path(WHEELFIX_TEST_DATA) / ".." / ".." / "sample_wheels" / "dist" / "purepy-1.0.0-py3-none-any.whl";
    auto wheel = wheel::Wheel::open(source);
    auto directory = fs::temp_directory_path() / ("wheelfix-unit-added-" + std::to_string(::getpid()));
    fs::create_directories(directory);
    auto out = directory / source.filename();
    std::vector<std::uint8_t> bytes = {1, 2, 3, 4};
    wheel::write_wheel_changes(wheel, wheel::WheelChanges{{}, {wheel::AddedMember{"purepy.libs/libx.so", bytes, 0100755}}, {}}, out, {});
    {
        auto written = wheel::Wheel::open(out);
        CHECK(wheel::verify_wheel(written, wheel::scan_members(written.archive())).empty());
        const auto& members = written.archive().members();
        auto added = std::find_if(members.begin(), members.end(), [](const auto& m) { return m.name == "purepy.libs/libx.so"; });
        REQUIRE(added != members.end());
        CHECK(added->unix_mode == 0100755);
        CHECK(members.back().name == written.record_path());
        auto line = std::find_if(written.record().begin(), written.record().end(),
                                 [](const auto& e) { return e.path == "purepy.libs/libx.so"; });
        REQUIRE(line != written.record().end());
        CHECK(line->size == 4u);
    }
    fs::remove(out);
    CHECK_THROWS_AS(wheel::write_wheel_changes(wheel, wheel::WheelChanges{{}, {wheel::AddedMember{wheel.record_path(), bytes, 0100644}}, {}}, out, {}),
                    InputError);
    CHECK_THROWS_AS(wheel::write_wheel_changes(
                        wheel, wheel::WheelChanges{{}, {wheel::AddedMember{wheel.dist_info() + "/extra", bytes, 0100644}}, {}},
                        out, {}),
                    InputError);
    auto existing = wheel.archive().members().front().name;
    CHECK_THROWS_AS(wheel::write_wheel_changes(wheel, wheel::WheelChanges{{}, {wheel::AddedMember{existing, bytes, 0100644}}, {}}, out, {}), InputError);
    CHECK_FALSE(fs::exists(out));
    fs::remove_all(directory);
}

TEST_CASE("--map OLD=NEW parses, anything else is an input error") {
    CHECK(repair::parse_symbol_map("_Z1fi=_Z1fib") == std::pair<std::string, std::string>{"_Z1fi", "_Z1fib"});
    for (const char* bad : {"", "_Z1fi", "=_Z1fib", "_Z1fi=", "a=b=c"}) CHECK_THROWS_AS(repair::parse_symbol_map(bad), InputError);
}

#if defined(__x86_64__)
TEST_CASE("shim: a forwarder passes the values its rules give, not zero") {
    ShimSpec spec;
    spec.torch_version = "9.9.9";
    spec.machine = "x86_64";
    ShimSymbol forward;  // long old(const char*)  ->  long strtol(const char*, char** = nullptr, int base = 16)
    forward.name = "wheelfix_unit_old_hex";
    forward.target = "strtol";
    forward.target_library = "libc.so.6";
    forward.integer_params_before = 1;
    forward.appended_params = 2;
    forward.appended_values = {0, 16};  // rsi = null (xor), edx = 16 (mov $16,%edx)
    spec.symbols = {forward};
    auto library = abi::build_shim(spec);
    auto path = write_temporary(library);
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::filesystem::remove(path);
    REQUIRE_MESSAGE(handle != nullptr, ::dlerror());
    using Garbage = long (*)(const char*, void*, long);
    void* old_address = ::dlsym(handle, "wheelfix_unit_old_hex");
    REQUIRE(old_address != nullptr);
    auto old = reinterpret_cast<Garbage>(old_address);
    CHECK(old("1f", reinterpret_cast<void*>(0x10), 99) == 31);
    CHECK(old("17", reinterpret_cast<void*>(0x10), 10) == 23);  // base 16, not what the caller left
    ::dlclose(handle);
}
#endif

TEST_CASE("shim: a forwarder without a value for each appended parameter is refused") {
    auto spec = sample_spec("x86_64");
    for (auto& symbol : spec.symbols)
        if (symbol.target) symbol.appended_values.clear();
    CHECK_THROWS_AS(abi::build_shim(spec), abi::ShimError);
    for (auto& symbol : spec.symbols)
        if (symbol.target) symbol.appended_values = {1, 2};
    CHECK_THROWS_AS(abi::build_shim(spec), abi::ShimError);
}

TEST_CASE("shim: a different appended value is a different shim") {
    auto zero = sample_spec("x86_64");
    auto one = sample_spec("x86_64");
    for (auto& symbol : one.symbols)
        if (symbol.target) symbol.appended_values = {1};
    CHECK(abi::build_shim(zero).file_name != abi::build_shim(one).file_name);
}
