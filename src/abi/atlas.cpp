// The torch atlas (atlas.hpp has the contract and the file format).
#include "wheelfix/abi/atlas.hpp"

#include "symbol_index_internal.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/output_file.hpp"
#include "wheelfix/util/timings.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <charconv>
#include <deque>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace wheelfix::abi {

namespace {

namespace fs = std::filesystem;

using detail::escape;
using detail::gzip;
using detail::symbol_key;
using detail::unescape;

constexpr std::string_view kMagic = "wheelfix-torch-atlas";
constexpr int kFormatVersion = 1;
// The bundled atlas is 1.5 MB (17.6 MB of text for 18 releases); user atlases grow
// by ~1 MB of text per release. Bounds that keep a hostile file within 512 MiB.
constexpr std::uint64_t kMaxInflated = 256ull << 20;
constexpr std::uint64_t kMaxAtlasFile = 64ull << 20;

// ---- names ------------------------------------------------------------------

std::vector<std::uint64_t> release_numbers(std::string_view version) {
    std::vector<std::uint64_t> numbers;
    std::uint64_t value = 0;
    bool digits = false;
    for (char c : version) {
        if (c >= '0' && c <= '9') {
            value = value * 10 + static_cast<std::uint64_t>(c - '0');
            digits = true;
        } else if (c == '.' && digits) {
            numbers.push_back(value);
            value = 0;
            digits = false;
        } else {
            break;
        }
    }
    if (digits) numbers.push_back(value);
    return numbers;
}

std::string field(const std::string& value) { return value.empty() ? "-" : escape(value); }

// ---- building -----------------------------------------------------------------

AtlasEntry entry_of(const SymbolIndex& index) {
    AtlasEntry entry;
    entry.torch_version = index.torch_version;
    entry.cuda_version = index.cuda_version;
    entry.wheel = fs::path(index.source).filename().string();
    entry.sha256 = index.source_sha256;
    tags_from_wheel_name(entry.wheel, entry.arch, entry.python_tag);
    return entry;
}

// The build an entry belongs to: its entries differ only in CPython tag.
std::tuple<std::string, std::string, std::string> build_of(const AtlasEntry& entry) {
    return {entry.torch_version, entry.cuda_version, entry.arch};
}

auto entry_order(const AtlasEntry& entry) {
    return std::make_tuple(release_numbers(entry.torch_version), entry.torch_version, entry.cuda_version, entry.arch,
                           entry.python_tag, entry.wheel);
}

struct SymbolGroup {
    std::string key;
    std::uint8_t type;
    bool operator<(const SymbolGroup& other) const { return std::tie(key, type) < std::tie(other.key, other.type); }
};

std::string atlas_text(const std::vector<AtlasEntry>& entries, const std::vector<AtlasLibrary>& libraries,
                       const std::vector<std::vector<std::uint32_t>>& sets,
                       const std::vector<std::pair<SymbolGroup, std::uint32_t>>& symbols) {
    std::string out = std::string(kMagic) + " " + std::to_string(kFormatVersion) + "\n";
    out += "entries " + std::to_string(entries.size()) + "\n";
    for (const AtlasEntry& entry : entries)
        out += field(entry.torch_version) + " " + field(entry.cuda_version) + " " + field(entry.arch) + " " +
               field(entry.python_tag) + " " + field(entry.wheel) + " " + field(entry.sha256) + "\n";
    out += "libraries " + std::to_string(libraries.size()) + "\n";
    for (const AtlasLibrary& library : libraries) {
        out += "L " + std::to_string(library.entry) + " " + field(library.file_name) + " " + field(library.soname) + "\n";
        for (const std::string& needed : library.needed) out += "n " + escape(needed) + "\n";
        for (const std::string& version : library.version_definitions) out += "d " + escape(version) + "\n";
        for (const VersionRequirement& need : library.version_needs)
            out += "r " + escape(need.file) + " " + escape(need.version) + "\n";
    }
    out += "sets " + std::to_string(sets.size()) + "\n";
    for (const std::vector<std::uint32_t>& set : sets) {
        std::uint32_t previous = 0;
        for (std::size_t i = 0; i < set.size(); ++i) {
            if (i) out += ' ';
            out += std::to_string(set[i] - previous);
            previous = set[i];
        }
        out += '\n';
    }
    out += "symbols " + std::to_string(symbols.size()) + "\n";
    std::string_view previous;
    for (const auto& [group, set] : symbols) {
        std::size_t shared = 0;
        while (shared < previous.size() && shared < group.key.size() && previous[shared] == group.key[shared]) ++shared;
        out += std::to_string(shared) + " " + std::to_string(group.type) + " " + std::to_string(set) + " ";
        out.append(group.key, shared);
        out += '\n';
        previous = group.key;
    }
    out += "end\n";
    return out;
}

// ---- reading -----------------------------------------------------------------

class AtlasParser {
public:
    AtlasParser(std::string_view text, const std::string& where, std::size_t position = 0, std::size_t line_number = 0)
        : text_(text), where_(where), position_(position), line_number_(line_number) {}

    std::size_t position() const { return position_; }
    std::size_t line_number() const { return line_number_; }

    std::string_view line() {
        if (position_ >= text_.size()) problem("truncated");
        const std::size_t end = text_.find('\n', position_);
        const std::size_t stop = end == std::string_view::npos ? text_.size() : end;
        std::string_view result = text_.substr(position_, stop - position_);
        position_ = stop + 1;
        ++line_number_;
        return result;
    }

    [[noreturn]] void problem(const std::string& what) const {
        throw InputError(where_, "torch atlas line " + std::to_string(line_number_) + ": " + what);
    }

    // "keyword N": N checked against what the rest of the file could hold.
    std::uint32_t count(std::string_view keyword) {
        const std::string_view text = line();
        if (!text.starts_with(keyword) || text.size() <= keyword.size() || text[keyword.size()] != ' ')
            problem("expected '" + std::string(keyword) + " <count>'");
        const std::uint64_t value = number(text.substr(keyword.size() + 1));
        if (value > text_.size() - std::min(position_, text_.size())) problem("count larger than the file");
        return static_cast<std::uint32_t>(value);
    }

    std::uint64_t number(std::string_view text) const {
        std::uint64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end != text.data() + text.size() || value > 0xffffffffull) problem("bad number");
        return value;
    }

    static std::vector<std::string_view> split(std::string_view text, std::size_t max_fields) {
        std::vector<std::string_view> fields;
        while (fields.size() + 1 < max_fields) {
            const std::size_t space = text.find(' ');
            if (space == std::string_view::npos) break;
            fields.push_back(text.substr(0, space));
            text.remove_prefix(space + 1);
        }
        fields.push_back(text);
        return fields;
    }

    std::string value(std::string_view text) const {
        if (text == "-") return {};
        auto result = unescape(text);
        if (!result) problem("bad %XX escape");
        return *result;
    }

    bool at_end() const { return position_ >= text_.size(); }
    std::string_view peek_keyword() const {
        const std::size_t end = text_.find_first_of(" \n", position_);
        return text_.substr(position_, (end == std::string_view::npos ? text_.size() : end) - position_);
    }

private:
    std::string_view text_;
    const std::string& where_;
    std::size_t position_ = 0;
    std::size_t line_number_ = 0;
};

// Strings looked up by string_view without a copy.
struct ViewHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};
using ViewSet = std::unordered_set<std::string, ViewHash, std::equal_to<>>;

// Which names hold one of some mangled source names ("4size") anywhere, as
// std::string::find would say, without a search per token: each place a number starts
// is read as a possible token (its digits, then that many characters) and looked up,
// after a filter on its length and first and last characters. A token not of that form
// is searched for plainly.
class TokenMatcher {
public:
    explicit TokenMatcher(const std::vector<std::string>& tokens) {
        for (const std::string& token : tokens) {
            const std::optional<std::size_t> digits = digits_of(token);
            if (!digits) {
                plain_.push_back(token);
                continue;
            }
            const std::size_t length = token.size() - *digits;
            if (length >= lengths_.size()) lengths_.resize(length + 1, false);
            lengths_[length] = true;
            filter_.set(fingerprint(length, token[*digits], token.back()));
            tokens_.insert(token);
        }
    }

    bool any_in(std::string_view name) const {
        for (const std::string& token : plain_)
            if (name.find(token) != std::string_view::npos) return true;
        if (tokens_.empty()) return false;
        for (std::size_t start = 0; start < name.size(); ++start) {
            if (name[start] < '1' || name[start] > '9') continue;
            std::size_t value = 0;
            for (std::size_t end = start; end < name.size() && end - start < kMaxDigits && is_digit(name[end]); ++end) {
                value = value * 10 + static_cast<std::size_t>(name[end] - '0');
                if (value >= lengths_.size() || end + 1 + value > name.size()) break;
                if (!lengths_[value] || !filter_.test(fingerprint(value, name[end + 1], name[end + value]))) continue;
                if (tokens_.find(name.substr(start, end + 1 - start + value)) != tokens_.end()) return true;
            }
        }
        return false;
    }

private:
    static constexpr std::size_t kMaxDigits = 9;
    static bool is_digit(char c) { return c >= '0' && c <= '9'; }
    static std::size_t fingerprint(std::size_t length, char first, char last) {
        return (length * 131 + static_cast<unsigned char>(first) * 31 + static_cast<unsigned char>(last)) % 4096;
    }

    // "4size" -> 1: leading digits (no leading zero) whose value is the length of the rest.
    static std::optional<std::size_t> digits_of(std::string_view token) {
        if (token.empty() || token[0] < '1' || token[0] > '9') return std::nullopt;
        std::size_t value = 0;
        for (std::size_t end = 0; end < token.size() && end < kMaxDigits && is_digit(token[end]); ++end) {
            value = value * 10 + static_cast<std::size_t>(token[end] - '0');
            if (value == token.size() - end - 1) return end + 1;
        }
        return std::nullopt;
    }

    ViewSet tokens_;
    std::vector<bool> lengths_;
    std::bitset<4096> filter_;
    std::vector<std::string> plain_;
};

// The symbol lines: each key decoded from its front coding into one buffer and handed
// to visit(key, type, set) with every field checked; then the closing "end".
template <typename Visit>
void scan_symbol_lines(AtlasParser& parser, std::uint32_t count, std::size_t set_count, Visit&& visit) {
    std::string key;
    for (std::uint32_t i = 0; i < count; ++i) {
        const auto fields = AtlasParser::split(parser.line(), 4);
        if (fields.size() != 4) parser.problem("expected '<shared> <type> <set> <key>'");
        const std::uint64_t shared = parser.number(fields[0]);
        const std::uint64_t type = parser.number(fields[1]);
        const std::uint64_t set = parser.number(fields[2]);
        if (shared > key.size()) parser.problem("shared prefix longer than the key before");
        if (type > 15 || set >= set_count) parser.problem("symbol type or set out of range");
        key.resize(static_cast<std::size_t>(shared));
        key.append(fields[3]);
        if (key.empty()) parser.problem("empty symbol key");
        visit(std::string_view(key), static_cast<std::uint8_t>(type), static_cast<std::uint32_t>(set));
    }
    if (parser.line() != "end") parser.problem("expected 'end'");
}

}  // namespace

bool is_torch_python_library(std::string_view file_name) { return file_name.starts_with("libtorch_python."); }

bool torch_version_less(std::string_view a, std::string_view b) {
    return std::make_tuple(release_numbers(a), a) < std::make_tuple(release_numbers(b), b);
}

void tags_from_wheel_name(std::string_view wheel, std::string& arch, std::string& python_tag) {
    arch.clear();
    python_tag.clear();
    if (!wheel.ends_with(".whl")) return;
    wheel.remove_suffix(4);
    std::vector<std::string_view> parts;
    while (true) {
        const std::size_t dash = wheel.find('-');
        parts.push_back(wheel.substr(0, dash));
        if (dash == std::string_view::npos) break;
        wheel.remove_prefix(dash + 1);
    }
    if (parts.size() < 5) return;
    // A PEP 825 variant label follows the platform tag (a sixth part that is not a build tag).
    if (parts.size() == 7 || (parts.size() == 6 && !(parts[2].size() && parts[2][0] >= '0' && parts[2][0] <= '9')))
        parts.pop_back();
    const std::string_view abi = parts[parts.size() - 2];
    const std::string_view python = parts[parts.size() - 3];
    python_tag = std::string(abi.starts_with("cp") ? abi : python);
    std::string_view platform = parts.back();
    platform = platform.substr(0, platform.find('.'));
    for (std::string_view known : {"x86_64", "aarch64", "ppc64le", "s390x", "i686", "armv7l"})
        if (platform.ends_with(known)) arch = std::string(known);
}

Atlas Atlas::build(const std::vector<SymbolIndex>& indexes) {
    AtlasInputs inputs;
    for (const SymbolIndex& index : indexes) inputs.add(index);
    return build(inputs);
}

void AtlasInputs::add(SymbolIndex index) {
    const AtlasEntry entry = entry_of(index);
    indexes_.push_back(std::move(index));
    library_counts_.push_back(indexes_.back().libraries.size());
    // The build's primary: the most libraries, then the first in entry order; the
    // others keep only libtorch_python*.
    std::vector<std::size_t> same_build;
    for (std::size_t i = 0; i < indexes_.size(); ++i)
        if (build_of(entry_of(indexes_[i])) == build_of(entry)) same_build.push_back(i);
    std::size_t best = same_build.front();
    for (std::size_t i : same_build)
        if (library_counts_[i] > library_counts_[best] ||
            (library_counts_[i] == library_counts_[best] && entry_order(entry_of(indexes_[i])) < entry_order(entry_of(indexes_[best]))))
            best = i;
    for (std::size_t i : same_build)
        if (i != best)
            std::erase_if(indexes_[i].libraries, [](const LibraryExports& library) { return !is_torch_python_library(library.file_name); });
}

Atlas Atlas::build(const AtlasInputs& inputs) {
    const std::vector<SymbolIndex>& indexes = inputs.indexes_;
    std::vector<std::size_t> order(indexes.size());
    std::vector<AtlasEntry> entries;
    for (const SymbolIndex& index : indexes) entries.push_back(entry_of(index));
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return entry_order(entries[a]) < entry_order(entries[b]); });
    for (std::size_t i = 1; i < order.size(); ++i)
        if (entry_order(entries[order[i]]) == entry_order(entries[order[i - 1]]))
            throw InputError(entries[order[i]].wheel, "given twice (or two indexes of the same torch wheel)");

    // AtlasInputs::add left every library only in each build's primary entry.
    Atlas atlas;
    std::map<SymbolGroup, std::vector<std::uint32_t>> nodes_of;
    for (std::size_t position : order) {
        const auto entry_id = static_cast<std::uint32_t>(atlas.entries_.size());
        atlas.entries_.push_back(entries[position]);
        std::vector<const LibraryExports*> libraries;
        for (const LibraryExports& library : indexes[position].libraries) libraries.push_back(&library);
        std::sort(libraries.begin(), libraries.end(),
                  [](const LibraryExports* a, const LibraryExports* b) { return a->file_name < b->file_name; });
        for (const LibraryExports* library : libraries) {
            const auto node = static_cast<std::uint32_t>(atlas.libraries_.size());
            atlas.libraries_.push_back({entry_id, library->file_name, library->soname, library->needed,
                                        library->version_definitions, library->version_needs});
            for (const ExportedSymbol& symbol : library->symbols) {
                std::vector<std::uint32_t>& nodes = nodes_of[{symbol_key(symbol), symbol.type}];
                if (nodes.empty() || nodes.back() != node) nodes.push_back(node);
            }
        }
    }
    std::map<std::vector<std::uint32_t>, std::uint32_t> set_ids;
    std::vector<std::vector<std::uint32_t>> sets;
    std::vector<std::pair<SymbolGroup, std::uint32_t>> symbols;
    for (auto& [group, nodes] : nodes_of) {
        auto [found, inserted] = set_ids.try_emplace(nodes, static_cast<std::uint32_t>(sets.size()));
        if (inserted) sets.push_back(nodes);
        symbols.emplace_back(group, found->second);
    }
    // Through the text, so a built atlas is exactly what loading its file gives.
    const std::string text =
        atlas_text(atlas.entries_, atlas.libraries_, sets, symbols);
    return parse(text, "(built atlas)");
}

Atlas Atlas::parse(std::string_view bytes, const std::string& where) {
    const timings::Scope timer(timings::Phase::parse);
    std::string inflated;
    if (bytes.starts_with("\x1f\x8b")) {
        inflated = detail::gunzip(bytes, where, kMaxInflated, "torch atlas");
        bytes = inflated;
    }
    AtlasParser parser(bytes, where);
    const std::string_view magic = parser.line();
    if (!magic.starts_with(kMagic)) parser.problem("not a wheelfix torch atlas");
    if (magic != std::string(kMagic) + " " + std::to_string(kFormatVersion))
        parser.problem("unsupported atlas format '" + std::string(magic) + "' (this wheelfix reads version 1)");
    Atlas atlas;
    const std::uint32_t entry_count = parser.count("entries");
    for (std::uint32_t i = 0; i < entry_count; ++i) {
        const auto fields = AtlasParser::split(parser.line(), 6);
        if (fields.size() != 6) parser.problem("expected 6 fields in an entry");
        atlas.entries_.push_back({parser.value(fields[0]), parser.value(fields[1]), parser.value(fields[2]),
                                  parser.value(fields[3]), parser.value(fields[4]), parser.value(fields[5])});
    }
    const std::uint32_t library_count = parser.count("libraries");
    for (std::uint32_t i = 0; i < library_count; ++i) {
        const auto fields = AtlasParser::split(parser.line(), 4);
        if (fields.size() != 4 || fields[0] != "L") parser.problem("expected 'L <entry> <file> <soname>'");
        AtlasLibrary library;
        library.entry = static_cast<std::uint32_t>(parser.number(fields[1]));
        if (library.entry >= atlas.entries_.size()) parser.problem("entry id out of range");
        library.file_name = parser.value(fields[2]);
        library.soname = parser.value(fields[3]);
        while (!parser.at_end()) {
            const std::string_view keyword = parser.peek_keyword();
            if (keyword != "n" && keyword != "d" && keyword != "r") break;
            const auto parts = AtlasParser::split(parser.line(), 3);
            if (keyword == "n" && parts.size() == 2) library.needed.push_back(parser.value(parts[1]));
            else if (keyword == "d" && parts.size() == 2) library.version_definitions.push_back(parser.value(parts[1]));
            else if (keyword == "r" && parts.size() == 3)
                library.version_needs.push_back({parser.value(parts[1]), parser.value(parts[2])});
            else parser.problem("bad library field");
        }
        atlas.libraries_.push_back(std::move(library));
    }
    const std::uint32_t set_count = parser.count("sets");
    atlas.set_offsets_.reserve(set_count + 1);
    atlas.set_offsets_.push_back(0);
    for (std::uint32_t i = 0; i < set_count; ++i) {
        std::string_view text = parser.line();
        std::uint64_t node = 0;
        bool first = true;
        while (!text.empty()) {
            const std::size_t space = text.find(' ');
            const std::uint64_t delta = parser.number(text.substr(0, space));
            if (!first && delta == 0) parser.problem("set node ids not ascending");
            node += delta;
            first = false;
            if (node >= atlas.libraries_.size()) parser.problem("node id out of range");
            atlas.set_members_.push_back(static_cast<std::uint32_t>(node));
            text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
        }
        if (first) parser.problem("empty set");
        atlas.set_offsets_.push_back(static_cast<std::uint32_t>(atlas.set_members_.size()));
    }
    const std::uint32_t symbol_count = parser.count("symbols");
    atlas.pending_ = std::make_unique<PendingSymbols>();
    PendingSymbols& pending = *atlas.pending_;
    pending.at = parser.position();
    pending.line = parser.line_number();
    pending.count = symbol_count;
    pending.where = where;
    if (!inflated.empty()) pending.text = std::move(inflated);
    else pending.text = std::string(bytes);
    return atlas;
}

const std::vector<Atlas::SymbolRecord>& Atlas::symbols() const {
    if (!pending_) return symbols_;
    std::lock_guard<std::mutex> lock(pending_->parsing);
    if (pending_->parsed) return symbols_;
    const timings::Scope timer(timings::Phase::parse);
    PendingSymbols& pending = *pending_;
    AtlasParser parser(pending.text, pending.where, pending.at, pending.line);
    symbols_.reserve(pending.count);
    scan_symbol_lines(parser, pending.count, set_count(), [&](std::string_view key, std::uint8_t type, std::uint32_t set) {
        if (keys_.size() + key.size() > 0xffffffffull) parser.problem("keys too large");
        symbols_.push_back({static_cast<std::uint32_t>(keys_.size()), static_cast<std::uint32_t>(key.size()), set, type});
        keys_.append(key);
    });
    std::string().swap(pending.text);
    pending.parsed = true;
    return symbols_;
}

Atlas::Subset Atlas::select(const SymbolSelection& selection) const {
    Subset subset;
    subset.atlas_ = this;
    const ViewSet names(selection.names.begin(), selection.names.end());
    const TokenMatcher tokens(selection.tokens);
    std::string unescaped;
    const auto keep = [&](std::string_view key, std::uint8_t type, std::uint32_t set) {
        // The name part of the key (a '@' in a name is escaped), as materialise() names it.
        std::string_view name = key.substr(0, key.find('@'));
        if (name.find('%') != std::string_view::npos) {
            unescaped = unescape(name).value_or(std::string(name));
            name = unescaped;
        }
        if (names.find(name) == names.end() && !tokens.any_in(name)) return;
        subset.records_.push_back({static_cast<std::uint32_t>(subset.keys_.size()), static_cast<std::uint32_t>(key.size()),
                                   set, type});
        subset.keys_.append(key);
    };
    std::unique_lock<std::mutex> lock;
    if (pending_) lock = std::unique_lock<std::mutex>(pending_->parsing);
    if (pending_ && !pending_->parsed) {
        const PendingSymbols& pending = *pending_;
        AtlasParser parser(pending.text, pending.where, pending.at, pending.line);
        scan_symbol_lines(parser, pending.count, set_count(), keep);
        return subset;
    }
    lock = {};
    for (const SymbolRecord& record : symbols())
        keep(std::string_view(keys_.data() + record.key_offset, record.key_length), record.type, record.set);
    return subset;
}

Atlas Atlas::load(const fs::path& path) {
    return parse(read_regular_file(path, kMaxAtlasFile), path.string());
}

bool Atlas::is_atlas_file(const fs::path& path) {
    std::error_code error;
    if (!fs::is_regular_file(path, error)) return false;  // never open a FIFO to look
    std::ifstream in(path, std::ios::binary);
    std::array<char, 2> head{};
    if (!in.read(head.data(), head.size())) return false;
    if (head[0] == 'w') {
        std::string first;
        in.seekg(0);
        std::getline(in, first);
        return first.starts_with(kMagic);
    }
    if (head[0] != '\x1f' || head[1] != '\x8b') return false;
    // A gzip file: an atlas when its text starts with the magic.
    in.seekg(0);
    std::string compressed(4096, '\0');
    in.read(compressed.data(), static_cast<std::streamsize>(compressed.size()));
    compressed.resize(static_cast<std::size_t>(in.gcount()));
    z_stream stream{};
    if (inflateInit2(&stream, 15 + 32) != Z_OK) return false;
    std::array<char, 64> out{};
    stream.next_in = reinterpret_cast<Bytef*>(compressed.data());
    stream.avail_in = static_cast<uInt>(compressed.size());
    stream.next_out = reinterpret_cast<Bytef*>(out.data());
    stream.avail_out = out.size();
    inflate(&stream, Z_NO_FLUSH);
    const std::size_t produced = out.size() - stream.avail_out;
    inflateEnd(&stream);
    return std::string_view(out.data(), produced).starts_with(kMagic);
}

void Atlas::save(const fs::path& destination) const {
    std::vector<std::vector<std::uint32_t>> sets;
    for (std::size_t i = 0; i + 1 < set_offsets_.size(); ++i)
        sets.emplace_back(set_members_.begin() + set_offsets_[i], set_members_.begin() + set_offsets_[i + 1]);
    std::vector<std::pair<SymbolGroup, std::uint32_t>> symbols;
    symbols.reserve(this->symbols().size());
    for (const SymbolRecord& record : this->symbols())
        symbols.push_back({{keys_.substr(record.key_offset, record.key_length), record.type}, record.set});
    const std::string bytes = gzip(atlas_text(entries_, libraries_, sets, symbols));
    // `index --atlas FILE` reads the atlas and writes it back with entries added: it
    // replaces the file on purpose (atomically; the old one stays whole until then).
    OutputFile output(destination, Existing::replace);
    output.write({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
    output.commit();
}

std::vector<AtlasRelease> Atlas::releases() const {
    std::map<std::tuple<std::string, std::string, std::string>, AtlasRelease> by_group;
    std::map<std::uint32_t, std::size_t> library_counts;
    for (const AtlasLibrary& library : libraries_) ++library_counts[library.entry];
    for (std::uint32_t i = 0; i < entries_.size(); ++i) {
        const AtlasEntry& entry = entries_[i];
        auto [found, inserted] = by_group.try_emplace(build_of(entry));
        AtlasRelease& release = found->second;
        if (inserted) {
            release = {entry.torch_version, entry.cuda_version, entry.arch, {}, i};
        } else if (library_counts[i] > library_counts[release.primary_entry]) {
            release.primary_entry = i;
        }
        if (!entry.python_tag.empty()) release.python_tags.push_back(entry.python_tag);
    }
    std::vector<AtlasRelease> releases;
    for (auto& [group, release] : by_group) {
        std::sort(release.python_tags.begin(), release.python_tags.end());
        releases.push_back(std::move(release));
    }
    std::sort(releases.begin(), releases.end(), [](const AtlasRelease& a, const AtlasRelease& b) {
        if (a.torch_version != b.torch_version) return torch_version_less(a.torch_version, b.torch_version);
        return std::tie(a.cuda_version, a.arch) < std::tie(b.cuda_version, b.arch);
    });
    return releases;
}

std::vector<std::uint32_t> Atlas::nodes_for(const AtlasRelease& release, std::string_view python_tag,
                                            std::vector<std::string>& not_covered) const {
    std::vector<std::uint32_t> nodes;
    std::optional<std::uint32_t> python_entry;
    if (!python_tag.empty()) {
        for (std::uint32_t i = 0; i < entries_.size(); ++i)
            if (entries_[i].torch_version == release.torch_version && entries_[i].cuda_version == release.cuda_version &&
                entries_[i].arch == release.arch &&
                entries_[i].python_tag == python_tag)
                python_entry = i;
    } else {
        python_entry = release.primary_entry;
    }
    bool primary_has_python = false;
    for (std::uint32_t node = 0; node < libraries_.size(); ++node) {
        const AtlasLibrary& library = libraries_[node];
        const bool python = is_torch_python_library(library.file_name);
        if (library.entry == release.primary_entry && python) primary_has_python = true;
        if (library.entry == release.primary_entry && !python) nodes.push_back(node);
        if (python && python_entry && library.entry == *python_entry) nodes.push_back(node);
    }
    if (!python_entry && primary_has_python) not_covered.push_back("libtorch_python.so");
    return nodes;
}

SymbolIndex Atlas::materialise(const std::vector<std::uint32_t>& nodes, const std::vector<SymbolRecord>& records,
                               std::string_view keys, const AtlasEntry& source) const {
    SymbolIndex index;
    // Per set, the positions (in `nodes`) of the wanted nodes it holds, as a bit mask.
    std::vector<std::uint64_t> masks(set_count(), 0);
    std::vector<std::uint32_t> position_of(libraries_.size(), 0xffffffffu);
    for (std::size_t i = 0; i < nodes.size() && i < 64; ++i) position_of[nodes[i]] = static_cast<std::uint32_t>(i);
    for (std::size_t set = 0; set < masks.size(); ++set)
        for (std::uint32_t k = set_offsets_[set]; k < set_offsets_[set + 1]; ++k)
            if (position_of[set_members_[k]] != 0xffffffffu) masks[set] |= 1ull << position_of[set_members_[k]];
    for (std::size_t i = 0; i < nodes.size() && i < 64; ++i) {
        const AtlasLibrary& library = libraries_[nodes[i]];
        index.libraries.push_back({library.file_name, library.soname, library.needed, {}, library.version_definitions,
                                   library.version_needs});
    }
    for (const SymbolRecord& record : records) {
        std::uint64_t mask = masks[record.set];
        if (mask == 0) continue;
        const std::string_view key(keys.data() + record.key_offset, record.key_length);
        const std::size_t at = key.find('@');
        ExportedSymbol symbol;
        symbol.name = unescape(key.substr(0, at)).value_or(std::string(key.substr(0, at)));
        symbol.type = record.type;
        if (at != std::string_view::npos) {
            symbol.default_version = key.substr(at).starts_with("@@");
            symbol.version = unescape(key.substr(at + (symbol.default_version ? 2 : 1))).value_or("");
        }
        while (mask != 0) {
            const int bit = __builtin_ctzll(mask);
            mask &= mask - 1;
            index.libraries[static_cast<std::size_t>(bit)].symbols.push_back(symbol);
        }
    }
    // Keys are sorted by escaped name then version; the index wants (name, version) order.
    const auto name_order = [](const ExportedSymbol& a, const ExportedSymbol& b) {
        return std::tie(a.name, a.version) < std::tie(b.name, b.version);
    };
    for (LibraryExports& library : index.libraries)
        if (!std::is_sorted(library.symbols.begin(), library.symbols.end(), name_order))
            std::sort(library.symbols.begin(), library.symbols.end(), name_order);
    index.torch_version = source.torch_version;
    index.cuda_version = source.cuda_version;
    index.source = source.wheel;
    index.source_sha256 = source.sha256;
    return index;
}

SymbolIndex Atlas::index_for(const AtlasRelease& release, std::string_view python_tag, const IndexOptions& options,
                             const Subset* subset) const {
    if (subset != nullptr && subset->atlas_ != this) throw std::logic_error("an atlas subset used with another atlas");
    std::vector<std::string> not_covered;
    std::vector<std::uint32_t> nodes = nodes_for(release, python_tag, not_covered);
    // The NEEDED closure from the roots, on the nodes' metadata alone.
    if (!options.roots.empty() || !options.library_globs.empty()) {
        SymbolIndex stand_ins;  // each node as a library whose one symbol is its id
        for (std::uint32_t node : nodes) {
            const AtlasLibrary& library = libraries_[node];
            stand_ins.libraries.push_back(
                {library.file_name, library.soname, library.needed, {{std::to_string(node), {}, true, 0}}, {}, {}});
        }
        detail::apply_options(stand_ins, options, "torch atlas");
        nodes.clear();
        for (const LibraryExports& found : stand_ins.libraries)
            nodes.push_back(static_cast<std::uint32_t>(std::stoul(found.symbols.front().name)));
    }
    if (nodes.size() > 64) throw InputError("torch atlas", "a release with more than 64 libraries");
    const AtlasEntry& primary = entries_[release.primary_entry];
    SymbolIndex index;
    if (subset != nullptr) {
        index = materialise(nodes, subset->records_, subset->keys_, primary);
    } else {
        const std::vector<SymbolRecord>& records = symbols();  // parses keys_ first
        index = materialise(nodes, records, keys_, primary);
    }
    index.not_covered = std::move(not_covered);
    return index;
}

SymbolIndex Atlas::entry_index(std::uint32_t entry) const {
    std::vector<std::uint32_t> nodes;
    for (std::uint32_t node = 0; node < libraries_.size(); ++node)
        if (libraries_[node].entry == entry) nodes.push_back(node);
    if (nodes.size() > 64) throw InputError(entries_.at(entry).wheel, "more than 64 libraries in one atlas entry");
    const std::vector<SymbolRecord>& records = symbols();  // parses keys_ first
    return materialise(nodes, records, keys_, entries_.at(entry));
}

}  // namespace wheelfix::abi
