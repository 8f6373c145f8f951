// plan_grafts (repair/graft.hpp): resolve, refuse what cannot load, name and edit
// the copies.
#include "wheelfix/repair/graft.hpp"

#include "wheelfix/elf/editor.hpp"
#include "wheelfix/policy/library_classes.hpp"
#include "wheelfix/repair/sbom.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/text.hpp"

#include <algorithm>
#include <memory>
#include <set>

namespace wheelfix::repair {

namespace {

bool wheel_links_musl(const std::vector<analysis::ElfReport>& elves) {
    return std::any_of(elves.begin(), elves.end(), [](const auto& elf) { return elf.needs.links_musl; });
}

std::optional<int> wheel_cuda_major(const std::vector<analysis::ElfReport>& elves) {
    for (const auto& elf : elves)
        if (elf.cudart_major) return elf.cudart_major;
    return std::nullopt;
}

// "libffi.so.5 (needed by a.so, b.so: not found)"
[[noreturn]] void refuse_missing(const wheel::Wheel& wheel, const std::vector<analysis::NeededResolution::Missing>& missing) {
    std::vector<std::string> parts;
    for (const auto& m : missing) parts.push_back(m.name + " (" + m.problem + "; needed by " + join(m.needed_by, ", ") + ")");
    throw InputError(wheel.archive().path().string(),
                     "cannot be made to load: " + join(parts, "; ") + " (use --ldpaths DIR where it lives, or --exclude GLOB to leave it out)");
}

std::vector<std::uint8_t> edited_copy(const GraftedFile& graft, std::span<const std::uint8_t> original,
                                      const std::map<std::string, std::string>& renames, std::vector<std::string>& changes) {
    auto elf = elf::ElfFile::parse(original);
    elf::EditRequest request;
    request.set_soname = graft.new_name;
    request.set_search_path = "$ORIGIN";
    for (auto needed : elf.needed())
        if (auto renamed = renames.find(std::string(needed)); renamed != renames.end())
            request.replace_needed.emplace_back(renamed->first, renamed->second);
    auto plan = elf::plan_edits(elf, request);
    changes = plan.changes;
    return apply_edits(original, plan.edits);
}

}  // namespace

std::string hashed_name(const std::string& needed_name, const std::string& sha256_hex) {
    const std::string hash = sha256_hex.substr(0, 8);
    auto dot = needed_name.find('.');
    std::string base = needed_name.substr(0, dot);
    std::string rest = dot == std::string::npos ? "" : needed_name.substr(dot);
    if (base.ends_with("-" + hash)) return needed_name;
    return base + "-" + hash + rest;
}

bool may_need_graft(const analysis::ElfReport& elf, bool musl) {
    const auto& classes = policy::library_classes();
    return std::any_of(elf.needed.begin(), elf.needed.end(), [&](const std::string& name) {
        auto named = policy::classify_name(classes, name, musl).named;
        return named == policy::NamedClass::none || named == policy::NamedClass::python;
    });
}

Links GraftPlan::links(const analysis::ElfReport& member) const {
    Links options;
    for (const auto& needed : member.needed)
        if (auto renamed = renames.find(needed); renamed != renames.end()) options.replace_needed.emplace_back(needed, renamed->second);
    if (!options.replace_needed.empty()) options.add_rpath.push_back("{root}/" + libs_dir);
    for (const auto& object : resolution.members)
        if (object.name == member.name)
            for (const auto& need : object.needs)
                if (need.library_class == analysis::LibraryClass::python) options.remove_needed.push_back(need.name);
    return options;
}

std::optional<Links> early_links(const wheel::Wheel& wheel, const analysis::ElfReport& elf,
                                         const GraftOptions& options, const std::string& libs_dir) {
    std::set<std::string> base_names;
    for (const auto& member : wheel.archive().members()) base_names.insert(base_name(member.name));
    for (const auto& needed : elf.needed)
        if (base_names.contains(needed)) return std::nullopt;
    const analysis::SearchContext context{.ldpaths = options.ldpaths, .root = options.root, .exclude = options.exclude,
                                          .musl = elf.needs.links_musl, .cuda_major = elf.cudart_major};
    std::vector<analysis::WheelElf> view{{elf.name, analysis::installed_path(elf.name).value_or(""), &elf}};
    GraftPlan plan;
    plan.libs_dir = libs_dir;
    plan.resolution = analysis::resolve_needed(view, {}, context);
    if (!plan.resolution.missing().empty()) return std::nullopt;
    for (const auto& library : plan.resolution.grafts) {
        try {
            MappedFile file(library.path);
            plan.renames.emplace(library.needed_name, hashed_name(library.needed_name, hex_digest(sha256(file.bytes()))));
        } catch (const InputError&) {
            return std::nullopt;
        }
    }
    return plan.links(elf);
}

GraftPlan plan_grafts(const wheel::Wheel& wheel, const std::vector<analysis::ElfReport>& elves,
                      const GraftOptions& options, const std::string& libs_dir) {
    std::vector<analysis::WheelElf> view;
    std::set<std::string> elf_members;
    for (const auto& elf : elves) {
        view.push_back({elf.name, analysis::installed_path(elf.name).value_or(""), &elf});
        elf_members.insert(elf.name);
    }
    std::vector<std::string> others;
    for (const auto& member : wheel.archive().members())
        if (!elf_members.contains(member.name) && !member.name.starts_with(wheel.dist_info() + "/"))
            if (auto installed = analysis::installed_path(member.name)) others.push_back(*installed);

    const analysis::SearchContext context{.ldpaths = options.ldpaths, .root = options.root, .exclude = options.exclude,
                                          .musl = wheel_links_musl(elves), .cuda_major = wheel_cuda_major(elves)};

    GraftPlan plan;
    plan.libs_dir = libs_dir;
    plan.resolution = analysis::resolve_needed(view, others, context);
    if (auto missing = plan.resolution.missing(); !missing.empty()) refuse_missing(wheel, missing);

    // Names first (every copy's edits need every new name), then the copies.
    std::vector<std::unique_ptr<MappedFile>> files;
    files.reserve(plan.resolution.grafts.size());
    for (const auto& library : plan.resolution.grafts) {
        files.push_back(std::make_unique<MappedFile>(library.path));
        GraftedFile graft;
        graft.needed_name = library.needed_name;
        graft.source = library.path;
        graft.sha256 = hex_digest(sha256(files.back()->bytes()));
        graft.new_name = hashed_name(library.needed_name, graft.sha256);
        graft.member = libs_dir + "/" + graft.new_name;
        graft.needed_by = library.needed_by;
        if (wheel.archive().find(graft.member))
            throw InputError(wheel.archive().path().string(),
                             "grafting " + library.needed_name + " would replace the member " + graft.member);
        plan.renames.emplace(graft.needed_name, graft.new_name);
        plan.needs = policy::newest(plan.needs, library.needs);
        plan.grafts.push_back(std::move(graft));
    }
    for (std::size_t i = 0; i < plan.grafts.size(); ++i) {
        auto& graft = plan.grafts[i];
        std::vector<std::uint8_t> bytes;
        try {
            bytes = edited_copy(graft, files[i]->bytes(), plan.renames, graft.changes);
        } catch (const std::exception& error) {
            throw InputError(graft.source.string(), std::string("cannot be grafted: ") + error.what());
        }
        plan.added.push_back({graft.member, std::move(bytes), 0100755});
    }
    if (options.ask_owner && !plan.grafts.empty()) {
        std::vector<std::filesystem::path> sources;
        for (const auto& graft : plan.grafts) sources.push_back(graft.source);
        auto owners = package_owners(sources);
        for (std::size_t i = 0; i < plan.grafts.size(); ++i) plan.grafts[i].owner = std::move(owners[i]);
    }
    return plan;
}

}  // namespace wheelfix::repair
