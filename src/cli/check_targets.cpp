// Reading check's targets (check_targets.hpp has the contract).
#include "check_targets.hpp"

#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/elf/streamed_elf.hpp"
#include "wheelfix/zip/seekable_member.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/progress.hpp"
#include "wheelfix/zip/archive.hpp"

#include <set>

namespace wheelfix::cli {

namespace {

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

// One library member, streamed: only its dynamic tables are kept (elf/streamed_elf.hpp),
// so memory does not grow with the member.
void add_streamed_member(Targets& targets, const std::string& wheel, const zip::Archive& archive,
                         const zip::Member& member) {
    elf::StreamedElf streamed(member.size, elf::StreamedElf::Needs::dynamic_linking);
    const zip::SeekableMember seekable(archive, member, [&](std::span<const std::uint8_t> chunk) { streamed.consume(chunk); });
    if (!streamed.is_elf()) return;
    auto fetch = [&](const ByteRanges& ranges, const elf::FetchSink& sink) { seekable.read(ranges, sink); };
    try {
        // Imports and exports are copies, so the partial image can go afterwards.
        Targets found = elf::read_streamed(streamed, fetch,
                                           [&](std::span<const std::uint8_t> image, const ByteRanges* present) {
                                               Targets one;
                                               add_target(one, member.name, elf::ElfFile::parse(image, present));
                                               return one;
                                           });
        for (auto& target : found.elves) targets.elves.push_back(std::move(target));
        for (auto& library : found.bundled.libraries) targets.bundled.libraries.push_back(std::move(library));
    } catch (const elf::ElfError& error) {
        throw InputError(wheel, member.name + ": invalid ELF: " + error.what());
    }
}

bool is_library_member(const zip::Member& member) {
    return !member.is_directory && !member.is_symlink && analysis::looks_like_shared_library(member.name);
}

Targets read_wheel_targets(const std::string& path) {
    Targets targets;
    const zip::Archive archive = zip::Archive::open(path);
    std::uint64_t total = 0;
    for (const zip::Member& member : archive.members())
        if (is_library_member(member)) total += member.size;
    const ProgressTask progress("reading " + archive.path().filename().string(), total);
    for (const zip::Member& member : archive.members()) {
        if (!is_library_member(member)) continue;
        add_streamed_member(targets, path, archive, member);
        progress.advance(member.size);
    }
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

}  // namespace wheelfix::cli
