// The check pipeline (torch_check.hpp has the contract): targets read once, each
// torch loaded as far as the targets' NEEDED closure reaches, misses grouped.
#include "wheelfix/analysis/torch_check.hpp"

#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/elf/streamed_elf.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/parallel_tasks.hpp"
#include "wheelfix/util/progress.hpp"
#include "wheelfix/zip/archive.hpp"
#include "wheelfix/zip/seekable_member.hpp"
#include "wheelfix/zip/tail_inflate.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

namespace wheelfix::analysis {

namespace {

void group_unresolved(TorchResult& result) {
    std::map<std::pair<std::string, std::string>, GroupedSymbol> groups;
    for (const abi::ElfCheck& check : result.members)
        for (const abi::Unresolved& unresolved : check.unresolved) {
            auto [it, fresh] = groups.try_emplace({unresolved.name, unresolved.version}, GroupedSymbol{unresolved, {}});
            it->second.needed_by.push_back(check.member);
        }
    for (auto& [key, group] : groups) result.unresolved.push_back(std::move(group));
    std::sort(result.unresolved.begin(), result.unresolved.end(), [](const GroupedSymbol& a, const GroupedSymbol& b) {
        return std::tie(a.symbol.demangled, a.symbol.name) < std::tie(b.symbol.demangled, b.symbol.name);
    });
}

void group_libraries(TorchResult& result) {
    std::map<std::string, std::vector<std::string>> groups;
    for (const abi::ElfCheck& check : result.members)
        for (const std::string& name : check.missing_libraries) groups[name].push_back(check.member);
    for (auto& [name, members] : groups) result.missing_libraries.push_back({name, std::move(members)});
}


std::string base_name(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

void add_target(Targets& targets, const std::string& member, const elf::ElfFile& elf) {
    if (!elf.has_dynamic()) return;
    targets.elves.push_back({member, abi::imports_of(elf)});
    targets.bundled.libraries.push_back(abi::exports_of(base_name(member), elf));
}

void add_target(Targets& targets, const std::string& member, std::span<const std::uint8_t> bytes) {
    add_target(targets, member, elf::ElfFile::parse(bytes));
}

void append_targets(Targets& targets, Targets&& found) {
    for (auto& target : found.elves) targets.elves.push_back(std::move(target));
    for (auto& library : found.bundled.libraries) targets.bundled.libraries.push_back(std::move(library));
}

// When a member being streamed has given the loader's view of it (torch_check.hpp:
// kStopEarlyFrom): tried at the first MiB, then each time the stream passes the
// end of what the last try found missing; given up when that lay behind the stream
// (it was not kept: the member is read to the end and fetched again).
class EarlyStop {
public:
    EarlyStop(std::uint64_t size, std::atomic<int>& tail_reads_left)
        : size_(size), trying_(size >= kStopEarlyFrom), tail_reads_left_(tail_reads_left) {}

    bool due(std::uint64_t chunk) {
        position_ += chunk;
        return trying_ && position_ >= next_try_ && position_ < size_;
    }
    void missing(const BytesNotKept& missing, elf::StreamedElf& streamed) {
        if (missing.begin() < position_ || missing.end() <= missing.begin()) {
            trying_ = false;
            return;
        }
        streamed.stream().want(missing.begin(), missing.end() - missing.begin());
        next_try_ = missing.end();
    }
    void give_up() { trying_ = false; }
    // Whether what the last try found missing is worth inflating the member's end
    // for (zip/tail_inflate.hpp): kTailFrom bytes or more ahead of the stream, once a
    // member and at most kMaxTailReads times a wheel (each costs at most a few tenths
    // of a second, whatever the bytes).
    bool tail_first(const BytesNotKept& missing) {
        if (tail_tried_ || missing.begin() < position_ || missing.begin() - position_ < kTailFrom) return false;
        tail_tried_ = true;
        return tail_reads_left_.fetch_sub(1) > 0;
    }

private:
    std::uint64_t size_;
    bool trying_;
    std::atomic<int>& tail_reads_left_;
    bool tail_tried_ = false;
    std::uint64_t position_ = 0;
    std::uint64_t next_try_ = std::uint64_t(1) << 20;
};

struct EnoughRead {};

// One library member, streamed: only its dynamic tables are kept (elf/streamed_elf.hpp),
// so memory does not grow with the member; a big one is read only until they are in.
// Touches nothing but `targets` and the (thread-safe) archive: members are read
// concurrently (read_wheel_targets).
void add_streamed_member(Targets& targets, const std::string& wheel, const zip::Archive& archive,
                         const zip::Member& member, std::atomic<int>& tail_reads_left) {
    elf::StreamedElf streamed(member.size, elf::StreamedElf::Needs::dynamic_linking);
    EarlyStop stop(member.size, tail_reads_left);
    std::optional<Targets> early;
    std::optional<zip::SeekableMember> seekable;
    try {
        seekable.emplace(archive, member, [&](std::span<const std::uint8_t> chunk) {
            streamed.consume(chunk);
            if (!stop.due(chunk.size())) return;
            if (!streamed.is_elf()) return stop.give_up();
            for (;;) {
                try {
                    Targets one;
                    add_target(one, member.name, elf::ElfFile::parse_as_loader(streamed.image(), &streamed.kept()));
                    early = std::move(one);
                } catch (const BytesNotKept& missing) {
                    if (stop.tail_first(missing))
                        if (auto tail = zip::inflate_tail(archive, member, missing.begin())) {
                            streamed.fill(tail->begin, tail->bytes);
                            continue;  // and try again with the end in
                        }
                    return stop.missing(missing, streamed);
                } catch (const elf::ElfError&) {
                    return stop.give_up();  // the whole file's parse says what is wrong
                }
                throw EnoughRead{};
            }
        });
    } catch (const EnoughRead&) {
        append_targets(targets, std::move(*early));
        return;
    }
    if (!streamed.is_elf()) return;
    auto fetch = [&](const ByteRanges& ranges, const elf::FetchSink& sink) { seekable->read(ranges, sink); };
    try {
        // Imports and exports are copies, so the partial image can go afterwards.
        Targets found = elf::read_streamed(streamed, fetch,
                                           [&](std::span<const std::uint8_t> image, const ByteRanges* present) {
                                               Targets one;
                                               add_target(one, member.name, elf::ElfFile::parse(image, present));
                                               return one;
                                           });
        append_targets(targets, std::move(found));
    } catch (const elf::ElfError& error) {
        throw InputError(wheel, member.name + ": invalid ELF: " + error.what());
    }
}

bool is_library_member(const zip::Member& member) {
    return !member.is_directory && !member.is_symlink && analysis::looks_like_shared_library(member.name);
}

// The library members are read on the threads the budget spares, largest first
// (util/parallel_tasks.hpp), each into its own Targets; they are joined in member
// order, so the result is the serial one whatever the budget.
Targets read_wheel_targets(const std::string& path) {
    const zip::Archive archive = zip::Archive::open(path);
    std::vector<const zip::Member*> libraries;
    std::vector<std::uint64_t> sizes;
    for (const zip::Member& member : archive.members()) {
        if (!is_library_member(member)) continue;
        libraries.push_back(&member);
        sizes.push_back(member.size);
    }
    const ProgressTask progress("reading " + archive.path().filename().string(),
                                std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{0}));
    std::vector<Targets> found(libraries.size());
    std::atomic<int> tail_reads_left{kMaxTailReads};
    run_tasks(sizes, [&](std::size_t i) {
        add_streamed_member(found[i], path, archive, *libraries[i], tail_reads_left);
        progress.advance(libraries[i]->size);
    });
    Targets targets;
    for (Targets& one : found) append_targets(targets, std::move(one));
    return targets;
}

Targets read_elf_target(const std::string& path) {
    const MappedFile mapped(path);
    const auto bytes = mapped.bytes();
    if (!elf::is_elf(bytes)) throw InputError(path, "not a wheel and not an ELF file");
    Targets targets;
    try {
        add_target(targets, path, bytes);
    } catch (const elf::ElfError& error) {
        throw InputError(path, std::string("invalid ELF: ") + error.what());
    }
    if (targets.elves.empty()) throw InputError(path, "has no dynamic section: nothing to resolve");
    return targets;
}

}  // namespace

void add_wheel_member(Targets& targets, const std::string& wheel, const std::string& member,
                      std::span<const std::uint8_t> bytes) {
    if (!analysis::looks_like_shared_library(member) || !elf::is_elf(bytes)) return;
    try {
        add_target(targets, member, bytes);
    } catch (const elf::ElfError& error) {
        throw InputError(wheel, member + ": invalid ELF: " + error.what());
    }
}

Targets read_targets(const std::string& path, bool refuse_empty) {
    Targets targets = wheelfix::starts_like_zip(path) ? read_wheel_targets(path) : read_elf_target(path);
    if (refuse_empty && targets.elves.empty()) throw InputError(path, "holds no ELF shared objects: nothing to check");
    return targets;
}

std::vector<std::string> needed_roots(const Targets& targets) {
    std::set<std::string> names;
    for (const Target& target : targets.elves) names.insert(target.imports.needed.begin(), target.imports.needed.end());
    return {names.begin(), names.end()};
}

TorchResult check_against(const Targets& targets, const abi::SymbolIndex& index) {
    std::vector<abi::ElfCheck> checks;
    for (const Target& target : targets.elves)
        checks.push_back(abi::check_imports(target.member, target.imports, index, &targets.bundled));
    return build_torch_result(index, std::move(checks));
}

abi::SymbolIndex load_torch(const std::string& path, const abi::IndexOptions& options, abi::WheelReadStats* stats) {
    if (!wheelfix::starts_like_zip(path)) return abi::load_index(path, options);
    return abi::load_index_from_wheel(path, options, stats);
}

bool CheckReport::loads_everywhere() const {
    return std::all_of(torches.begin(), torches.end(), [](const TorchResult& torch) { return torch.loads(); });
}

TorchResult build_torch_result(const abi::SymbolIndex& index, std::vector<abi::ElfCheck> members) {
    TorchResult result;
    result.source = index.source;
    result.label = index.label();
    result.torch_version = index.torch_version;
    result.cuda_version = index.cuda_version;
    result.members = std::move(members);
    group_unresolved(result);
    group_libraries(result);
    return result;
}

TorchPick pick_newest_torch(const Targets& targets, const std::string& input, const std::vector<std::string>& paths,
                            const TorchLoader& load) {
    if (targets.elves.empty()) throw InputError(input, "holds no ELF extensions: --torch auto has nothing to check");
    abi::IndexOptions options;
    options.roots = needed_roots(targets);
    TorchPick pick;
    pick.report.input = input;
    for (const std::string& path : paths) {
        TorchResult result = check_against(targets, load(path, options));
        auto version = wheel::Version::try_parse(result.torch_version);
        if (!version) throw InputError(path, "torch version unknown, so --torch auto cannot retag for it");
        if (result.loads() && (!pick.torch || *version > *pick.torch)) pick.torch = version;
        pick.report.torches.push_back(std::move(result));
    }
    return pick;
}

}  // namespace wheelfix::analysis
