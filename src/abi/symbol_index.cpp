// The symbol index model, the loader dispatch, and the helpers every loader
// shares: exports of a parsed library, torch/version.py, name filters and the
// NEEDED walk (symbol_index.hpp and symbol_index_internal.hpp have the contracts).
#include "symbol_index_internal.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/parallel_tasks.hpp"

#include <elf.h>
#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

namespace wheelfix::abi {

const LibraryExports* SymbolIndex::find_library(std::string_view soname_or_file) const {
    for (const LibraryExports& library : libraries)
        if (library.soname == soname_or_file) return &library;
    for (const LibraryExports& library : libraries)
        if (library.file_name == soname_or_file) return &library;
    return nullptr;
}

std::string SymbolIndex::label() const { return torch_version.empty() ? source : torch_version; }

namespace {

struct ByName {
    bool operator()(const ExportedSymbol& a, std::string_view b) const { return a.name < b; }
    bool operator()(std::string_view a, const ExportedSymbol& b) const { return a < b.name; }
};

}  // namespace

std::span<const ExportedSymbol> find_symbol(const LibraryExports& library, std::string_view name) {
    auto range = std::equal_range(library.symbols.begin(), library.symbols.end(), name, ByName{});
    return {range.first, range.second};
}

namespace {

enum class PathKind { directory, gzip_index, text_index, zip, other };

PathKind kind_of(const std::filesystem::path& path) {
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) return PathKind::directory;
    refuse_special_file(path);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path.string(), "cannot open (no such file or directory, or not readable)");
    std::array<char, 21> head{};
    in.read(head.data(), head.size());
    const std::string_view start(head.data(), static_cast<std::size_t>(in.gcount()));
    if (start.starts_with("\x1f\x8b")) return PathKind::gzip_index;
    if (start.starts_with("wheelfix-symbol-index")) return PathKind::text_index;
    if (start.starts_with("PK\x03\x04") || start.starts_with("PK\x05\x06")) return PathKind::zip;
    return PathKind::other;
}

bool is_exported(const elf::Symbol& symbol) {
    if (!symbol.defined() || symbol.name.empty()) return false;
    if (symbol.binding != STB_GLOBAL && symbol.binding != STB_WEAK && symbol.binding != STB_GNU_UNIQUE) return false;
    if (symbol.visibility != STV_DEFAULT && symbol.visibility != STV_PROTECTED) return false;
    return symbol.version_index != VER_NDX_LOCAL;
}

// The value of `name = '…'` or `name: T = '…'` on one line of version.py, if that line sets it.
std::optional<std::string> assigned_string(std::string_view line, std::string_view name) {
    if (!line.starts_with(name)) return std::nullopt;
    line.remove_prefix(name.size());
    const std::size_t equals = line.find('=');
    if (equals == std::string_view::npos) return std::nullopt;
    const std::string_view before = line.substr(0, equals);
    if (!before.empty() && before.front() != ' ' && before.front() != ':' && before.front() != '\t')
        return std::nullopt;  // "cuda_version = ..." is another name
    std::string_view value = line.substr(equals + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    if (value.empty() || (value.front() != '\'' && value.front() != '"')) return std::string();  // None
    const char quote = value.front();
    const std::size_t end = value.find(quote, 1);
    if (end == std::string_view::npos) return std::nullopt;
    return std::string(value.substr(1, end - 1));
}

}  // namespace

LibraryExports exports_of(std::string file_name, const elf::ElfFile& elf) {
    LibraryExports library;
    library.file_name = std::move(file_name);
    library.soname = std::string(elf.soname().value_or(""));
    for (std::string_view needed : elf.needed()) library.needed.emplace_back(needed);
    for (const elf::Symbol& symbol : elf.dynamic_symbols()) {
        if (!is_exported(symbol)) continue;
        library.symbols.push_back(
            {std::string(symbol.name), std::string(symbol.version), !symbol.version_hidden, symbol.type});
    }
    std::sort(library.symbols.begin(), library.symbols.end(), [](const ExportedSymbol& a, const ExportedSymbol& b) {
        return std::tie(a.name, a.version) < std::tie(b.name, b.version);
    });
    for (const elf::VersionDef& definition : elf.version_defs())
        if ((definition.flags & VER_FLG_BASE) == 0 && !definition.names.empty())
            library.version_definitions.emplace_back(definition.names.front());
    for (const elf::VersionNeed& need : elf.version_needs())
        for (const elf::VersionNeedAux& version : need.versions)
            library.version_needs.push_back({std::string(need.file), std::string(version.name)});
    std::sort(library.version_needs.begin(), library.version_needs.end());
    return library;
}

namespace detail {

TorchVersion parse_version_py(std::string_view text) {
    TorchVersion result;
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        if (auto version = assigned_string(line, "__version__")) result.version = *version;
        if (auto cuda = assigned_string(line, "cuda")) result.cuda = *cuda;
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return result;
}

bool looks_like_library(std::string_view file_name) {
    const std::size_t so = file_name.find(".so");
    if (so == std::string_view::npos || so == 0) return false;
    const std::string_view rest = file_name.substr(so + 3);
    if (rest.empty()) return true;
    if (rest.front() != '.') return false;
    return std::all_of(rest.begin(), rest.end(), [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
}

std::uint64_t file_size_or_zero(const std::filesystem::path& path) {
    std::error_code error;
    const auto size = std::filesystem::file_size(path, error);
    return error ? 0 : static_cast<std::uint64_t>(size);
}

bool matches_any_glob(std::string_view file_name, const std::vector<std::string>& globs) {
    if (globs.empty()) return true;
    const std::string name(file_name);
    return std::any_of(globs.begin(), globs.end(),
                       [&](const std::string& glob) { return ::fnmatch(glob.c_str(), name.c_str(), 0) == 0; });
}

// What one library's symbols cost against the index text limit.
std::uint64_t text_of(const LibraryExports& library) {
    std::uint64_t text = 0;
    for (const ExportedSymbol& symbol : library.symbols) text += symbol.name.size() + symbol.version.size() + 8;
    return text;
}

// The index limits (symbol_index.hpp), summed over the libraries as they are read.
class IndexBudget {
public:
    explicit IndexBudget(const std::string& source) : source_(source) {}

    void take(const LibraryExports& library) {
        symbols_ += library.symbols.size();
        text_ += text_of(library);
        if (symbols_ > kMaxIndexSymbols)
            refuse(library, "more than " + std::to_string(kMaxIndexSymbols) + " exported symbols");
        if (text_ > kMaxIndexText)
            refuse(library, "more than " + std::to_string(kMaxIndexText >> 20) + " MiB of symbol names");
    }

private:
    [[noreturn]] void refuse(const LibraryExports& library, const std::string& what) const {
        throw InputError(source_, library.file_name + ": with it the index holds " + what +
                                      ", over the symbol index limit (memory stays within 512 MiB)");
    }

    const std::string& source_;
    std::uint64_t symbols_ = 0;
    std::uint64_t text_ = 0;
};

// The candidates read on the threads the budget spares, largest first, each into
// its own slot of `read` (as many as candidates); once what was read passes the index
// limits in any order, no more are started (memory stays bounded: a slot left empty
// is read by the ordered pass that takes them). `beside` (optional) is one more
// task; `beside_ran` says whether it ran. A failing read's exception comes out as
// run_tasks gives it, the slots read before it filled.
void read_on_budget(const std::vector<const Candidate*>& candidates, std::vector<std::optional<LibraryExports>>& read,
                    const SideTask* beside, bool& beside_ran) {
    std::vector<std::uint64_t> weights;
    for (const Candidate* candidate : candidates) weights.push_back(*candidate->weight);
    if (beside != nullptr) weights.push_back(beside->weight);  // the last task
    std::atomic<std::uint64_t> symbols{0}, text{0};
    beside_ran = false;
    run_tasks(weights, [&](std::size_t i, TaskStop& stop) {
        if (i == candidates.size()) {
            beside->run();
            beside_ran = true;
            return;
        }
        read[i] = candidates[i]->read();
        const std::uint64_t symbols_now = symbols += read[i]->symbols.size();
        const std::uint64_t text_now = text += text_of(*read[i]);
        if (symbols_now > kMaxIndexSymbols || text_now > kMaxIndexText) stop.stop_from(0);
    });
}

bool all_weighted(const std::vector<const Candidate*>& candidates) {
    return std::all_of(candidates.begin(), candidates.end(), [](const Candidate* c) { return c->weight.has_value(); });
}

// The NEEDED walk's libraries read before their turn: when the walk is about to
// take the candidates its queue names, they are read at once on the thread budget
// (largest first), and the walk, unchanged, takes each from here instead of reading
// it. So the libraries, their order and any refusal are the serial walk's; a
// candidate read ahead that the walk then skips (its name became a SONAME seen) only
// cost the work. Reading ahead stops once what was read passes the index limits.
class ReadAhead {
public:
    bool empty() const { return read_.empty(); }

    void read_frontier(const std::deque<std::string>& queue, const std::set<std::string>& seen,
                       const std::set<const Candidate*>& taken, const std::vector<const Candidate*>& allowed) {
        std::vector<const Candidate*> next;
        std::set<std::string_view> names;
        for (const std::string& name : queue)
            if (!seen.count(name) && names.insert(name).second)
                for (const Candidate* candidate : allowed)
                    if (candidate->file_name == name && !taken.count(candidate)) next.push_back(candidate);
        if (next.size() < 2 || !all_weighted(next)) return;
        std::vector<std::optional<LibraryExports>> read(next.size());
        bool no_side_task = false;
        try {
            read_on_budget(next, read, nullptr, no_side_task);
        } catch (...) {
            // The walk reads a failing library itself, in its turn, and fails as it
            // would have; what was read ahead of it is kept.
        }
        for (std::size_t i = 0; i < next.size(); ++i)
            if (read[i]) read_.emplace(next[i], std::move(*read[i]));
    }

    LibraryExports take(const Candidate* candidate) {
        const auto found = read_.find(candidate);
        if (found == read_.end()) return candidate->read();
        LibraryExports library = std::move(found->second);
        read_.erase(found);
        return library;
    }

private:
    std::map<const Candidate*, LibraryExports> read_;
};

// Every allowed candidate, taken in order (the contract in symbol_index_internal.hpp):
// read concurrently when they all have a weight, else one after the other (then
// `beside` runs after them).
std::vector<LibraryExports> read_listed(const std::vector<const Candidate*>& allowed, IndexBudget& budget,
                                        const SideTask* beside) {
    std::vector<std::optional<LibraryExports>> read(allowed.size());
    bool beside_ran = false;
    if (all_weighted(allowed) && allowed.size() + (beside != nullptr ? 1 : 0) > 1)
        read_on_budget(allowed, read, beside, beside_ran);
    std::vector<LibraryExports> libraries;
    for (std::size_t i = 0; i < allowed.size(); ++i) {
        libraries.push_back(read[i] ? std::move(*read[i]) : allowed[i]->read());
        read[i].reset();
        budget.take(libraries.back());
    }
    if (beside != nullptr && !beside_ran) beside->run();
    return libraries;
}

std::vector<LibraryExports> read_libraries(const std::vector<Candidate>& candidates, const IndexOptions& options,
                                           const std::string& source, const SideTask* beside) {
    if (options.with_dependencies && !options.library_globs.empty()) {
        IndexOptions closure;
        closure.roots = options.roots;
        for (const Candidate& candidate : candidates)
            if (matches_any_glob(candidate.file_name, options.library_globs))
                closure.roots.push_back(candidate.file_name);
        if (!closure.roots.empty()) return read_libraries(candidates, closure, source, beside);
        if (beside != nullptr) beside->run();
        return {};
    }
    std::vector<const Candidate*> allowed;
    for (const Candidate& candidate : candidates)
        if (matches_any_glob(candidate.file_name, options.library_globs)) allowed.push_back(&candidate);
    IndexBudget budget(source);
    if (options.roots.empty()) return read_listed(allowed, budget, beside);
    std::vector<LibraryExports> libraries;
    std::deque<std::string> queue(options.roots.begin(), options.roots.end());
    std::set<std::string> seen;
    std::set<const Candidate*> read;
    ReadAhead ahead;
    while (!queue.empty()) {
        if (ahead.empty()) ahead.read_frontier(queue, seen, read, allowed);
        const std::string name = queue.front();
        queue.pop_front();
        if (!seen.insert(name).second) continue;
        for (const Candidate* candidate : allowed) {
            if (candidate->file_name != name || read.count(candidate)) continue;
            read.insert(candidate);
            libraries.push_back(ahead.take(candidate));
            budget.take(libraries.back());
            for (const std::string& needed : libraries.back().needed) queue.push_back(needed);
            if (!libraries.back().soname.empty()) seen.insert(libraries.back().soname);
        }
    }
    if (beside != nullptr) beside->run();
    return libraries;
}

void apply_options(SymbolIndex& index, const IndexOptions& options, const std::string& source) {
    std::vector<Candidate> candidates;
    for (LibraryExports& library : index.libraries) {
        LibraryExports* source = &library;
        candidates.push_back({library.file_name, [source] { return std::move(*source); }});
    }
    // Roots may name a SONAME that differs from the file name: resolve those first.
    IndexOptions resolved = options;
    for (std::string& root : resolved.roots)
        if (const LibraryExports* library = index.find_library(root)) root = library->file_name;
    index.libraries = read_libraries(candidates, resolved, source);
}

}  // namespace detail

namespace {

constexpr std::string_view kNotAnIndexSource = "not a torch directory, a wheel or a wheelfix symbol index";

}  // namespace

void require_index_source(const std::filesystem::path& path) {
    if (kind_of(path) == PathKind::other) throw InputError(path.string(), std::string(kNotAnIndexSource));
}

SymbolIndex load_index(const std::filesystem::path& path, const IndexOptions& options) {
    switch (kind_of(path)) {
    case PathKind::directory: return load_index_from_directory(path, options);
    case PathKind::gzip_index:
    case PathKind::text_index: return load_index_file(path, options);
    case PathKind::zip: return load_index_from_wheel(path, options);
    case PathKind::other: break;
    }
    throw InputError(path.string(), std::string(kNotAnIndexSource));
}

}  // namespace wheelfix::abi
