// Bounds-checked, endian-aware integer and string reads (see elf_bytes.hpp).
//
// Contract: nothing here indexes the image before checking the whole range; every
// failure is an ElfError with a one-line message naming what was being read.
#include "elf_bytes.hpp"

#include <bit>
#include <cstring>
#include <limits>

namespace wheelfix::elf {

void fail(const std::string& message) { throw ElfError(message); }

std::string hex(std::uint64_t value) {
    static const char digits[] = "0123456789abcdef";
    std::string text;
    do {
        text.insert(text.begin(), digits[value & 0xf]);
        value >>= 4;
    } while (value != 0);
    return "0x" + text;
}

Extent ElfBytes::range(std::uint64_t offset, std::uint64_t size, const char* what) const {
    if (offset > file_size() || size > file_size() - offset)
        fail(std::string(what) + " past end of file");
    return {offset, size};
}

Extent ElfBytes::table(std::uint64_t offset, std::uint64_t count, std::uint64_t entsize,
                       const char* what) const {
    if (entsize != 0 && count > std::numeric_limits<std::uint64_t>::max() / entsize)
        fail(std::string(what) + " past end of file");
    return range(offset, count * entsize, what);
}

std::uint64_t ElfBytes::read_uint(std::uint64_t offset, unsigned width, const char* what) const {
    range(offset, width, what);
    require_present(present_, offset, offset + width);
    const std::uint8_t* p = bytes_.data() + offset;
    std::uint64_t value = 0;
    for (unsigned i = 0; i < width; ++i) {
        const unsigned byte_index = endian_ == Endian::little ? width - 1 - i : i;
        value = (value << 8) | p[byte_index];
    }
    return value;
}

std::uint8_t ElfBytes::u8(std::uint64_t offset, const char* what) const {
    return static_cast<std::uint8_t>(read_uint(offset, 1, what));
}

std::uint16_t ElfBytes::u16(std::uint64_t offset, const char* what) const {
    return static_cast<std::uint16_t>(read_uint(offset, 2, what));
}

std::uint32_t ElfBytes::u32(std::uint64_t offset, const char* what) const {
    return static_cast<std::uint32_t>(read_uint(offset, 4, what));
}

std::uint64_t ElfBytes::u64(std::uint64_t offset, const char* what) const {
    return read_uint(offset, 8, what);
}

std::uint64_t ElfBytes::word(std::uint64_t offset, const char* what) const {
    return is64() ? u64(offset, what) : u32(offset, what);
}

std::int64_t ElfBytes::sword(std::uint64_t offset, const char* what) const {
    if (is64()) return static_cast<std::int64_t>(u64(offset, what));
    return static_cast<std::int32_t>(u32(offset, what));
}

namespace {

std::uint32_t swapped(std::uint32_t word) { return __builtin_bswap32(word); }
std::uint64_t swapped(std::uint64_t word) { return __builtin_bswap64(word); }

// find_word's loop for one width and byte order: an unaligned load, a swap when
// the file's order is not this machine's, an unsigned range test.
template <class Word>
std::optional<std::uint64_t> scan_words(const std::uint8_t* bytes, std::uint64_t from, std::uint64_t to,
                                        std::uint64_t low, std::uint64_t high, bool swap) {
    const std::uint64_t span = high - low;
    for (std::uint64_t at = from; at < to; ++at) {
        Word word;
        std::memcpy(&word, bytes + at, sizeof word);
        if (swap) word = swapped(word);
        if (static_cast<std::uint64_t>(word) - low <= span) return at;
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> ElfBytes::find_word(std::uint64_t from, std::uint64_t to, std::uint64_t low,
                                                 std::uint64_t high, const char* what) const {
    if (from >= to || low > high) return std::nullopt;
    const std::uint64_t width = word_size();
    range(from, to - from, what);
    range(to - 1, width, what);  // the last word read fits too
    require_present(present_, from, to - 1 + width);
    const bool swap = (endian_ == Endian::little) != (std::endian::native == std::endian::little);
    return is64() ? scan_words<std::uint64_t>(bytes_.data(), from, to, low, high, swap)
                  : scan_words<std::uint32_t>(bytes_.data(), from, to, low, high, swap);
}

std::string_view ElfBytes::string_at(Extent strings, std::uint64_t offset, const char* what) const {
    range(strings.offset, strings.size, what);
    if (offset >= strings.size)
        fail(std::string(what) + " offset " + hex(offset) + " outside its string table");
    const char* start = reinterpret_cast<const char*>(bytes_.data() + strings.offset + offset);
    const std::uint64_t room = strings.size - offset;
    const void* nul = std::memchr(start, 0, room);
    const std::uint64_t begin = strings.offset + offset;
    if (nul == nullptr) {
        require_present(present_, begin, begin + room);
        fail(std::string(what) + " is not NUL-terminated");
    }
    const std::uint64_t length = static_cast<std::uint64_t>(static_cast<const char*>(nul) - start);
    require_present(present_, begin, begin + length + 1);
    return {start, static_cast<std::size_t>(length)};
}

std::span<const std::uint8_t> ElfBytes::span(Extent extent) const {
    range(extent.offset, extent.size, "byte range");
    require_present(present_, extent.offset, extent.offset + extent.size);
    return bytes_.subspan(extent.offset, extent.size);
}

}  // namespace wheelfix::elf
