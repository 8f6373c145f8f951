// Editor stage 2: what the dynamic table must say after the request.
//
// Contract: plan_dynamic(elf, layout, request) starts from the input's dynamic
// entries (up to DT_NULL) and applies, in this order: the search path (rule in
// editor.hpp; the kind is kept, DT_RUNPATH for a file with neither, force_kind
// converts the existing entry in place; a file carrying both keeps both with the
// same value), replace_needed (the verneed vn_file naming the old library follows,
// because ld.so matches version needs to loaded objects by that name), remove_needed
// (refused when symbol versions are needed from the library), add_needed (after the
// existing DT_NEEDED, skipped when present) and set_soname. New entries are appended
// to the table, so no existing entry moves; then remove_all_search_paths, DT_FLAGS_1
// bits and DT_DEBUG. With patchelf_rules the order and placement are patchelf's
// (editor.hpp). Every effective change adds one line to DynamicPlan::changes; a
// request that changes nothing adds none.
#include "editor_internal.hpp"
#include "wheelfix/util/text.hpp"

#include <elf.h>

#include <algorithm>

namespace wheelfix::elf {

namespace {

bool contains(const std::vector<std::string>& list, std::string_view value) {
    return std::find(list.begin(), list.end(), value) != list.end();
}

bool touches_search_path(const EditRequest& request) {
    return request.set_search_path || !request.add_search_path.empty() ||
           !request.remove_search_path.empty() || request.drop_absolute ||
           request.force_kind != SearchPathKind::keep;
}

}  // namespace

bool EditRequest::touches_dynamic() const {
    return touches_search_path(*this) || !replace_needed.empty() || !add_needed.empty() || !remove_needed.empty() ||
           set_soname || remove_all_search_paths || add_flags_1 != 0 || add_debug || !rename_symbols.empty();
}

bool EditRequest::empty() const {
    return !touches_dynamic() && !interpreter;
}

std::string resulting_search_path(const std::optional<std::string>& current,
                                  const EditRequest& request) {
    std::vector<std::string> kept;
    for (std::string& entry :
         split_nonempty(request.set_search_path.value_or(current.value_or("")), ':')) {
        if (contains(request.remove_search_path, entry)) continue;
        if (request.drop_absolute && !after_origin(entry)) continue;
        kept.push_back(std::move(entry));
    }
    for (const std::string& added : request.add_search_path)
        for (std::string& entry : split_nonempty(added, ':'))
            if (!contains(kept, entry)) kept.push_back(std::move(entry));
    return join(kept, ":");
}

namespace editor {

namespace {

using Entries = std::vector<PlannedEntry>;

std::string shown(std::string_view value) {
    return value.empty() ? "\"\"" : std::string(value);
}

PlannedEntry* find_entry(Entries& entries, std::int64_t tag) {
    for (PlannedEntry& entry : entries)
        if (entry.entry.tag == tag) return &entry;
    return nullptr;
}

StringField field_for(std::string_view text, std::uint64_t offset) {
    return StringField{std::string(text), std::string(text), offset, 0};
}

StringField new_field(std::string text) {
    return StringField{std::move(text), {}, std::nullopt, 0};
}

// The plan before any change: the input's dynamic entries and verneed vn_file
// fields, each string with its text.
DynamicPlan unchanged_plan(const ElfFile& elf, const Layout& layout, const EditRequest& request) {
    const ElfBytes in = reader_for(elf);
    const Extent strings{layout.strings_offset, layout.strings_size};
    DynamicPlan plan;
    for (std::size_t i = 0; i < elf.dynamic().size(); ++i) {
        const DynamicEntry& entry = elf.dynamic()[i];
        PlannedEntry planned{entry, i, std::nullopt};
        if (is_string_tag(entry.tag))
            planned.string = field_for(in.string_at(strings, entry.value, "dynamic string"), entry.value);
        plan.entries.push_back(std::move(planned));
    }
    for (const VersionNeed& need : elf.version_needs())
        plan.verneed_files.push_back(
            {need.file_field, field_for(in.string_at(strings, need.file_name, "verneed file name"), need.file_name)});
    plan.extra_program_header = request.add_program_header;
    plan.page_size = request.page_size;
    return plan;
}

// New entries go last: no existing entry moves (MIPS entries that are relative to
// their own address stay valid, and tools that number entries keep their numbers);
// ld.so reads DT_NEEDED in table order wherever they stand. patchelf inserts every
// new entry at the top of the table (on_top).
void add_entry(Entries& entries, std::int64_t tag, std::optional<std::string> text, bool on_top = false,
               std::uint64_t value = 0) {
    PlannedEntry entry{DynamicEntry{tag, value}, std::nullopt, std::nullopt};
    if (text) entry.string = new_field(std::move(*text));
    entries.insert(on_top ? entries.begin() : entries.end(), std::move(entry));
}

void remove_tag(Entries& entries, std::int64_t tag) {
    std::erase_if(entries, [tag](const PlannedEntry& entry) { return entry.entry.tag == tag; });
}

struct SearchPathState {
    bool rpath = false;
    bool runpath = false;
    std::string value;
    bool any() const { return rpath || runpath; }
    std::string kinds() const {
        return rpath && runpath ? "RPATH+RUNPATH" : rpath ? "RPATH" : "RUNPATH";
    }
};

SearchPathState current_search_path(Entries& entries) {
    SearchPathState state;
    PlannedEntry* rpath = find_entry(entries, DT_RPATH);
    PlannedEntry* runpath = find_entry(entries, DT_RUNPATH);
    state.rpath = rpath != nullptr;
    state.runpath = runpath != nullptr;
    // ld.so ignores DT_RPATH when DT_RUNPATH is present.
    if (runpath)
        state.value = runpath->string->text;
    else if (rpath)
        state.value = rpath->string->text;
    return state;
}

SearchPathState wanted_search_path(const SearchPathState& before, const EditRequest& request) {
    SearchPathState after;
    after.value =
        resulting_search_path(before.any() ? std::optional(before.value) : std::nullopt, request);
    if (after.value.empty()) return after;
    switch (request.force_kind) {
    case SearchPathKind::rpath: after.rpath = true; break;
    case SearchPathKind::runpath: after.runpath = true; break;
    case SearchPathKind::keep:
        after.rpath = before.rpath;
        after.runpath = before.runpath || !before.any();
        break;
    }
    return after;
}

// An entry of the kind no longer wanted becomes the wanted kind, in its place.
void convert_kind(Entries& entries, std::int64_t from, std::int64_t to) {
    PlannedEntry* entry = find_entry(entries, from);
    if (entry && !find_entry(entries, to)) entry->entry.tag = to;
}

void set_search_path_entries(Entries& entries, const SearchPathState& after) {
    if (after.runpath && !after.rpath) convert_kind(entries, DT_RPATH, DT_RUNPATH);
    if (after.rpath && !after.runpath) convert_kind(entries, DT_RUNPATH, DT_RPATH);
    if (!after.rpath) remove_tag(entries, DT_RPATH);
    if (!after.runpath) remove_tag(entries, DT_RUNPATH);
    for (std::int64_t tag : {DT_RPATH, DT_RUNPATH}) {
        if (!(tag == DT_RPATH ? after.rpath : after.runpath)) continue;
        bool found = false;
        for (PlannedEntry& entry : entries)
            if (entry.entry.tag == tag) {
                entry.string->text = after.value;
                found = true;
            }
        if (!found) add_entry(entries, tag, after.value);
    }
}

std::string describe_search_path(const SearchPathState& before, const SearchPathState& after) {
    if (!after.any()) return before.kinds() + ": " + shown(before.value) + " -> (removed)";
    if (!before.any()) return after.kinds() + ": (none) -> " + shown(after.value);
    const std::string kinds =
        before.kinds() == after.kinds() ? after.kinds() : before.kinds() + " -> " + after.kinds();
    if (before.value == after.value) return kinds + ": " + shown(after.value);
    return kinds + ": " + shown(before.value) + " -> " + shown(after.value);
}

void apply_search_path(Entries& entries, const EditRequest& request, std::vector<std::string>& changes) {
    if (!touches_search_path(request)) return;
    const SearchPathState before = current_search_path(entries);
    const SearchPathState after = wanted_search_path(before, request);
    const bool same = before.rpath == after.rpath && before.runpath == after.runpath &&
                      (before.value == after.value || !after.any());
    if (same) return;
    set_search_path_entries(entries, after);
    changes.push_back(describe_search_path(before, after));
}

void replace_needed(DynamicPlan& plan, const std::string& from, const std::string& to) {
    if (from == to) return;
    bool replaced = false;
    for (PlannedEntry& entry : plan.entries)
        if (entry.entry.tag == DT_NEEDED && entry.string->text == from) {
            entry.string->text = to;
            replaced = true;
        }
    if (!replaced) return;
    plan.changes.push_back("NEEDED: " + from + " -> " + to);
    for (PlannedVerneedFile& file : plan.verneed_files)
        if (file.string.text == from) {
            file.string.text = to;
            plan.changes.push_back("symbol versions needed from " + from + " now from " + to);
        }
}

void remove_needed(DynamicPlan& plan, const std::string& name) {
    const auto is_it = [&](const PlannedEntry& entry) {
        return entry.entry.tag == DT_NEEDED && entry.string->text == name;
    };
    if (std::none_of(plan.entries.begin(), plan.entries.end(), is_it)) return;
    for (const PlannedVerneedFile& file : plan.verneed_files)
        if (file.string.text == name)
            throw EditError("cannot remove NEEDED " + name + ": symbol versions are required from it");
    std::erase_if(plan.entries, is_it);
    plan.changes.push_back("NEEDED: - " + name);
}

void add_needed(DynamicPlan& plan, const std::string& name) {
    for (const PlannedEntry& entry : plan.entries)
        if (entry.entry.tag == DT_NEEDED && entry.string->text == name) return;
    add_entry(plan.entries, DT_NEEDED, name);
    plan.changes.push_back("NEEDED: + " + name);
}

void set_soname(DynamicPlan& plan, const std::string& name, bool on_top) {
    PlannedEntry* soname = find_entry(plan.entries, DT_SONAME);
    if (!soname) {
        add_entry(plan.entries, DT_SONAME, name, on_top);
        plan.changes.push_back("SONAME: (none) -> " + name);
        return;
    }
    if (soname->string->text == name) return;
    plan.changes.push_back("SONAME: " + soname->string->text + " -> " + name);
    soname->string->text = name;
}

void add_flags_1(DynamicPlan& plan, std::uint64_t bits, bool on_top) {
    if (bits == 0) return;
    if (PlannedEntry* flags = find_entry(plan.entries, DT_FLAGS_1)) {
        if ((flags->entry.value & bits) == bits) return;
        flags->entry.value |= bits;
    } else {
        add_entry(plan.entries, DT_FLAGS_1, std::nullopt, on_top, bits);
    }
    plan.changes.push_back("FLAGS_1: + " + std::string(bits == DF_1_NODEFLIB ? "NODEFLIB" : hex(bits)));
}

void add_debug(DynamicPlan& plan, bool on_top) {
    if (find_entry(plan.entries, DT_DEBUG)) return;
    add_entry(plan.entries, DT_DEBUG, std::nullopt, on_top);
    plan.changes.push_back("DEBUG: + (added)");
}

void remove_search_paths(DynamicPlan& plan) {
    const SearchPathState before = current_search_path(plan.entries);
    if (!before.any()) return;
    remove_tag(plan.entries, DT_RPATH);
    remove_tag(plan.entries, DT_RUNPATH);
    plan.changes.push_back(before.kinds() + ": " + shown(before.value) + " -> (removed)");
}

// patchelf's modifyRPath (rpSet): kinds converted first, then the value verbatim on
// every RPATH/RUNPATH entry, or a new entry on top.
void patchelf_search_path(DynamicPlan& plan, const EditRequest& request) {
    Entries& entries = plan.entries;
    const SearchPathState before = current_search_path(entries);
    const bool force_rpath = request.force_kind == SearchPathKind::rpath;
    std::string converted;
    if (!force_rpath && before.rpath && !before.runpath) {
        find_entry(entries, DT_RPATH)->entry.tag = DT_RUNPATH;
        converted = "RPATH -> RUNPATH";
    } else if (force_rpath && before.runpath) {
        for (PlannedEntry& entry : entries)
            if (entry.entry.tag == DT_RUNPATH) entry.entry.tag = DT_RPATH;
        converted = "RUNPATH -> RPATH";
    }
    const std::string value = request.set_search_path.value_or(before.value);
    if (!before.any() && value.empty()) return;  // patchelf adds no entry for an empty path
    if (!before.any()) {
        add_entry(entries, force_rpath ? DT_RPATH : DT_RUNPATH, value, true);
        plan.changes.push_back(std::string(force_rpath ? "RPATH" : "RUNPATH") + ": (none) -> " + shown(value));
        return;
    }
    for (PlannedEntry& entry : entries)
        if (entry.entry.tag == DT_RPATH || entry.entry.tag == DT_RUNPATH) entry.string->text = value;
    if (value != before.value)
        plan.changes.push_back((converted.empty() ? before.kinds() : converted) + ": " + shown(before.value) +
                               " -> " + shown(value));
    else if (!converted.empty())
        plan.changes.push_back(converted + ": " + shown(value));
}

void add_needed_on_top(DynamicPlan& plan, const std::vector<std::string>& names) {
    // patchelf keeps the names in a std::set: sorted, each once, the block on top.
    std::vector<std::string> sorted(names);
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    for (auto name = sorted.rbegin(); name != sorted.rend(); ++name) add_entry(plan.entries, DT_NEEDED, *name, true);
    for (const std::string& name : sorted) plan.changes.push_back("NEEDED: + " + name);
}

DynamicPlan plan_patchelf_dynamic(DynamicPlan plan, const EditRequest& request) {
    if (request.set_soname) set_soname(plan, *request.set_soname, true);
    if (request.remove_all_search_paths)
        remove_search_paths(plan);
    else if (request.set_search_path)
        patchelf_search_path(plan, request);
    for (const std::string& name : request.remove_needed) remove_needed(plan, name);
    for (const auto& [from, to] : request.replace_needed) replace_needed(plan, from, to);
    add_needed_on_top(plan, request.add_needed);
    add_flags_1(plan, request.add_flags_1, true);
    if (request.add_debug) add_debug(plan, true);
    return plan;
}

void check_text(std::string_view what, std::string_view text) {
    if (text.find('\0') != std::string_view::npos)
        throw EditError(std::string(what) + " contains a NUL character");
}

void check_library_name(std::string_view what, std::string_view name) {
    check_text(what, name);
    if (name.empty()) throw EditError(std::string(what) + " is empty");
}

}  // namespace

void check_request(const EditRequest& request) {
    if (request.set_search_path) check_text("search path", *request.set_search_path);
    for (const std::string& entry : request.add_search_path) check_text("search path", entry);
    for (const auto& [from, to] : request.replace_needed) {
        check_library_name("NEEDED name", from);
        check_library_name("NEEDED name", to);
    }
    for (const std::string& name : request.add_needed) check_library_name("NEEDED name", name);
    if (request.set_soname) check_library_name("SONAME", *request.set_soname);
    if (request.interpreter) check_library_name("interpreter", *request.interpreter);
    if (request.page_size && (*request.page_size == 0 || (*request.page_size & (*request.page_size - 1)) != 0 ||
                              *request.page_size > (std::uint64_t(1) << 30)))
        throw EditError("the page size must be a power of two up to 1 GiB");
    for (const auto& [from, to] : request.rename_symbols) {
        check_library_name("symbol name", from);
        check_library_name("symbol name", to);
    }
}

DynamicPlan plan_dynamic(const ElfFile& elf, const Layout& layout, const EditRequest& request) {
    DynamicPlan plan = unchanged_plan(elf, layout, request);
    plan_symbol_renames(elf, layout, request, plan);
    if (request.patchelf_rules) return plan_patchelf_dynamic(std::move(plan), request);
    if (request.remove_all_search_paths) remove_search_paths(plan);
    apply_search_path(plan.entries, request, plan.changes);
    for (const auto& [from, to] : request.replace_needed) replace_needed(plan, from, to);
    for (const std::string& name : request.remove_needed) remove_needed(plan, name);
    for (const std::string& name : request.add_needed) add_needed(plan, name);
    if (request.set_soname) set_soname(plan, *request.set_soname, false);
    add_flags_1(plan, request.add_flags_1, false);
    if (request.add_debug) add_debug(plan, false);
    return plan;
}

}  // namespace editor

}  // namespace wheelfix::elf
