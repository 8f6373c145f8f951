// Little-endian appends to a byte vector: the zip records' byte order, and the
// shim's ELF image's (ELF64 little-endian whatever the host).
#pragma once

#include <cstdint>
#include <vector>

namespace wheelfix {

inline void put16(std::vector<std::uint8_t>& out, std::uint16_t value) {
    for (int i = 0; i < 2; ++i) out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}
inline void put32(std::vector<std::uint8_t>& out, std::uint32_t value) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}
inline void put64(std::vector<std::uint8_t>& out, std::uint64_t value) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

}  // namespace wheelfix
