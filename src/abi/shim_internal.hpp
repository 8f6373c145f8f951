// Private to the shim generator (include/wheelfix/abi/shim.hpp): the machine-code
// emitters of each architecture and the ELF image writer they feed.
//
// Contract:
// - A CodeModel emits position-dependent code for final virtual addresses: a
//   forwarder (zero the listed integer argument registers, then jump through the
//   GOT slot at `slot`) and a stub (write `length` bytes at `message` to fd 2, then
//   die with SIGABRT / exit_group(134)). Sizes are known before addresses, so the
//   writer lays out first and emits once.
// - write_image(plan, code) returns the complete ELF64 little-endian ET_DYN:
//   three PT_LOADs (R: headers and tables; R+X: .text; RW: .dynamic and .got)
//   aligned for 64 KiB pages, PT_DYNAMIC, PT_GNU_RELRO, PT_GNU_STACK, and section
//   headers for every table. Deterministic: the same plan gives the same bytes.
#pragma once

#include "wheelfix/util/little_endian.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::abi::shim_detail {

// One register a forwarder sets before its jump: an appended parameter's value.
struct ArgumentValue {
    unsigned reg = 0;           // index into the integer argument registers
    std::uint16_t value = 0;    // abi/appended.hpp: 0..65535
};

struct CodeModel {
    std::string_view machine;             // "x86_64", "aarch64"
    std::uint16_t e_machine = 0;          // EM_*
    std::uint32_t glob_dat = 0;           // R_*_GLOB_DAT
    unsigned integer_argument_registers = 0;
    bool sret_takes_argument_register = false;  // x86_64: the hidden pointer is rdi
    std::uint8_t padding = 0;             // fills the gaps between functions
    std::size_t (*forwarder_size)(std::span<const ArgumentValue> set) = nullptr;
    void (*emit_forwarder)(std::vector<std::uint8_t>& out, std::uint64_t at, std::uint64_t slot,
                           std::span<const ArgumentValue> set) = nullptr;
    std::size_t stub_size = 0;
    void (*emit_stub)(std::vector<std::uint8_t>& out, std::uint64_t at, std::uint64_t message,
                      std::uint32_t length) = nullptr;
};

const CodeModel& x86_64_code();
const CodeModel& aarch64_code();
// nullptr for machines without a code model.
const CodeModel* code_model_for(std::string_view machine);


struct ImageFunction {
    std::string name;                     // the symbol defined
    bool forwarder = false;
    std::string target;                   // forwarder: the undefined successor
    std::vector<ArgumentValue> set;       // forwarder: appended parameters' registers and values
    std::string message;                  // stub: the text written to stderr
};

struct ImagePlan {
    std::string soname;
    std::string runpath;                  // empty: no DT_RUNPATH
    std::string version_node;
    std::vector<std::string> needed;      // in order
    std::vector<ImageFunction> functions; // in the order the spec gave
};

std::vector<std::uint8_t> write_image(const ImagePlan& plan, const CodeModel& code);

}  // namespace wheelfix::abi::shim_detail
