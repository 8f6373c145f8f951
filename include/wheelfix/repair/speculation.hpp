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
// Contract: speculate_edits(archive, member, request_for) reads the deflated
// member's first kSpeculativeHead inflated bytes (where linkers put the dynamic
// tables: elf/streamed_elf.hpp's first-load window) into a StreamedElf, and the
// ranges its readers then want past them through zip::FarReader (which enters the
// deflate stream near them without inflating what comes before: PT_DYNAMIC's range
// with a locator that recognizes its dynamic array, from the program headers'
// PT_DYNAMIC and PT_LOAD entries, so that the decode stops there; others, the
// section headers at the end, decoding to the end), as many rounds as
// read_streamed would take; parses that partial image, asks `request_for(elf)`
// which edits the command wants (nullopt: none), plans them (elf::plan_edits) and
// returns the byte edits. nullopt, never an error, when the command wants none,
// the plan changes nothing, the member is not a deflated ELF file, a wanted range
// lies where neither read reaches, or the ELF or the edit fails on the partial
// image (the real pass then meets the same failure and reports it, naming the
// member). An InputError or CodecError from the member's bytes is such a failure
// too: the pass reads every byte and says what is wrong with them.
// Nothing here is trusted: the bytes FarReader gives are not CRC-checked. The
// executor uses the answer only to decide which edits the one pass hashes in
// place (zip::EditedDigest), and uses that hash only when the edits it plans
// afterwards on the real bytes are these, byte for byte (and the splice's header
// CRC-32, from the real pass's index, equals the hashed content's: zip/splice.hpp).
// A wrong speculation costs the second read it was meant to save, never a wrong
// byte. Cost: one inflate of the head, plus FarReader's (a few percent of a full
// inflate on real libraries); memory: the head, the kept ranges and
// a ring per far read (zip::FarReader::kRing at most). The executor runs it as the
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

inline constexpr std::uint64_t kSpeculativeHead = std::uint64_t(16) << 20;
inline constexpr std::uint64_t kSpeculationLag = std::uint64_t(32) << 20;

using RequestFor = std::function<std::optional<elf::EditRequest>(const elf::ElfFile& elf)>;
using FarViewUse = std::function<void(const elf::ElfFile& elf)>;

// The reads speculate_edits makes, for any reader of that partial image: use(elf)
// runs on its parse, and again after each round of ranges it found missing; false,
// never an error, in the cases where speculate_edits says nullopt for the reading.
// repair's foresight reads its big members' imports so (repair/foresight.hpp).
bool read_far_view(const zip::Archive& archive, const zip::Member& member, const FarViewUse& use);

std::optional<ByteEdits> speculate_edits(const zip::Archive& archive, const zip::Member& member,
                                         const RequestFor& request_for);

}  // namespace wheelfix::repair
