// relink_wheel / relink_file: build per-member EditRequests, plan edits and
// splices during the single read of the wheel, then write once.
#include "wheelfix/repair/relink.hpp"

#include "wheelfix/analysis/elf_report.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/text.hpp"
#include "wheelfix/wheel/rewrite.hpp"
#include "wheelfix/wheel/scan.hpp"
#include "wheelfix/wheel/wheel.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <map>

namespace wheelfix::repair {

namespace {

std::vector<std::string> expanded_entries(const std::vector<std::string>& values, int depth) {
    std::vector<std::string> entries;
    for (const auto& value : values)
        for (auto& entry : split_nonempty(wheel::expand_root(value, depth), ':')) entries.push_back(std::move(entry));
    return entries;
}

// Entries of the current search path that drop_absolute removes.
std::vector<std::string> entries_to_drop(const elf::ElfFile& elf, std::optional<int> depth) {
    std::vector<std::string> drop;
    auto current = elf.runpath() ? elf.runpath() : elf.rpath();
    if (!current) return drop;
    for (auto& entry : split_nonempty(*current, ':')) {
        auto verdict = analysis::classify_search_path(entry, depth);
        if (verdict.absolute || verdict.outside_wheel) drop.push_back(std::move(entry));
    }
    return drop;
}

void check_option_text(std::string_view option, const std::string& value) {
    if (value.find_first_of(std::string_view("\0\n\r", 3)) != std::string::npos)
        throw InputError(std::string(option), "value contains a NUL or newline character");
    if (value.empty() && option != "--set-rpath") throw InputError(std::string(option), "empty value");
}

void check_options(const RelinkOptions& options) {
    if (options.set_rpath) check_option_text("--set-rpath", *options.set_rpath);
    for (const auto& v : options.add_rpath) check_option_text("--add-rpath", v);
    for (const auto& v : options.remove_rpath) check_option_text("--remove-rpath", v);
    for (const auto& [from, to] : options.replace_needed) {
        check_option_text("--replace-needed", from);
        check_option_text("--replace-needed", to);
    }
    for (const auto& v : options.add_needed) check_option_text("--add-needed", v);
    for (const auto& v : options.remove_needed) check_option_text("--remove-needed", v);
    if (options.set_soname) check_option_text("--set-soname", *options.set_soname);
}

// Plans the edit of one ELF image; nullopt when it has nothing to change (or no
// dynamic section to change).
std::optional<elf::EditPlan> plan_for(const RelinkOptions& options, const std::string& label,
                                      std::span<const std::uint8_t> image, std::optional<int> depth) {
    try {
        auto elf = elf::ElfFile::parse(image);
        if (!elf.has_dynamic()) return std::nullopt;
        auto plan = elf::plan_edits(elf, request_for(options, elf, depth));
        if (plan.edits.empty()) return std::nullopt;
        return plan;
    } catch (const elf::ElfError& error) {
        throw InputError(label, std::string("invalid ELF: ") + error.what());
    } catch (const elf::EditError& error) {
        throw InputError(label, std::string("cannot edit: ") + error.what());
    }
}

// What relink's decision reads of a member: the request its options give for the
// member's place and search path (nullopt: no dynamic section, nothing to edit).
// It reads nothing of the wheel.
struct RelinkView : MemberView {
    std::optional<elf::EditRequest> request;
};

}  // namespace

elf::EditRequest request_for(const RelinkOptions& options, int depth) {
    elf::EditRequest request;
    if (options.set_rpath) request.set_search_path = wheel::expand_root(*options.set_rpath, depth);
    request.add_search_path = expanded_entries(options.add_rpath, depth);
    request.remove_search_path = expanded_entries(options.remove_rpath, depth);
    request.force_kind = options.force_kind;
    request.replace_needed = options.replace_needed;
    request.add_needed = options.add_needed;
    request.remove_needed = options.remove_needed;
    request.set_soname = options.set_soname;
    return request;
}

elf::EditRequest request_for(const RelinkOptions& options, const elf::ElfFile& elf, std::optional<int> depth) {
    elf::EditRequest request = request_for(options, depth.value_or(0));
    if (options.drop_absolute)
        for (auto& entry : entries_to_drop(elf, depth)) request.remove_search_path.push_back(std::move(entry));
    return request;
}

bool matches_any(const std::vector<std::string>& globs, std::string_view member) {
    std::string path(member);
    std::string base = base_name(member);
    return std::any_of(globs.begin(), globs.end(), [&](const std::string& pattern) {
        const std::string& subject = pattern.find('/') == std::string::npos ? base : path;
        return ::fnmatch(pattern.c_str(), subject.c_str(), 0) == 0;
    });
}

bool is_selected(const RelinkOptions& options, std::string_view member) {
    return (options.only.empty() || matches_any(options.only, member)) && !matches_any(options.exclude, member);
}

Links& Links::operator+=(const Links& more) {
    add_needed.insert(add_needed.end(), more.add_needed.begin(), more.add_needed.end());
    replace_needed.insert(replace_needed.end(), more.replace_needed.begin(), more.replace_needed.end());
    remove_needed.insert(remove_needed.end(), more.remove_needed.begin(), more.remove_needed.end());
    add_rpath.insert(add_rpath.end(), more.add_rpath.begin(), more.add_rpath.end());
    return *this;
}

RelinkOptions with_links(RelinkOptions options, const Links& links) {
    options.add_needed.insert(options.add_needed.end(), links.add_needed.begin(), links.add_needed.end());
    options.replace_needed.insert(options.replace_needed.end(), links.replace_needed.begin(), links.replace_needed.end());
    options.remove_needed.insert(options.remove_needed.end(), links.remove_needed.begin(), links.remove_needed.end());
    for (const auto& path : links.add_rpath)
        if (std::find(options.add_rpath.begin(), options.add_rpath.end(), path) == options.add_rpath.end())
            options.add_rpath.push_back(path);
    return options;
}

RelinkResult relink_wheel(const std::filesystem::path& wheel_path, const RelinkOptions& options,
                          const std::filesystem::path& out_dir) {
    check_options(options);
    auto wheel = wheel::Wheel::open(wheel_path);
    RelinkResult result;
    WheelPlan plan;
    plan.output = out_dir / wheel_path.filename();
    plan.overwrite = options.overwrite;
    PlanHooks hooks;
    hooks.reads = [&](const zip::Member& member) { return is_selected(options, member.name); };
    hooks.decision.view = [&](const std::string& member, const elf::ElfFile& elf) -> std::shared_ptr<const MemberView> {
        auto view = std::make_shared<RelinkView>();
        if (elf.has_dynamic()) view->request = request_for(options, elf, wheel::directory_depth(member));
        return view;
    };
    hooks.decision.edits_for = [](const MemberView& view, const WheelFacts*) {
        return MemberEdits{static_cast<const RelinkView&>(view).request};
    };
    hooks.decision.decide = [&](WheelPlan&, const PlanResult& read) -> std::shared_ptr<const WheelFacts> {
        result.elf_members = read.elf_members;
        if (!options.only.empty() && read.elf_members == 0)
            throw InputError(wheel_path.string(), options.exclude.empty() ? "--only matches no ELF member"
                                                                          : "--only matches no ELF member --exclude leaves");
        return nullptr;
    };
    ExecuteOptions execute;
    execute.dry_run = options.dry_run;
    auto executed = execute_plan(wheel, plan, hooks, execute);
    if (options.dry_run) result.plan = describe_plan(wheel, plan, executed);
    result.output = executed.output;
    result.changed = std::move(executed.changed);
    return result;
}

RelinkResult relink_file(const std::filesystem::path& file, const RelinkOptions& options,
                         const std::filesystem::path& out_file) {
    check_options(options);
    MappedFile mapped(file);
    auto image = mapped.bytes();
    if (!elf::is_elf(image)) throw InputError(file.string(), "not an ELF file and not a wheel");
    if (same_file(file, out_file))
        throw InputError(out_file.string(), "output would overwrite the input; choose another -o file");
    refuse_existing_output(out_file, options.overwrite);
    RelinkResult result;
    result.output = out_file;
    result.elf_members = 1;
    auto plan = plan_for(options, file.string(), image, std::nullopt);
    auto perms = std::filesystem::status(file).permissions();
    if (!plan) {
        write_file_atomically(out_file, image, perms, options.overwrite);
        return result;
    }
    write_file_atomically(out_file, apply_edits(image, plan->edits), perms, options.overwrite);
    result.changed.push_back({file.string(), plan->changes, image.size(), plan->new_size, 0, plan->grew});
    return result;
}

}  // namespace wheelfix::repair
