// The ELF editor's entry point: plan_edits (contract in elf/editor.hpp).
//
// Contract: runs the stages of editor_internal.hpp in order — layout, dynamic
// plan, string placement — then writes the result in place when the string table
// keeps its size and the entries fit the existing .dynamic slots (and no wheelfix
// segment exists yet), else through the appended segment (editor_segment.cpp).
// The strip (editor_strip.cpp) works on the file the stages before it laid out.
#include "editor_internal.hpp"
#include "wheelfix/util/byte_edit.hpp"
#include "wheelfix/util/timings.hpp"

#include <elf.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

namespace wheelfix::elf {

namespace {

using namespace editor;

bool fits_in_place(const Layout& layout, const DynamicPlan& plan, const PlacedStrings& strings) {
    return !layout.appended && !strings.grew() && !plan.segment_interpreter &&
           plan.entries.size() + 1 <= layout.dynamic_capacity;
}

// Why a dynamic edit cannot be made: a separate debug-info file (objcopy
// --only-keep-debug: its .dynamic is SHT_NOBITS, the loaded bytes live in the
// stripped file) or a statically linked one.
std::string why_no_dynamic(const ElfFile& elf) {
    const SectionHeader* dynamic = elf.section(".dynamic");
    if (dynamic && dynamic->type == SHT_NOBITS)
        return "a separate debug-info file (its .dynamic has no contents; edit the stripped file it belongs to)";
    return "no dynamic section: the file loads no libraries to edit (statically linked?)";
}

// A file without a dynamic section: only an interpreter that fits PT_INTERP.
EditPlan plan_without_dynamic(const ElfFile& elf, const EditRequest& request) {
    EditPlan plan;
    plan.new_size = elf.bytes().size();
    DynamicPlan dynamic;
    Overlay overlay(elf.bytes());
    if (!plan_interpreter(elf, nullptr, request, dynamic, overlay)) return plan;
    plan.edits = overlay.edits(plan.new_size);
    plan.changes = std::move(dynamic.changes);
    return plan;
}

void write_in_place(const ElfFile& elf, const Layout& layout, const DynamicPlan& plan,
                    const PlacedStrings& strings, Overlay& overlay) {
    overlay.write(layout.strings_offset, strings.table);
    const StringTableAddress table{layout.strings_vaddr, layout.strings_size};
    const std::vector<DynamicEntry> entries =
        final_entries(elf, layout, plan, table, layout.dynamic_vaddr);
    overlay.write(layout.dynamic_offset,
                  encode_dynamic(writer_for(elf), entries, layout.dynamic_capacity));
    write_verneed_files(elf, plan, overlay);
}

// A name table sharing bytes with the ELF header, the program headers or the
// dynamic tables (only a damaged file has one) would be rewritten along with them
// and the edited file's section names would not read back: refused.
void refuse_edits_of_section_names(const ElfFile& elf, const Layout& layout, const ByteEdits& edits) {
    const auto& sections = elf.sections();
    const std::uint64_t index = layout.names_section;
    if (index == SHN_UNDEF || index >= sections.size() || sections[index].type == SHT_NOBITS) return;
    const std::uint64_t begin = sections[index].offset, end = begin + sections[index].size;
    for (const ByteEdit& edit : edits)
        if (edit.offset < end && begin < edit.offset + std::max<std::uint64_t>(edit.length, 1) &&
            edit.offset < elf.bytes().size())
            throw EditError("the section name table shares bytes with what the edit rewrites (at offset " +
                            std::to_string(edit.offset) + ")");
}

// The editor reads its own result back, as ld.so's stand-in: an edit of a damaged
// file that the layout rules above did not foresee gives a file our reader refuses,
// and is refused here instead of being written. Up to kReadBackLimit (the copy is
// the cost); a writer proves larger edited members by reading its output back.
constexpr std::uint64_t kReadBackLimit = std::uint64_t(64) << 20;

void read_back(const ElfFile& elf, const EditPlan& plan) {
    if (plan.new_size > kReadBackLimit) return;
    const std::vector<std::uint8_t> edited = apply_edits(elf.bytes(), plan.edits);
    try {
        (void)ElfFile::parse(edited);
    } catch (const ElfError& error) {
        throw EditError(std::string("the edited file would not read back (") + error.what() + "): not written");
    }
}

// The dynamic stages: plan_edits less the strip and the proofs.
EditPlan plan_dynamic_edits(const ElfFile& elf, const EditRequest& request) {
    EditPlan plan;
    plan.new_size = elf.bytes().size();
    if (!elf.has_dynamic()) {
        if (request.touches_dynamic()) throw EditError(why_no_dynamic(elf));
        if (request.add_program_header)
            throw EditError("no PT_GNU_STACK, and no PT_NULL slot to add one in a file without a dynamic section");
        return plan_without_dynamic(elf, request);
    }
    const Layout layout = read_layout(elf);
    DynamicPlan dynamic = plan_dynamic(elf, layout, request);
    Overlay overlay(elf.bytes());
    const bool interpreter_changed = plan_interpreter(elf, &layout, request, dynamic, overlay);
    const bool adds_header = request.add_program_header.has_value();
    if (dynamic.changes.empty() && !adds_header) return plan;

    const PlacedStrings strings = place_strings(elf, layout, dynamic);
    if (strings.table.size() > std::numeric_limits<std::uint32_t>::max())
        throw EditError("the dynamic string table would exceed 4 GiB");
    const bool dynamic_changed = dynamic.changes.size() > (interpreter_changed ? 1u : 0u) || adds_header;
    if (!dynamic.segment_interpreter && !dynamic_changed) {
        // only the interpreter, written in its own bytes
    } else if (!adds_header && fits_in_place(layout, dynamic, strings)) {
        write_in_place(elf, layout, dynamic, strings, overlay);
    } else {
        const SegmentResult segment = write_with_segment(elf, layout, dynamic, strings, overlay);
        plan.new_size = segment.new_size;
        plan.grew = segment.grew;
    }
    write_symbol_renames(elf, dynamic, overlay);
    plan.edits = overlay.edits(plan.new_size);
    plan.changes = std::move(dynamic.changes);
    refuse_edits_of_section_names(elf, layout, plan.edits);
    return plan;
}

}  // namespace

EditPlan plan_edits(const ElfFile& elf, const EditRequest& request) {
    const timings::Scope timer(timings::Phase::edit);
    check_request(request);
    EditPlan plan = plan_dynamic_edits(elf, request);
    if (request.strip_symbols) strip_symbols(elf, plan);  // moves the name table on purpose
    if ((elf.has_dynamic() || request.strip_symbols) && !plan.edits.empty()) read_back(elf, plan);
    return plan;
}

}  // namespace wheelfix::elf
