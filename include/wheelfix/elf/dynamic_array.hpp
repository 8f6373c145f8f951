// Recognising PT_DYNAMIC's array in bytes read out of place: far reads
// (zip/far_read.hpp) inflate from a point whose offset
// in the file is unknown until something in the bytes is recognised.
//
// Contract: find_dynamic_array(headers, bytes), `headers` an ElfFile of the file's
// program headers (ElfFile::parse_headers of its head), gives the first position
// in `bytes` at which PT_DYNAMIC's p_filesz bytes read, in the file's class and
// byte order, as a dynamic array: a small first tag (linkers put DT_NEEDED first),
// then known tags (DT_NULL..DT_RELRENT, the OS ranges DT_VALRNGLO..DT_VERNEEDNUM
// and DT_AUXILIARY..DT_FILTER) up to a DT_NULL, at least four entries before it,
// DT_STRTAB and DT_SYMTAB among them at addresses a PT_LOAD maps, and DT_SYMENT,
// when there, the class's symbol size. nullopt when nothing there reads so, or
// the file has no PT_DYNAMIC (or several), or its p_filesz lies outside [four
// entries, kMaxDynamicArray]. A heuristic for a caller that checks its answer
// afterwards: bytes elsewhere that happen to read so give a wrong position, and
// so may the array's own tail when `bytes` begin inside it (with DT_NULL padding
// after it, the array read from a later entry on is one too): hand it bytes from
// before the array.
// Reads go through ElfBytes: each position's first word is tested first
// (ElfBytes::find_word, one load a position), so scanning 20 MB costs a few ms.
#pragma once

#include "wheelfix/elf/elf_file.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace wheelfix::elf {

inline constexpr std::uint64_t kMaxDynamicArray = std::uint64_t(16) << 10;

std::optional<std::size_t> find_dynamic_array(const ElfFile& headers, std::span<const std::uint8_t> bytes);

}  // namespace wheelfix::elf
