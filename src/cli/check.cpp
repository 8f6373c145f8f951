// `wheelfix check WHEEL|ELF --torch PATH... [--json]`: will the wheel's extensions
// load against each torch? PATH is a torch directory, a torch wheel or an index.
//
// The input is read once: each ELF member of a wheel (members named like shared
// libraries) is parsed and reduced to what resolution needs (its NEEDED and
// undefined symbols) and to its own exports, which join the search scope of the
// other members (libraries a wheel bundles); then its bytes are dropped. Each
// torch is loaded only as far as the members' NEEDED closure reaches, so a torch
// wheel has only those libraries inflated, once each. Exit 0 when everything
// resolves against every torch, 1 when anything is missing, 2 on error.
#include "check_report.hpp"
#include "commands.hpp"
#include "render.hpp"
#include "torch_input.hpp"

#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/zip/archive.hpp"

#include <fmt/format.h>

#include <iterator>
#include <set>

namespace wheelfix::cli {

namespace {

struct Target {
    std::string member;
    abi::ElfImports imports;
};

struct Targets {
    std::vector<Target> elves;
    abi::SymbolIndex bundled;  // the input's own libraries
};

std::string base_name(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

void add_target(Targets& targets, const std::string& member, std::span<const std::uint8_t> bytes) {
    const elf::ElfFile elf = elf::ElfFile::parse(bytes);
    if (!elf.has_dynamic()) return;
    targets.elves.push_back({member, abi::imports_of(elf)});
    targets.bundled.libraries.push_back(abi::exports_of(base_name(member), elf));
}

Targets read_wheel_targets(const std::string& path) {
    Targets targets;
    const zip::Archive archive = zip::Archive::open(path);
    for (const zip::Member& member : archive.members()) {
        if (member.is_directory || member.is_symlink || !analysis::looks_like_shared_library(member.name)) continue;
        const std::vector<std::uint8_t> bytes = archive.read(member);
        if (!elf::is_elf(bytes)) continue;
        try {
            add_target(targets, member.name, bytes);
        } catch (const elf::ElfError& error) {
            throw InputError(path, member.name + ": invalid ELF: " + error.what());
        }
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

Targets read_targets(const std::string& path) {
    Targets targets = wheelfix::starts_like_zip(path) ? read_wheel_targets(path) : read_elf_target(path);
    if (targets.elves.empty()) throw InputError(path, "holds no ELF shared objects: nothing to check");
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

int run_check(const std::string& input, const std::vector<std::string>& torches, const GlobalOptions& global) {
    const Targets targets = read_targets(input);
    abi::IndexOptions options;
    options.roots = needed_roots(targets);
    CheckReport report;
    report.input = input;
    for (const std::string& torch : torches)
        report.torches.push_back(check_against(targets, load_torch(torch, options, global.verbose)));
    fmt::print("{}", global.json ? write_check_json(report) : render_check_text(report, global));
    return report.loads_everywhere() ? 0 : 1;
}

}  // namespace

CommandRunner register_check(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand("check", "Resolve every undefined dynamic symbol of the wheel's extensions "
                                                "against each torch (a torch directory, torch wheel or index) the "
                                                "way ld.so would; explain every miss and its near misses");
    auto input = std::make_shared<std::string>();
    auto torches = std::make_shared<std::vector<std::string>>();
    command->add_option("input", *input, "A wheel (*.whl) or an ELF shared object")->required();
    command->add_option("--torch", *torches, "Torch package directory, torch wheel or wheelfix index (repeatable)")
        ->required()
        ->take_all();
    return [input, torches, &global] { return run_check(*input, *torches, global); };
}

}  // namespace wheelfix::cli
