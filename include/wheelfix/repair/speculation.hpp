// Planning a big member's edits before its one pass (repair/plan.hpp, step 2).
//
// Why: the new content's SHA-256 (for RECORD), and repair's analysis of it for its
// proof, can be computed while the original streams past only if the edits are
// known when its first byte passes; planned after the pass, as the executor plans
// them, they cost a second full inflate of the member. The editor reads little of the file:
// the ELF header, the program headers, the dynamic segment and its tables, the
// section headers. Linkers put some of that at
// the start and the rest near the end, so it can be read for a fraction of a full
// inflate.
//
// Contract: speculate_edits(archive, member, request_for) reads the member's far
// view (wheel/member_reader.hpp read_far_view: its head and the ranges its readers
// want past it, for a fraction of a full inflate), asks `request_for(elf)` on each
// parse of it which edits the command wants (nullopt: none), plans them
// (elf::plan_edits) and returns the byte edits of the last parse. nullopt, never an
// error, when the command wants none, the plan changes nothing, or the far view
// cannot be had (read_far_view false: the real pass then meets any failure of the
// member's bytes and reports it, naming the member).
// Nothing here is trusted: the bytes FarReader gives are not CRC-checked. The
// executor uses the answer only to decide which edits the one pass hashes in
// place (zip::EditedDigest), and uses that hash only when the edits it plans
// afterwards on the real bytes are these, byte for byte (and the splice's header
// CRC-32, from the real pass's index, equals the hashed content's: zip/splice.hpp).
// A wrong speculation costs the second read it was meant to save, never a wrong
// byte. Cost and memory: read_far_view's. The executor runs it as the
// pass's sink's start job, on the pass's second thread, while the inflate goes on:
// the chunks inflated meanwhile queue for the sink, kSpeculationLag bytes at most;
// then the inflating thread hashes the queued chunks for the input's SHA-256
// (SinkPipeline's shared job) until the sink takes them. Why 32 MiB of lag, and
// what the far reads cost: docs/decisions.md, "Big members: bounded memory and one
// inflate".
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
