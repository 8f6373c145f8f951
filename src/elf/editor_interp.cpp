// Editor stage 2b: the program interpreter (PT_INTERP), patchelf's --set-interpreter.
//
// Contract: current_interpreter reads PT_INTERP's path (up to its first NUL; none
// without PT_INTERP). plan_interpreter, for a request naming an interpreter:
// - the same path: nothing;
// - no PT_INTERP: an EditError (a static executable has no interpreter to change,
//   as with patchelf);
// - a path that fits PT_INTERP's bytes (with its NUL), while the appended segment
//   does not already carry the interpreter and no other section shares those
//   bytes (a linker script may put a note under PT_INTERP): written there, the rest of the bytes
//   zeroed; p_filesz and the .interp header keep their sizes (the kernel and ld.so
//   read up to the NUL), so no header changes;
// - otherwise: plan.segment_interpreter, placed by the segment writer, which moves
//   PT_INTERP and the .interp section header to it. A file without a dynamic
//   section (layout == nullptr) has no segment to grow: an EditError.
// Without a request, an interpreter that an earlier edit put into the appended
// segment is carried again (the segment is rebuilt on every edit).
#include "editor_internal.hpp"

#include <elf.h>

#include <algorithm>

namespace wheelfix::elf::editor {

namespace {

const ProgramHeader* interp_header(const ElfFile& elf) {
    for (const ProgramHeader& ph : elf.program_headers())
        if (ph.type == PT_INTERP) return &ph;
    return nullptr;
}

// PT_INTERP's bytes are the interpreter's alone: no section other than the one
// starting there (.interp) shares them. A linker script can put other sections
// (a build-id note) under PT_INTERP; rewriting those bytes would damage them.
bool interp_bytes_are_own(const ElfFile& elf, const ProgramHeader& ph) {
    for (const SectionHeader& section : elf.sections()) {
        if (section.type == SHT_NOBITS || section.size == 0 || section.offset == ph.offset) continue;
        if (section.offset < ph.offset + ph.filesz && ph.offset < section.offset + section.size) return false;
    }
    return true;
}

}  // namespace

std::optional<std::string> current_interpreter(const ElfFile& elf) {
    const ProgramHeader* ph = interp_header(elf);
    if (!ph) return std::nullopt;
    const auto bytes = elf.bytes_at(ph->offset, ph->filesz);
    const auto end = std::find(bytes.begin(), bytes.end(), std::uint8_t{0});
    return std::string(bytes.begin(), end);
}

bool plan_interpreter(const ElfFile& elf, const Layout* layout, const EditRequest& request,
                      DynamicPlan& plan, Overlay& overlay) {
    const bool carried =
        layout && layout->interp_phdr && layout->in_appended(elf.program_headers()[*layout->interp_phdr].offset);
    const std::optional<std::string> current = current_interpreter(elf);
    if (!request.interpreter || request.interpreter == current) {
        if (carried) plan.segment_interpreter = current;
        return false;
    }
    const ProgramHeader* ph = interp_header(elf);
    if (!ph) throw EditError("no PT_INTERP: the file has no interpreter to replace (statically linked?)");
    const std::string& path = *request.interpreter;
    plan.changes.push_back("interpreter: " + current.value_or("") + " -> " + path);
    if (!carried && path.size() + 1 <= ph->filesz && elf.bytes_at(ph->offset, ph->filesz).size() == ph->filesz &&
        interp_bytes_are_own(elf, *ph)) {
        std::vector<std::uint8_t> bytes(ph->filesz, 0);
        std::copy(path.begin(), path.end(), bytes.begin());
        overlay.write(ph->offset, std::move(bytes));
        return true;
    }
    if (!layout)
        throw EditError("the new interpreter is longer than the old one and the file has no dynamic section "
                        "beside which to place it");
    plan.segment_interpreter = path;
    return true;
}

}  // namespace wheelfix::elf::editor
