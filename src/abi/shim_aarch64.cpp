// aarch64 code for shim libraries (AAPCS64): forwarders and stubs.
//
// Forwarder: `mov xN, xzr` (value 0) or `movz xN, #value` for every register of
// an appended parameter, then
// `adrp x16, slot; ldr x16, [x16, #:lo12:slot]; br x16` — x16 (IP0) is the
// intra-procedure-call scratch register the ABI gives veneers, so nothing the
// caller or callee relies on is touched; lr still points into the extension.
// Stub: write(2, message, length) with `svc #0` (x8 = 64), then
// tgkill(getpid(), gettid(), SIGABRT); should the signal be caught or blocked,
// exit_group(134); `brk` in case even that returns. No libc, no stack.
#include "shim_internal.hpp"

#include <elf.h>

#include <stdexcept>

namespace wheelfix::abi::shim_detail {

namespace {

constexpr unsigned kIp0 = 16;

void insn(std::vector<std::uint8_t>& out, std::uint32_t word) { put32(out, word); }

std::uint32_t mov_register(unsigned to, unsigned from) { return 0xAA0003E0u | (from << 16) | to; }  // orr xd, xzr, xm
std::uint32_t mov_zero(unsigned reg) { return mov_register(reg, 31); }                         // mov xN, xzr
std::uint32_t movz(unsigned reg, std::uint32_t imm16) { return 0xD2800000u | ((imm16 & 0xffff) << 5) | reg; }
std::uint32_t movk_lsl16(unsigned reg, std::uint32_t imm16) { return 0xF2A00000u | ((imm16 & 0xffff) << 5) | reg; }
constexpr std::uint32_t kSvc0 = 0xD4000001u;
constexpr std::uint32_t kBrk = 0xD4207D00u;  // brk #0x3e8

std::uint32_t adrp(unsigned reg, std::uint64_t pc, std::uint64_t target) {
    auto pages = static_cast<std::int64_t>((target & ~0xfffull) - (pc & ~0xfffull)) / 4096;
    if (pages < -(1 << 20) || pages >= (1 << 20)) throw std::logic_error("shim: adrp target out of range");
    auto imm = static_cast<std::uint32_t>(pages) & 0x1fffff;
    return 0x90000000u | ((imm & 3) << 29) | ((imm >> 2) << 5) | reg;
}

// ldr xT, [xN, #offset] with offset = the low 12 bits of an 8-aligned address.
std::uint32_t ldr_lo12(unsigned reg, unsigned base, std::uint64_t address) {
    if (address % 8 != 0) throw std::logic_error("shim: GOT slot not 8-aligned");
    return 0xF9400000u | (static_cast<std::uint32_t>((address & 0xfff) / 8) << 10) | (base << 5) | reg;
}

// add xD, xN, #lo12(address)
std::uint32_t add_lo12(unsigned reg, unsigned base, std::uint64_t address) {
    return 0x91000000u | (static_cast<std::uint32_t>(address & 0xfff) << 10) | (base << 5) | reg;
}

std::uint32_t br(unsigned reg) { return 0xD61F0000u | (reg << 5); }

void syscall(std::vector<std::uint8_t>& out, std::uint32_t number) {
    insn(out, movz(8, number));
    insn(out, kSvc0);
}

std::size_t forwarder_size(std::span<const ArgumentValue> set) { return 4 * (set.size() + 3); }

void emit_forwarder(std::vector<std::uint8_t>& out, std::uint64_t at, std::uint64_t slot,
                    std::span<const ArgumentValue> set) {
    for (const auto& [reg, value] : set) {
        if (reg >= 8) throw std::logic_error("shim: aarch64 has 8 integer argument registers");
        insn(out, value == 0 ? mov_zero(reg) : movz(reg, value));
    }
    std::uint64_t pc = at + 4 * set.size();
    insn(out, adrp(kIp0, pc, slot));
    insn(out, ldr_lo12(kIp0, kIp0, slot));
    insn(out, br(kIp0));
}

constexpr std::size_t kStubSize = 4 * 21;  // 21 instructions

void emit_stub(std::vector<std::uint8_t>& out, std::uint64_t at, std::uint64_t message, std::uint32_t length) {
    auto start = out.size();
    insn(out, movz(0, 2));                      // fd 2
    insn(out, adrp(1, at + 4, message));        // x1 = message
    insn(out, add_lo12(1, 1, message));
    insn(out, movz(2, length & 0xffff));        // x2 = length
    insn(out, movk_lsl16(2, length >> 16));
    syscall(out, 64);                           // write
    syscall(out, 172);                          // getpid
    insn(out, mov_register(19, 0));             // x19 = pid
    syscall(out, 178);                          // gettid
    insn(out, mov_register(1, 0));              // x1 = tid
    insn(out, mov_register(0, 19));             // x0 = pid
    insn(out, movz(2, 6));                      // SIGABRT
    syscall(out, 131);                          // tgkill
    insn(out, movz(0, 134));
    syscall(out, 94);                           // exit_group(134)
    insn(out, kBrk);
    if (out.size() - start != kStubSize) throw std::logic_error("shim: aarch64 stub size changed");
}

}  // namespace

const CodeModel& aarch64_code() {
    static const CodeModel model{"aarch64", EM_AARCH64, R_AARCH64_GLOB_DAT, 8, false, 0x00,
                                 forwarder_size, emit_forwarder, kStubSize, emit_stub};
    return model;
}

}  // namespace wheelfix::abi::shim_detail
