// x86_64 code for shim libraries (SysV ABI): forwarders and stubs.
//
// Forwarder: for every register of an appended parameter `xor %eNN,%eNN` when its
// value is 0, `mov $value,%eNN` otherwise (a 32-bit write clears or zero-extends
// into the whole 64-bit register), then `jmp *slot(%rip)` — a tail
// jump, so the successor returns straight to the extension with the stack and
// every other argument register (and the xmm registers) untouched.
// Stub: write(2, message, length), then tgkill(getpid(), gettid(), SIGABRT); if the
// signal is caught or blocked, exit_group(134); ud2 in case even that returns.
// Raw syscalls only: the stub needs no libc and no stack.
#include "shim_internal.hpp"

#include <elf.h>

#include <array>
#include <stdexcept>

namespace wheelfix::abi::shim_detail {

namespace {

// `xor %eNN,%eNN` for rdi, rsi, rdx, rcx, r8, r9 (SysV integer argument order).
constexpr std::array<std::array<std::uint8_t, 3>, 6> kZero = {{
    {0x31, 0xff, 0x00},  // xor %edi,%edi
    {0x31, 0xf6, 0x00},  // xor %esi,%esi
    {0x31, 0xd2, 0x00},  // xor %edx,%edx
    {0x31, 0xc9, 0x00},  // xor %ecx,%ecx
    {0x45, 0x31, 0xc0},  // xor %r8d,%r8d
    {0x45, 0x31, 0xc9},  // xor %r9d,%r9d
}};

std::size_t zero_size(unsigned reg) { return reg < 4 ? 2 : 3; }

// `mov $imm32,%eNN` (b8+r imm32; r8d and r9d take the REX.B prefix 41).
constexpr std::array<std::uint8_t, 6> kMovImmediate = {0xbf, 0xbe, 0xba, 0xb9, 0xb8, 0xb9};

std::size_t set_size(const ArgumentValue& argument) {
    if (argument.value == 0) return zero_size(argument.reg);
    return argument.reg < 4 ? 5 : 6;
}

std::int32_t rip_displacement(std::uint64_t target, std::uint64_t next_instruction) {
    auto delta = static_cast<std::int64_t>(target - next_instruction);
    if (delta < INT32_MIN || delta > INT32_MAX) throw std::logic_error("shim: rip-relative target out of range");
    return static_cast<std::int32_t>(delta);
}

void bytes(std::vector<std::uint8_t>& out, std::initializer_list<std::uint8_t> list) {
    out.insert(out.end(), list.begin(), list.end());
}

// mov $imm32, %eax/%edi/%edx: b8/bf/ba + imm32.
void mov_imm32(std::vector<std::uint8_t>& out, std::uint8_t opcode, std::uint32_t value) {
    out.push_back(opcode);
    put32(out, value);
}

constexpr std::uint8_t kMovEax = 0xb8, kMovEdi = 0xbf, kMovEdx = 0xba;

void syscall(std::vector<std::uint8_t>& out, std::uint32_t number) {
    mov_imm32(out, kMovEax, number);
    bytes(out, {0x0f, 0x05});
}

std::size_t forwarder_size(std::span<const ArgumentValue> set) {
    std::size_t size = 6;  // jmp *disp32(%rip)
    for (const auto& argument : set) size += set_size(argument);
    return size;
}

void emit_forwarder(std::vector<std::uint8_t>& out, std::uint64_t at, std::uint64_t slot,
                    std::span<const ArgumentValue> set) {
    auto start = out.size();
    for (const auto& [reg, value] : set) {
        if (reg >= kZero.size()) throw std::logic_error("shim: x86_64 has 6 integer argument registers");
        if (value == 0) {
            out.insert(out.end(), kZero[reg].begin(), kZero[reg].begin() + static_cast<long>(zero_size(reg)));
            continue;
        }
        if (reg >= 4) out.push_back(0x41);
        mov_imm32(out, kMovImmediate[reg], value);
    }
    bytes(out, {0xff, 0x25});  // jmp *disp32(%rip)
    put32(out, static_cast<std::uint32_t>(rip_displacement(slot, at + (out.size() - start) + 4)));
}

constexpr std::size_t kStubSize = 72;

void emit_stub(std::vector<std::uint8_t>& out, std::uint64_t at, std::uint64_t message, std::uint32_t length) {
    auto start = out.size();
    bytes(out, {0x48, 0x8d, 0x35});  // lea message(%rip),%rsi
    put32(out, static_cast<std::uint32_t>(rip_displacement(message, at + 7)));
    mov_imm32(out, kMovEdx, length);
    mov_imm32(out, kMovEdi, 2);
    syscall(out, 1);                    // write(2, message, length)
    syscall(out, 39);                   // getpid()
    bytes(out, {0x41, 0x89, 0xc4});     // mov %eax,%r12d
    syscall(out, 186);                  // gettid()
    bytes(out, {0x89, 0xc6});           // mov %eax,%esi
    bytes(out, {0x44, 0x89, 0xe7});     // mov %r12d,%edi
    mov_imm32(out, kMovEdx, 6);         // SIGABRT
    syscall(out, 234);                  // tgkill(pid, tid, SIGABRT)
    mov_imm32(out, kMovEdi, 134);
    syscall(out, 231);                  // exit_group(134)
    bytes(out, {0x0f, 0x0b});           // ud2
    if (out.size() - start != kStubSize) throw std::logic_error("shim: x86_64 stub size changed");
}

}  // namespace

const CodeModel& x86_64_code() {
    static const CodeModel model{"x86_64", EM_X86_64, R_X86_64_GLOB_DAT, 6, true, 0xcc,
                                 forwarder_size, emit_forwarder, kStubSize, emit_stub};
    return model;
}

}  // namespace wheelfix::abi::shim_detail
