// Planning a big member's edits before its one pass (repair/plan.hpp, step 2): the
// new content's SHA-256 (for RECORD) and repair's analysis of it (for its proof) can
// be computed while the original streams past only if the edits are known before its
// first byte passes; planned after the pass, they cost a second full inflate. The
// editor reads little of a file (the ELF and program headers, the dynamic segment
// and its tables, the section headers), which linkers put near its start and end.
//
// Contract: speculate_edits(archive, member, request_for) reads the member's far
// view (wheel/member_reader.hpp read_far_view: its head and the ranges its readers
// want past it, for a fraction of a full inflate), asks `request_for(elf)` on each
// parse of it which edits the command wants (nullopt: none), plans them
// (elf::plan_edits) and returns the byte edits of the last parse. nullopt, never an
// error, when the command wants none, the plan changes nothing, or the far view
// cannot be had (the real pass then meets any fault of the member and reports it).
// Nothing here is trusted (the far view's bytes are not CRC-checked): the executor
// uses the answer only as plan.hpp step 2 says, so a wrong speculation costs the
// second read it was meant to save, never a wrong byte. It runs as the pass's sink's
// start job, on the pass's second thread, while the inflate goes on; the chunks
// inflated meanwhile queue for the sink, kSpeculationLag bytes at most (why 32 MiB,
// and what the far reads cost: docs/decisions.md, "Big members: bounded memory and
// one inflate").
#pragma once

#include "wheelfix/elf/editor.hpp"
#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/util/byte_edit.hpp"
#include "wheelfix/zip/archive.hpp"

#include <cstdint>
#include <functional>
#include <optional>

namespace wheelfix::repair {

inline constexpr std::uint64_t kSpeculationLag = std::uint64_t(32) << 20;

using RequestFor = std::function<std::optional<elf::EditRequest>(const elf::ElfFile& elf)>;
std::optional<ByteEdits> speculate_edits(const zip::Archive& archive, const zip::Member& member,
                                         const RequestFor& request_for);

}  // namespace wheelfix::repair
