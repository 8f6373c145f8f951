// normalised / folded / name_collisions (wheel/name_fold.hpp has the contract).
//
// Technique: decode UTF-8 one code point at a time; look the code point up in two
// sorted tables (name_fold_tables.inc) with a binary search; re-encode. The tables
// were generated once with Python's unicodedata:
//   NFD of each code point c in the ranges where unicodedata.normalize("NFD", chr(c)) != chr(c)
//   chr(c).lower() where it is one code point other than chr(c)
// so the decompositions are the standard's, not hand-written.
#include "wheelfix/wheel/name_fold.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>

namespace wheelfix::wheel {

namespace {

struct Decomposition {
    std::uint32_t code;
    std::array<std::uint32_t, 3> parts;  // 0 ends it early
};
struct Lowercase {
    std::uint32_t code, lower;
};

#include "name_fold_tables.inc"

template <class Table>
const auto* lookup(const Table& table, std::uint32_t code) {
    const auto* end = std::end(table);
    const auto* it = std::lower_bound(std::begin(table), end, code, [](const auto& entry, std::uint32_t c) { return entry.code < c; });
    return it != end && it->code == code ? it : nullptr;
}

void append_utf8(std::string& out, std::uint32_t code) {
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    }
}

// The code point at text[at] and its length in bytes; length 0 when the bytes are
// not valid UTF-8 there (the caller keeps that byte as it is).
std::pair<std::uint32_t, std::size_t> decode(std::string_view text, std::size_t at) {
    const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(text[i]); };
    const std::uint8_t lead = byte(at);
    if (lead < 0x80) return {lead, 1};
    const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
    if (length == 0 || lead >= 0xF8 || at + length > text.size()) return {0, 0};
    std::uint32_t code = lead & (0x7F >> length);
    for (std::size_t i = 1; i < length; ++i) {
        if ((byte(at + i) & 0xC0) != 0x80) return {0, 0};
        code = (code << 6) | (byte(at + i) & 0x3F);
    }
    return {code, length};
}

template <class Map>
std::string transform(std::string_view text, Map map) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        const auto [code, length] = decode(text, at);
        if (length == 0) {
            out += text[at++];
            continue;
        }
        map(out, code);
        at += length;
    }
    return out;
}

}  // namespace

std::string normalised(std::string_view name) {
    return transform(name, [](std::string& out, std::uint32_t code) {
        const Decomposition* d = lookup(kDecompositions, code);
        if (d == nullptr) return append_utf8(out, code);
        for (std::uint32_t part : d->parts)
            if (part != 0) append_utf8(out, part);
    });
}

namespace {

std::string lowercased(std::string_view name) {
    return transform(name, [](std::string& out, std::uint32_t code) {
        const Lowercase* l = lookup(kLowercase, code);
        append_utf8(out, l ? l->lower : code);
    });
}

const char* why_they_collide(const std::string& a, const std::string& b) {
    if (normalised(a) == normalised(b)) return "differ only in Unicode normalisation (NFC/NFD)";
    if (lowercased(a) == lowercased(b)) return "differ only in case";
    return "differ only in case and Unicode normalisation";
}

}  // namespace

std::string folded(std::string_view name) { return lowercased(normalised(name)); }

std::vector<NameCollision> name_collisions(const std::vector<std::string>& names) {
    std::vector<NameCollision> collisions;
    std::map<std::string, const std::string*> seen;  // folded -> the first name
    for (const std::string& name : names) {
        auto [it, inserted] = seen.emplace(folded(name), &name);
        if (inserted || *it->second == name) continue;
        collisions.push_back({*it->second, name, why_they_collide(*it->second, name)});
    }
    return collisions;
}

}  // namespace wheelfix::wheel
