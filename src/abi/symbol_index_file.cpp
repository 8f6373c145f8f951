// The index file: save_index / load_index_file.
//
// Format, version 1 (also in man/wheelfix.1, INDEX FILE FORMAT): gzip-compressed
// UTF-8 text, one record per line, fields separated by one space.
//
//   wheelfix-symbol-index 1          first line; readers refuse other versions
//   torch 2.10.0+cu128               optional: torch's __version__
//   cuda 12.8                        optional: the CUDA variant
//   source torch-2.10.0-…whl         optional: what it was made from
//   sha256 <64 hex digits>           optional: of that wheel
//   library libc10_cuda.so           starts a library (its file name)
//   soname libc10_cuda.so            optional
//   needed libc10.so                 one per DT_NEEDED, in order
//   verdef TORCH_1                   optional, one per version the library defines
//   verneed libc.so.6 GLIBC_2.17     optional, one per version it needs (sorted)
//   symbols 223                      the count of symbol lines that follow
//   F _ZN3c104cuda9SetDeviceEab      <type> <name>[@@<version>|@<version>]
//   end                              ends the file
//
// <type> is the ELF symbol type: N notype, O object, F func, S section, C common,
// T tls, I gnu_ifunc, or its decimal value. `@@VER` is a default version, `@VER`
// a hidden one (sym@VER), none is unversioned. Bytes <= 0x20, '%', '@' and 0x7f
// in names and values are written %XX. Symbol lines are sorted by name, then
// version. Unknown keyword lines outside a symbol block are ignored, so version 1
// can gain fields. The gzip header carries no name and no time: the same index
// gives the same bytes. Reading is bounded whatever the file says (kMaxIndexText:
// the file, and its text once inflated; kMaxIndexSymbols symbol lines in all), so a
// hostile index costs at most ~270 MiB before it is refused.
#include "symbol_index_internal.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/output_file.hpp"
#include "wheelfix/util/timings.hpp"

// zlib, not zip/codec.hpp: index files are gzip (header, trailer) at level 9, made
// once and shipped (data/torch-index/): their bytes must not depend on the build's
// backend, and a few MB inflate in milliseconds either way.
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace wheelfix::abi {

namespace detail {

namespace {

bool needs_escape(unsigned char c) { return c <= 0x20 || c == '%' || c == '@' || c == 0x7f; }

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

}  // namespace

std::string escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    static constexpr char kHex[] = "0123456789ABCDEF";
    for (unsigned char c : text) {
        if (!needs_escape(c)) {
            out += static_cast<char>(c);
            continue;
        }
        out += '%';
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
    return out;
}

std::optional<std::string> unescape(std::string_view text) {
    if (text.find('%') == std::string_view::npos) return std::string(text);
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out += text[i];
            continue;
        }
        if (i + 2 >= text.size()) return std::nullopt;
        const int high = hex_digit(text[i + 1]);
        const int low = hex_digit(text[i + 2]);
        if (high < 0 || low < 0) return std::nullopt;
        out += static_cast<char>(high * 16 + low);
        i += 2;
    }
    return out;
}

std::string symbol_key(const ExportedSymbol& symbol) {
    std::string key = escape(symbol.name);
    if (!symbol.version.empty()) key += (symbol.default_version ? "@@" : "@") + escape(symbol.version);
    return key;
}

std::string gzip(std::string_view text) {
    z_stream stream{};
    if (deflateInit2(&stream, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2 failed");
    std::string out(deflateBound(&stream, static_cast<uLong>(text.size())), '\0');
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    stream.avail_in = static_cast<uInt>(text.size());
    stream.next_out = reinterpret_cast<Bytef*>(out.data());
    stream.avail_out = static_cast<uInt>(out.size());
    const int status = deflate(&stream, Z_FINISH);
    out.resize(stream.total_out);
    deflateEnd(&stream);
    if (status != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
    return out;
}

std::string gunzip(std::string_view compressed, const std::string& where, std::uint64_t max_size, std::string_view what) {
    const timings::Scope timer(timings::Phase::inflate);
    z_stream stream{};
    if (inflateInit2(&stream, 15 + 32) != Z_OK) throw std::runtime_error("inflateInit2 failed");
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
    stream.avail_in = static_cast<uInt>(compressed.size());
    std::string out;
    // The gzip trailer's ISIZE (the size mod 2^32) sizes the result once, within the
    // limit and a ratio a real text reaches; a wrong one only costs a regrowth.
    if (compressed.size() >= 18) {
        const auto* tail = reinterpret_cast<const std::uint8_t*>(compressed.data() + compressed.size() - 4);
        const std::uint64_t size = tail[0] | (tail[1] << 8) | (tail[2] << 16) | (std::uint64_t(tail[3]) << 24);
        out.reserve(static_cast<std::size_t>(std::min({size, max_size, std::uint64_t(compressed.size()) * 64})));
    }
    std::array<char, 1 << 16> buffer{};
    const std::string damaged = "damaged or truncated gzip data in the " + std::string(what);
    // Ends on the stream's end, on an error, on the cap and when a call makes no
    // progress (inflate then wants input there is none of): never on the data alone.
    std::string problem;
    while (problem.empty()) {
        stream.next_out = reinterpret_cast<Bytef*>(buffer.data());
        stream.avail_out = buffer.size();
        const int status = inflate(&stream, Z_NO_FLUSH);
        const std::size_t produced = buffer.size() - stream.avail_out;
        if (status == Z_STREAM_END) {
            if (out.size() + produced > max_size) problem = "inflates past the " + std::string(what) + " limit (a gzip bomb?)";
            else out.append(buffer.data(), produced);
            break;
        }
        if (status != Z_OK) problem = damaged;
        else if (out.size() + produced > max_size)
            problem = "inflates past the " + std::string(what) + " limit (a gzip bomb?)";
        else if (produced == 0 && stream.avail_in == 0)
            problem = damaged;
        else
            out.append(buffer.data(), produced);
    }
    inflateEnd(&stream);
    if (!problem.empty()) throw InputError(where, problem);
    return out;
}

}  // namespace detail

namespace {

using detail::escape;
using detail::gzip;
using detail::unescape;

namespace fs = std::filesystem;

constexpr std::string_view kMagic = "wheelfix-symbol-index";
constexpr int kFormatVersion = 1;

struct TypeLetter {
    std::uint8_t type;
    char letter;
};
constexpr std::array kTypeLetters{TypeLetter{0, 'N'}, TypeLetter{1, 'O'}, TypeLetter{2, 'F'}, TypeLetter{3, 'S'},
                                  TypeLetter{5, 'C'}, TypeLetter{6, 'T'}, TypeLetter{10, 'I'}};

std::string type_field(std::uint8_t type) {
    for (const TypeLetter& entry : kTypeLetters)
        if (entry.type == type) return std::string(1, entry.letter);
    return std::to_string(type);
}

std::optional<std::uint8_t> parse_type_field(std::string_view field) {
    if (field.size() == 1)
        for (const TypeLetter& entry : kTypeLetters)
            if (entry.letter == field[0]) return entry.type;
    if (field.empty() || field.size() > 3) return std::nullopt;
    unsigned value = 0;
    for (char c : field) {
        if (c < '0' || c > '9') return std::nullopt;
        value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (value > 15) return std::nullopt;
    return static_cast<std::uint8_t>(value);
}

// ---- writing -----------------------------------------------------------------

void write_field(std::string& out, std::string_view key, const std::string& value) {
    if (value.empty()) return;
    out.append(key).append(" ").append(escape(value)).append("\n");
}

std::string index_text(const SymbolIndex& index) {
    std::string out = std::string(kMagic) + " " + std::to_string(kFormatVersion) + "\n";
    write_field(out, "torch", index.torch_version);
    write_field(out, "cuda", index.cuda_version);
    write_field(out, "source", index.source);
    write_field(out, "sha256", index.source_sha256);
    for (const LibraryExports& library : index.libraries) {
        write_field(out, "library", library.file_name);
        write_field(out, "soname", library.soname);
        for (const std::string& needed : library.needed) write_field(out, "needed", needed);
        for (const std::string& version : library.version_definitions) write_field(out, "verdef", version);
        for (const VersionRequirement& need : library.version_needs)
            out.append("verneed ").append(escape(need.file)).append(" ").append(escape(need.version)).append("\n");
        out += "symbols " + std::to_string(library.symbols.size()) + "\n";
        for (const ExportedSymbol& symbol : library.symbols)
            out += type_field(symbol.type) + " " + detail::symbol_key(symbol) + "\n";
    }
    out += "end\n";
    return out;
}

// ---- reading -----------------------------------------------------------------

std::string read_all(const fs::path& path) { return read_regular_file(path, kMaxIndexText); }

class IndexParser {
public:
    IndexParser(std::string_view text, const fs::path& path) : text_(text), path_(path) {}

    SymbolIndex run() {
        std::string_view first = next_line();
        if (!first.starts_with(kMagic)) problem("not a wheelfix symbol index");
        if (first != std::string(kMagic) + " " + std::to_string(kFormatVersion))
            problem("unsupported index format '" + std::string(first) + "' (this wheelfix reads version 1)");
        SymbolIndex index;
        while (true) {
            if (at_end()) problem("truncated: no 'end' line");
            std::string_view line = next_line();
            if (line == "end") break;
            read_record(index, line);
        }
        return index;
    }

private:
    bool at_end() const { return position_ >= text_.size(); }

    std::string_view next_line() {
        const std::size_t end = text_.find('\n', position_);
        const std::size_t stop = end == std::string_view::npos ? text_.size() : end;
        std::string_view line = text_.substr(position_, stop - position_);
        position_ = stop + 1;
        ++line_number_;
        return line;
    }

    [[noreturn]] void problem(const std::string& what) const {
        throw InputError(path_.string(), "line " + std::to_string(line_number_) + ": " + what);
    }

    std::string value(std::string_view line, std::size_t key_length) {
        auto text = unescape(line.substr(key_length + 1));
        if (!text) problem("bad %XX escape");
        return *text;
    }

    void read_record(SymbolIndex& index, std::string_view line) {
        const std::size_t space = line.find(' ');
        const std::string_view key = line.substr(0, space);
        if (space == std::string_view::npos) problem("expected '<keyword> <value>'");
        if (key == "torch") index.torch_version = value(line, key.size());
        else if (key == "cuda") index.cuda_version = value(line, key.size());
        else if (key == "source") index.source = value(line, key.size());
        else if (key == "sha256") index.source_sha256 = value(line, key.size());
        else if (key == "library") index.libraries.push_back({value(line, key.size()), {}, {}, {}, {}, {}});
        else if (key == "verdef") current(index).version_definitions.push_back(value(line, key.size()));
        else if (key == "verneed") current(index).version_needs.push_back(requirement(line.substr(space + 1)));
        else if (key == "soname") current(index).soname = value(line, key.size());
        else if (key == "needed") current(index).needed.push_back(value(line, key.size()));
        else if (key == "symbols") read_symbols(current(index), line.substr(space + 1));
    }

    VersionRequirement requirement(std::string_view fields) {
        const std::size_t space = fields.find(' ');
        auto file = unescape(fields.substr(0, space));
        auto version = space == std::string_view::npos ? std::nullopt : unescape(fields.substr(space + 1));
        if (!file || !version || file->empty() || version->empty()) problem("expected 'verneed <file> <version>'");
        return {std::move(*file), std::move(*version)};
    }

    LibraryExports& current(SymbolIndex& index) {
        if (index.libraries.empty()) problem("library field before any 'library' line");
        return index.libraries.back();
    }

    void read_symbols(LibraryExports& library, std::string_view count_text) {
        std::uint64_t count = 0;
        for (char c : count_text) {
            if (c < '0' || c > '9' || count > text_.size()) problem("bad symbol count");
            count = count * 10 + static_cast<std::uint64_t>(c - '0');
        }
        if (count > text_.size()) problem("symbol count larger than the file");
        symbols_ += count;
        if (symbols_ > kMaxIndexSymbols)
            problem("more than " + std::to_string(kMaxIndexSymbols) + " symbols, over the symbol index limit");
        // A symbol line is at least "F x\n": no more of them fit in what is left, so
        // no more are reserved (a lying count ends as "truncated" below).
        const std::uint64_t fit = (text_.size() - std::min(position_, text_.size())) / 4;
        library.symbols.reserve(static_cast<std::size_t>(std::min(count, fit)));
        for (std::uint64_t i = 0; i < count; ++i) {
            if (at_end()) problem("truncated symbol list");
            library.symbols.push_back(read_symbol(next_line()));
        }
        if (!std::is_sorted(library.symbols.begin(), library.symbols.end(),
                            [](const ExportedSymbol& a, const ExportedSymbol& b) { return a.name < b.name; }))
            problem("symbols of " + library.file_name + " are not sorted");
    }

    ExportedSymbol read_symbol(std::string_view line) {
        const std::size_t space = line.find(' ');
        if (space == std::string_view::npos) problem("expected '<type> <name>'");
        auto type = parse_type_field(line.substr(0, space));
        if (!type) problem("bad symbol type '" + std::string(line.substr(0, space)) + "'");
        std::string_view rest = line.substr(space + 1);
        ExportedSymbol symbol;
        symbol.type = *type;
        const std::size_t at = rest.find('@');
        auto name = unescape(rest.substr(0, at));
        if (!name || name->empty()) problem("bad symbol name");
        symbol.name = std::move(*name);
        if (at != std::string_view::npos) {
            symbol.default_version = rest.substr(at).starts_with("@@");
            auto version = unescape(rest.substr(at + (symbol.default_version ? 2 : 1)));
            if (!version || version->empty()) problem("bad symbol version");
            symbol.version = std::move(*version);
        }
        return symbol;
    }

    std::string_view text_;
    const fs::path& path_;
    std::size_t position_ = 0;
    std::size_t line_number_ = 0;
    std::uint64_t symbols_ = 0;
};

}  // namespace

void save_index(const SymbolIndex& index, const fs::path& destination, bool overwrite) {
    const std::string bytes = gzip(index_text(index));
    OutputFile output(destination, overwrite ? Existing::replace : Existing::refuse);  // a hidden temporary beside it, renamed when complete
    output.write({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
    output.commit();
}

SymbolIndex load_index_file(const fs::path& index_file, const IndexOptions& options) {
    const timings::Scope timer(timings::Phase::parse);
    std::string bytes = read_all(index_file);
    if (bytes.starts_with("\x1f\x8b")) bytes = detail::gunzip(bytes, index_file.string(), kMaxIndexText, "symbol index");
    SymbolIndex index = IndexParser(bytes, index_file).run();
    if (index.source.empty()) index.source = index_file.string();
    index.partial = true;
    detail::apply_options(index, options, index_file.string());
    return index;
}

}  // namespace wheelfix::abi
