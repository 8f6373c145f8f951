// Unit tests: the ELF editor (src/elf/editor*.cpp) on real files.
//
// Every edit is applied with apply_edits and the result parsed back with our
// reader; the checks are on what a loader and the other tools see: the new
// RUNPATH/RPATH/NEEDED/SONAME, everything else unchanged (symbols, versions, the
// other dynamic entries), and a layout ld.so and eu-elflint accept (PT_LOAD order
// and alignment, PT_DYNAMIC/PT_PHDR and the .dynstr/.dynamic section headers
// following their data). Fixtures: tests/data/elf (build.sh), tests/data/elf/edit
// (build_edit_fixtures.sh) and the stand-in torch libraries in sample_wheels/dist.
#include "wheelfix/elf/editor.hpp"
#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/util/byte_edit.hpp"

#include <doctest/doctest.h>

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace wheelfix::elf;

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes load(const std::string& relative) {
    const std::string path = std::string(WHEELFIX_TEST_DATA) + "/" + relative;
    std::ifstream in(path, std::ios::binary);
    REQUIRE_MESSAGE(in.good(),
                    "missing fixture " << path << " (run tests/data/elf/build_edit_fixtures.sh)");
    return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Bytes load_torch(const std::string& name) {
    return load("../../sample_wheels/dist/torch-2.9.0/torch/lib/" + name);
}

struct Edited {
    EditPlan plan;
    Bytes bytes;
};

// Plans and applies an edit, checking the edit list itself on the way.
Edited edit(const Bytes& original, const EditRequest& request) {
    const ElfFile elf = ElfFile::parse(original);
    Edited result{plan_edits(elf, request), {}};
    REQUIRE(wheelfix::edits_problem(result.plan.edits, original.size()) == "");
    result.bytes = wheelfix::apply_edits(original, result.plan.edits);
    CHECK(result.bytes.size() == result.plan.new_size);
    CHECK(wheelfix::edited_size(result.plan.edits, original.size()) == result.plan.new_size);
    return result;
}

EditRequest set_path(std::string value) {
    EditRequest request;
    request.set_search_path = std::move(value);
    return request;
}

std::string long_path(std::size_t length, char filler = 'x') {
    std::string path = "$ORIGIN/";
    while (path.size() < length) path += std::string(9, filler) + "/";
    return path.substr(0, length);
}

std::vector<std::string> strings(const std::vector<std::string_view>& views) {
    return {views.begin(), views.end()};
}

std::size_t count_type(const ElfFile& elf, std::uint32_t type) {
    return static_cast<std::size_t>(
        std::count_if(elf.program_headers().begin(), elf.program_headers().end(),
                      [type](const ProgramHeader& ph) { return ph.type == type; }));
}

const ProgramHeader& only(const ElfFile& elf, std::uint32_t type) {
    REQUIRE(count_type(elf, type) == 1);
    return *std::find_if(elf.program_headers().begin(), elf.program_headers().end(),
                         [type](const ProgramHeader& ph) { return ph.type == type; });
}

const ProgramHeader& last_load(const ElfFile& elf) {
    const ProgramHeader* last = nullptr;
    for (const ProgramHeader& ph : elf.program_headers())
        if (ph.type == PT_LOAD) last = &ph;
    REQUIRE(last != nullptr);
    return *last;
}

std::optional<std::uint64_t> dynamic_value(const ElfFile& elf, std::int64_t tag) {
    for (const DynamicEntry& entry : elf.dynamic())
        if (entry.tag == tag) return entry.value;
    return std::nullopt;
}

std::vector<DynamicEntry> without_tags(const ElfFile& elf, std::initializer_list<std::int64_t> tags) {
    std::vector<DynamicEntry> kept;
    for (const DynamicEntry& entry : elf.dynamic())
        if (std::find(tags.begin(), tags.end(), entry.tag) == tags.end()) kept.push_back(entry);
    return kept;
}

bool same_entries(const std::vector<DynamicEntry>& a, const std::vector<DynamicEntry>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const DynamicEntry& x, const DynamicEntry& y) {
                          return x.tag == y.tag && x.value == y.value;
                      });
}

// name@version (file) for every dynamic symbol, and every version name: what the
// edit must leave exactly as it was.
std::vector<std::string> symbol_view(const ElfFile& elf) {
    std::vector<std::string> view;
    for (const Symbol& symbol : elf.dynamic_symbols())
        view.push_back(std::string(symbol.name) + "@" + std::string(symbol.version) + "(" +
                       std::string(symbol.version_file) + ")" + std::to_string(symbol.value) +
                       (symbol.defined() ? "D" : "U"));
    for (const VersionDef& def : elf.version_defs())
        for (std::string_view name : def.names) view.push_back("def " + std::string(name));
    for (const VersionNeed& need : elf.version_needs())
        for (const VersionNeedAux& aux : need.versions) view.push_back("need " + std::string(aux.name));
    return view;
}

std::vector<std::string> verneed_files(const ElfFile& elf) {
    std::vector<std::string> files;
    for (const VersionNeed& need : elf.version_needs()) files.emplace_back(need.file);
    return files;
}

// What ld.so and eu-elflint require of the layout after any edit.
void check_layout(const ElfFile& elf) {
    std::uint64_t previous_end = 0;
    bool first = true;
    for (const ProgramHeader& ph : elf.program_headers()) {
        if (ph.type != PT_LOAD) continue;
        CHECK(ph.offset + ph.filesz <= elf.bytes().size());
        if (ph.align > 1) CHECK((ph.vaddr - ph.offset) % ph.align == 0);
        if (!first) CHECK(ph.vaddr >= previous_end);  // ascending, no overlap
        previous_end = ph.vaddr + ph.memsz;
        first = false;
    }
    const ProgramHeader& dynamic = only(elf, PT_DYNAMIC);
    CHECK(elf.vaddr_to_offset(dynamic.vaddr) == dynamic.offset);
    if (const SectionHeader* section = elf.section(".dynamic")) {
        CHECK(section->offset == dynamic.offset);
        CHECK(section->addr == dynamic.vaddr);
        CHECK(section->size == dynamic.filesz);
    }
    if (const SectionHeader* section = elf.section(".dynstr")) {
        CHECK(section->addr == dynamic_value(elf, DT_STRTAB));
        CHECK(section->size == dynamic_value(elf, DT_STRSZ));
        CHECK(elf.vaddr_to_offset(section->addr) == section->offset);
    }
    if (count_type(elf, PT_PHDR) == 1) {
        const ProgramHeader& phdr = only(elf, PT_PHDR);
        CHECK(elf.vaddr_to_offset(phdr.vaddr) == phdr.offset);
        CHECK(phdr.filesz ==
              elf.program_headers().size() * (elf.elf_class() == Class::elf64 ? 56u : 32u));
    }
}

// The appended segment: above everything in memory, at the old end of the file,
// congruent modulo 64 KiB, readable.
void check_appended_segment(const ElfFile& elf, const Bytes& original) {
    const ProgramHeader& segment = last_load(elf);
    CHECK(segment.offset >= original.size());
    CHECK(segment.offset + segment.filesz == elf.bytes().size());
    CHECK((segment.vaddr - segment.offset) % 0x10000 == 0);
    CHECK((segment.flags & PF_R) != 0);
    CHECK((segment.flags & PF_X) == 0);
}

// Edits outside the appended tail are small, in-place patches.
void check_edits_are_local(const EditPlan& plan, std::uint64_t original_size) {
    for (const wheelfix::ByteEdit& edit : plan.edits) {
        if (edit.offset + edit.length >= original_size) continue;
        CHECK(edit.length == edit.bytes.size());
        CHECK(edit.length <= 64);
    }
}

}  // namespace

TEST_CASE("editor: RUNPATH that fits is rewritten in place, nothing else moves") {
    const Bytes original = load("elf/libplain.so");
    const Edited result = edit(original, set_path("/a:/b"));
    const ElfFile before = ElfFile::parse(original);
    const ElfFile after = ElfFile::parse(result.bytes);
    CHECK(result.plan.changes == std::vector<std::string>{"RUNPATH: $ORIGIN -> /a:/b"});
    CHECK_FALSE(result.plan.grew);
    CHECK(result.bytes.size() == original.size());
    CHECK(after.runpath() == "/a:/b");
    CHECK_FALSE(after.rpath());
    CHECK(strings(after.needed()) == strings(before.needed()));
    CHECK(symbol_view(after) == symbol_view(before));
    CHECK(same_entries(without_tags(after, {DT_RUNPATH}), without_tags(before, {DT_RUNPATH})));
    CHECK(after.program_headers().size() == before.program_headers().size());
    std::uint64_t changed = 0;
    for (const wheelfix::ByteEdit& e : result.plan.edits) changed += e.length;
    CHECK(changed <= 8);  // "$ORIGIN" -> "/a:/b" and its NUL
    check_layout(after);
}

TEST_CASE("editor: a long RPATH grows into one appended segment and stays DT_RPATH") {
    const Bytes original = load("elf/libversioned.so");
    const std::string value = long_path(300);
    const Edited result = edit(original, set_path(value));
    const ElfFile before = ElfFile::parse(original);
    const ElfFile after = ElfFile::parse(result.bytes);
    CHECK(result.plan.grew);
    CHECK(after.rpath() == value);
    CHECK_FALSE(after.runpath());
    CHECK(after.soname() == "libversioned.so.1");
    CHECK(strings(after.needed()) == std::vector<std::string>{"libm.so.6", "libc.so.6"});
    CHECK(symbol_view(after) == symbol_view(before));
    CHECK(verneed_files(after) == verneed_files(before));
    CHECK(count_type(after, PT_LOAD) == count_type(before, PT_LOAD) + 1);
    CHECK(same_entries(without_tags(after, {DT_RPATH, DT_STRTAB, DT_STRSZ}),
                       without_tags(before, {DT_RPATH, DT_STRTAB, DT_STRSZ})));
    // Only .dynstr moved: R, not W; .dynamic stays where it was.
    CHECK(last_load(after).flags == PF_R);
    CHECK(only(after, PT_DYNAMIC).offset == only(before, PT_DYNAMIC).offset);
    CHECK(result.bytes.size() < original.size() + 1024);
    check_layout(after);
    check_appended_segment(after, original);
    check_edits_are_local(result.plan, original.size());
}

TEST_CASE(
    "editor: a file with neither RPATH nor RUNPATH gets DT_RUNPATH; a big .dynstr is copied whole") {
    const Bytes original = load("elf/edit/libbigdynstr.so");
    const ElfFile before = ElfFile::parse(original);
    REQUIRE(before.section(".dynstr")->size > 30000);
    const Edited result = edit(original, set_path("$ORIGIN/../lib"));
    const ElfFile after = ElfFile::parse(result.bytes);
    CHECK(result.plan.changes == std::vector<std::string>{"RUNPATH: (none) -> $ORIGIN/../lib"});
    CHECK(after.runpath() == "$ORIGIN/../lib");
    CHECK_FALSE(after.rpath());
    CHECK(after.dynamic_symbols().size() >= 600);
    CHECK(symbol_view(after) == symbol_view(before));
    CHECK(after.dynamic().back().tag == DT_RUNPATH);  // appended: no entry moved
    check_layout(after);
}

TEST_CASE("editor: force_kind converts the entry in place, keep keeps it") {
    const Bytes versioned = load("elf/libversioned.so");
    EditRequest to_runpath;
    to_runpath.force_kind = SearchPathKind::runpath;
    const Edited converted = edit(versioned, to_runpath);
    const ElfFile runpath = ElfFile::parse(converted.bytes);
    CHECK(converted.plan.changes ==
          std::vector<std::string>{"RPATH -> RUNPATH: $ORIGIN/../lib:/opt/wf"});
    CHECK(runpath.runpath() == "$ORIGIN/../lib:/opt/wf");
    CHECK_FALSE(runpath.rpath());
    CHECK(converted.bytes.size() == versioned.size());

    EditRequest back = set_path("/opt/other");
    back.force_kind = SearchPathKind::rpath;
    const Edited reverted = edit(converted.bytes, back);
    const ElfFile rpath = ElfFile::parse(reverted.bytes);
    CHECK(rpath.rpath() == "/opt/other");
    CHECK_FALSE(rpath.runpath());

    const Edited kept = edit(reverted.bytes, set_path("/opt/third"));
    CHECK(ElfFile::parse(kept.bytes).rpath() == "/opt/third");
}

// libversioned.so with a DT_RUNPATH sharing the DT_RPATH string, in its first spare
// DT_NULL slot: what old GNU ld wrote for --enable-new-dtags (ELF64 little endian).
Bytes with_rpath_and_runpath() {
    Bytes bytes = load("elf/libversioned.so");
    const ElfFile elf = ElfFile::parse(bytes);
    const std::uint64_t slot = only(elf, PT_DYNAMIC).offset + elf.dynamic().size() * 16;
    const std::uint64_t rpath = *dynamic_value(elf, DT_RPATH);
    for (int i = 0; i < 8; ++i) {
        bytes[slot + i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(DT_RUNPATH) >> (8 * i));
        bytes[slot + 8 + i] = static_cast<std::uint8_t>(rpath >> (8 * i));
    }
    return bytes;
}

TEST_CASE("editor: a file with both DT_RPATH and DT_RUNPATH keeps both, or converts to one") {
    const Bytes original = with_rpath_and_runpath();
    REQUIRE(ElfFile::parse(original).runpath() == ElfFile::parse(original).rpath());
    const Edited both = edit(original, set_path("/both"));
    const ElfFile after = ElfFile::parse(both.bytes);
    CHECK(after.rpath() == "/both");
    CHECK(after.runpath() == "/both");
    CHECK(both.plan.changes == std::vector<std::string>{"RPATH+RUNPATH: $ORIGIN/../lib:/opt/wf -> /both"});
    EditRequest runpath_only = set_path(long_path(300));
    runpath_only.force_kind = SearchPathKind::runpath;
    const Edited runpath_edit = edit(original, runpath_only);
    const ElfFile converted = ElfFile::parse(runpath_edit.bytes);
    CHECK_FALSE(converted.rpath());
    CHECK(converted.runpath() == long_path(300));
    check_layout(converted);
}

TEST_CASE("editor: an empty search path removes the entry; an unchanged request edits nothing") {
    const Bytes original = load("elf/libplain.so");
    const Edited removed = edit(original, set_path(""));
    const ElfFile after = ElfFile::parse(removed.bytes);
    CHECK_FALSE(after.runpath());
    CHECK_FALSE(after.rpath());
    CHECK(removed.plan.changes == std::vector<std::string>{"RUNPATH: $ORIGIN -> (removed)"});
    CHECK(after.dynamic().size() + 1 == ElfFile::parse(original).dynamic().size());

    CHECK(edit(original, set_path("$ORIGIN")).plan.edits.empty());
    CHECK(edit(original, EditRequest{}).plan.edits.empty());
    EditRequest absent;
    absent.replace_needed = {{"libnothere.so", "libother.so"}};
    absent.remove_needed = {"libnothere.so"};
    const Edited none = edit(original, absent);
    CHECK(none.plan.edits.empty());
    CHECK(none.plan.changes.empty());
    CHECK(none.plan.new_size == original.size());
}

TEST_CASE("editor: replace_needed keeps the order and moves the version needs along") {
    const Bytes original = load("elf/libversioned.so");
    EditRequest request;
    request.replace_needed = {{"libm.so.6", "libwfmath.so.6"}};
    const Edited result = edit(original, request);
    const ElfFile after = ElfFile::parse(result.bytes);
    CHECK(strings(after.needed()) == std::vector<std::string>{"libwfmath.so.6", "libc.so.6"});
    const std::vector<std::string> files = verneed_files(after);
    CHECK(std::find(files.begin(), files.end(), "libwfmath.so.6") != files.end());
    CHECK(std::find(files.begin(), files.end(), "libm.so.6") == files.end());
    for (const Symbol& symbol : after.dynamic_symbols())
        if (symbol.name == "sqrt") CHECK(symbol.version_file == "libwfmath.so.6");
    CHECK(result.plan.changes.front() == "NEEDED: libm.so.6 -> libwfmath.so.6");
    check_layout(after);
}

TEST_CASE("editor: add and remove NEEDED; removing a library versions are needed from is refused") {
    const Bytes plain = load("elf/libplain.so");
    EditRequest request;
    request.remove_needed = {"libz.so.1"};
    request.add_needed = {"libwfnew.so", "libc.so.6"};  // libc.so.6 is there already
    const Edited result = edit(plain, request);
    const ElfFile after = ElfFile::parse(result.bytes);
    CHECK(strings(after.needed()) == std::vector<std::string>{"libc.so.6", "libwfnew.so"});
    CHECK(result.plan.changes ==
          std::vector<std::string>{"NEEDED: - libz.so.1", "NEEDED: + libwfnew.so"});
    check_layout(after);

    EditRequest refused;
    refused.remove_needed = {"libc.so.6"};
    CHECK_THROWS_AS(plan_edits(ElfFile::parse(load("elf/libversioned.so")), refused), EditError);
}

TEST_CASE("editor: more NEEDED entries than spare slots move .dynamic into the segment, writable") {
    const Bytes original = load_torch("libc10.so");
    const ElfFile before = ElfFile::parse(original);
    EditRequest request;
    for (int i = 0; i < 10; ++i) request.add_needed.push_back("libwfextra" + std::to_string(i) + ".so");
    const Edited result = edit(original, request);
    const ElfFile after = ElfFile::parse(result.bytes);
    std::vector<std::string> expected = strings(before.needed());
    expected.insert(expected.end(), request.add_needed.begin(), request.add_needed.end());
    CHECK(strings(after.needed()) == expected);
    CHECK(after.runpath() == before.runpath());
    const ProgramHeader& segment = last_load(after);
    const ProgramHeader& dynamic = only(after, PT_DYNAMIC);
    CHECK(dynamic.offset >= segment.offset);
    CHECK(dynamic.offset + dynamic.filesz <= segment.offset + segment.filesz);
    CHECK(segment.flags == (PF_R | PF_W));
    CHECK(symbol_view(after) == symbol_view(before));
    check_layout(after);
    check_appended_segment(after, original);
}

TEST_CASE("editor: a SONAME shared with the verdef base name is repointed, not overwritten") {
    const Bytes original = load("elf/libversioned.so");
    const ElfFile before = ElfFile::parse(original);
    REQUIRE(before.version_defs().front().names.front() == "libversioned.so.1");
    EditRequest request;
    request.set_soname = "libv.so";
    const Edited result = edit(original, request);
    const ElfFile after = ElfFile::parse(result.bytes);
    CHECK(after.soname() == "libv.so");
    CHECK(after.version_defs().front().names.front() == "libversioned.so.1");
    CHECK(symbol_view(after) == symbol_view(before));
    CHECK(result.plan.changes == std::vector<std::string>{"SONAME: libversioned.so.1 -> libv.so"});
}

TEST_CASE("editor: strings the linker tail-merged with symbol names are never overwritten") {
    const Bytes original = load("elf/edit/libshared-tail.so");
    const ElfFile before = ElfFile::parse(original);
    REQUIRE(before.rpath() == "tail_of_symbol");
    const auto has_symbol = [](const ElfFile& elf, std::string_view name) {
        return std::any_of(elf.dynamic_symbols().begin(), elf.dynamic_symbols().end(),
                           [name](const Symbol& symbol) { return symbol.name == name; });
    };
    REQUIRE(has_symbol(before, "wf_data_tail_of_symbol"));
    REQUIRE(has_symbol(before, "wf_helper_libz.so.1"));
    // The RPATH really is the tail of the symbol name in the file.
    REQUIRE(before.rpath()->data() + before.rpath()->size() ==
            std::find_if(
                before.dynamic_symbols().begin(), before.dynamic_symbols().end(),
                [](const Symbol& s) {
                    return s.name == "wf_data_tail_of_symbol";
                })->name.data() +
                std::string_view("wf_data_tail_of_symbol").size());

    for (const std::string& value : {std::string("short"), long_path(200)}) {
        CAPTURE(value);
        const Edited result = edit(original, set_path(value));
        const ElfFile after = ElfFile::parse(result.bytes);
        CHECK(after.rpath() == value);
        CHECK(symbol_view(after) == symbol_view(before));
    }
    EditRequest same_length;
    same_length.replace_needed = {{"libz.so.1", "libq.so.1"}};
    const Edited replaced = edit(original, same_length);
    const ElfFile after = ElfFile::parse(replaced.bytes);
    CHECK(strings(after.needed()).front() == "libq.so.1");
    CHECK(has_symbol(after, "wf_helper_libz.so.1"));
    CHECK(symbol_view(after) == symbol_view(before));
}

TEST_CASE("editor: a released string is reused in place, and zeroed when unused") {
    const Bytes original = load("elf/libversioned.so");
    const Edited shorter = edit(original, set_path("/s"));
    CHECK_FALSE(shorter.plan.grew);
    CHECK(shorter.bytes.size() == original.size());
    const std::string text(shorter.bytes.begin(), shorter.bytes.end());
    CHECK(text.find("/opt/wf") == std::string::npos);  // the old value is gone

    // After growth the RPATH lives in our own segment: a shorter one is written
    // there, and the file does not grow again.
    const Edited grown = edit(original, set_path(long_path(300)));
    const Edited again = edit(grown.bytes, set_path("/t"));
    CHECK_FALSE(again.plan.grew);
    CHECK(again.bytes.size() <= grown.bytes.size());
    const ElfFile after = ElfFile::parse(again.bytes);
    CHECK(after.rpath() == "/t");
    CHECK(count_type(after, PT_LOAD) == 3);
    check_layout(after);
}

TEST_CASE("editor: 100 growing edits leave one appended segment and a bounded file") {
    // Program headers moved into the segment (the first three) or kept in place
    // through a PT_NULL slot (mips64el); ELF64 and ELF32; both byte orders.
    for (const char* fixture :
         {"elf/libversioned.so", "elf/edit/aarch64/libwfapp.so", "elf/edit/testsimple-s390x.so",
          "elf/testsimple-mips64el.so", "elf/edit/testsimple-i686.so"}) {
        CAPTURE(fixture);
        const Bytes original = load(fixture);
        const ElfFile first = ElfFile::parse(original);
        const std::size_t loads = count_type(first, PT_LOAD);
        const std::uint64_t strings_size = first.section(".dynstr")->size;
        Bytes current = original;
        std::size_t longest = 0;
        for (std::size_t i = 1; i <= 100; ++i) {
            const std::string value = long_path(100 + 4 * i, static_cast<char>('a' + i % 26));
            longest = value.size();
            Edited result = edit(current, set_path(value));
            const ElfFile after = ElfFile::parse(result.bytes);
            REQUIRE(count_type(after, PT_LOAD) == loads + 1);
            REQUIRE((after.rpath() ? *after.rpath() : *after.runpath()) == value);
            current = std::move(result.bytes);
        }
        const ElfFile last = ElfFile::parse(current);
        CHECK(symbol_view(last) == symbol_view(first));
        // Original + header + moved program headers + one copy of .dynstr + the value.
        const std::uint64_t bound = original.size() + 16 + 32 + first.program_headers().size() * 56 +
                                    56 + strings_size + longest + 1;
        CHECK(current.size() <= bound);
        check_layout(last);
        check_appended_segment(last, original);
    }
}

TEST_CASE("editor: 100 alternating SONAME and NEEDED edits do not stack segments") {
    Bytes current = load("elf/edit/libsysv.so");
    const std::size_t loads = count_type(ElfFile::parse(current), PT_LOAD);
    const std::size_t needed = ElfFile::parse(current).needed().size();
    for (int i = 0; i < 100; ++i) {
        EditRequest request;
        request.set_soname = i % 2 ? "libsysv.so" : "./libsysv-renamed-to-something-longer.so";
        if (i % 3 == 0) request.add_needed = {"libwf" + std::to_string(i) + ".so"};
        current = edit(current, request).bytes;
    }
    const ElfFile last = ElfFile::parse(current);
    CHECK(count_type(last, PT_LOAD) == loads + 1);
    CHECK(last.soname() == "libsysv.so");
    CHECK(last.needed().size() == needed + 34);
    check_layout(last);
}

TEST_CASE("editor: a DT_HASH-only library (no .gnu.hash) is edited like any other") {
    const Bytes original = load("elf/edit/libsysv.so");
    const ElfFile before = ElfFile::parse(original);
    REQUIRE(before.section(".gnu.hash") == nullptr);
    REQUIRE(dynamic_value(before, DT_HASH));
    EditRequest request = set_path(long_path(300));
    request.add_needed = {"libz.so.1"};
    const Edited result = edit(original, request);
    const ElfFile after = ElfFile::parse(result.bytes);
    CHECK(after.runpath() == long_path(300));
    CHECK(symbol_view(after) == symbol_view(before));
    CHECK(dynamic_value(after, DT_HASH) == dynamic_value(before, DT_HASH));
    check_layout(after);
}

TEST_CASE("editor: a file without a dynamic section is an EditError") {
    const Bytes object = load("elf/object.o");
    CHECK_THROWS_AS(plan_edits(ElfFile::parse(object), set_path("/x")), EditError);
}

TEST_CASE("editor: requests that cannot be written are refused") {
    const ElfFile elf = ElfFile::parse(load("elf/libplain.so"));
    CHECK_THROWS_AS(plan_edits(elf, set_path(std::string("a\0b", 3))), EditError);
    EditRequest empty_name;
    empty_name.add_needed = {""};
    CHECK_THROWS_AS(plan_edits(elf, empty_name), EditError);
}

TEST_CASE("editor: ELF32 and big-endian files, with and without PT_NULL") {
    const char* fixtures[] = {"elf/edit/testsimple-i686.so",
                              "elf/edit/testsimple-armv7l.so",
                              "elf/edit/testsimple-ppc64le.so",
                              "elf/edit/testsimple-s390x.so",
                              "elf/libwfuser32.so",
                              "elf/testsimple-mips64el.so"};
    for (const char* fixture : fixtures) {
        CAPTURE(fixture);
        const Bytes original = load(fixture);
        const ElfFile before = ElfFile::parse(original);
        EditRequest request = set_path(long_path(300));
        for (int i = 0; i < 8; ++i) request.add_needed.push_back("libwf" + std::to_string(i) + ".so");
        request.set_soname = "libwf-renamed.so";
        const Edited result = edit(original, request);
        const ElfFile after = ElfFile::parse(result.bytes);
        CHECK(after.elf_class() == before.elf_class());
        CHECK(after.endian() == before.endian());
        CHECK((after.runpath() ? *after.runpath() : *after.rpath()) == long_path(300));
        CHECK(after.soname() == "libwf-renamed.so");
        CHECK(after.needed().size() == before.needed().size() + 8);
        CHECK(after.needed().back() == "libwf7.so");
        CHECK(symbol_view(after) == symbol_view(before));
        check_layout(after);
        check_appended_segment(after, original);
        // A PT_NULL slot takes the new PT_LOAD: the table stays where it was.
        const bool had_spare = count_type(before, PT_NULL) > 0;
        CHECK(after.program_headers().size() == before.program_headers().size() + (had_spare ? 0 : 1));
        if (had_spare) CHECK(count_type(after, PT_NULL) == count_type(before, PT_NULL) - 1);
    }
}

TEST_CASE("editor: an executable keeps its program headers where the old AT_PHDR rule finds them") {
    // Linux before 5.18 and qemu-user put AT_PHDR at the first PT_LOAD's bias +
    // e_phoff: a moved table must lie there, inside a PT_LOAD's file image.
    for (const char* fixture : {"elf/copyreloc", "elf/edit/x86_64/app", "elf/edit/aarch64/app"}) {
        CAPTURE(fixture);
        const Bytes original = load(fixture);
        const Edited result = edit(original, set_path(long_path(300)));
        const ElfFile after = ElfFile::parse(result.bytes);
        const ProgramHeader* first = nullptr;
        for (const ProgramHeader& ph : after.program_headers())
            if (ph.type == PT_LOAD && (!first || ph.vaddr < first->vaddr)) first = &ph;
        REQUIRE(first != nullptr);
        std::uint64_t phoff = 0;  // e_phoff of these ELF64 little-endian fixtures
        for (int i = 7; i >= 0; --i) phoff = phoff << 8 | result.bytes[32 + i];
        const ProgramHeader& phdr = only(after, PT_PHDR);
        CHECK(phdr.offset == phoff);
        CHECK(phdr.vaddr == first->vaddr - first->offset + phoff);
        bool mapped = false;
        for (const ProgramHeader& ph : after.program_headers())
            mapped = mapped || (ph.type == PT_LOAD && ph.offset <= phoff && phoff + phdr.filesz <= ph.offset + ph.filesz &&
                                ph.vaddr - ph.offset == phdr.vaddr - phdr.offset);
        CHECK(mapped);
        check_layout(after);
    }
}

TEST_CASE("editor: a file without section headers is edited through its program headers") {
    Bytes original = load("elf/libversioned.so");
    original[40] = original[41] = original[42] = original[43] = 0;  // e_shoff (ELF64 LE)
    original[60] = original[61] = original[62] = original[63] = 0;  // e_shnum, e_shstrndx
    const ElfFile before = ElfFile::parse(original);
    REQUIRE(before.sections().empty());
    EditRequest request = set_path(long_path(300));
    request.add_needed = {"libwf1.so", "libwf2.so", "libwf3.so", "libwf4.so", "libwf5.so"};
    const Edited result = edit(original, request);
    const ElfFile after = ElfFile::parse(result.bytes);
    CHECK(after.rpath() == long_path(300));
    CHECK(after.needed().size() == 7);
    CHECK(symbol_view(after) == symbol_view(before));
    check_layout(after);
}

TEST_CASE("editor: the stand-in torch libraries") {
    for (const char* name : {"libc10.so", "libc10_cuda.so", "libtorch_cpu.so", "libtorch_cuda.so"}) {
        CAPTURE(name);
        const Bytes original = load_torch(name);
        const ElfFile before = ElfFile::parse(original);
        EditRequest request = set_path(long_path(300));
        request.set_soname = std::string(name) + ".2";
        const Edited result = edit(original, request);
        const ElfFile after = ElfFile::parse(result.bytes);
        CHECK(after.runpath() == long_path(300));
        CHECK(after.soname() == std::string(name) + ".2");
        CHECK(strings(after.needed()) == strings(before.needed()));
        CHECK(symbol_view(after) == symbol_view(before));
        check_layout(after);
    }
}

// An image in a heap block of exactly its size, so ASan flags any over-read.
class ExactCopy {
public:
    explicit ExactCopy(const Bytes& bytes) : size_(bytes.size()), data_(new std::uint8_t[bytes.size()]) {
        std::copy(bytes.begin(), bytes.end(), data_.get());
    }
    std::span<const std::uint8_t> span() const { return {data_.get(), size_}; }

private:
    std::size_t size_;
    std::unique_ptr<std::uint8_t[]> data_;
};

TEST_CASE("editor: mutated files give a valid edit list or a one-line error, never a crash") {
    std::mt19937 random(20251202);
    std::size_t planned = 0;
    for (const char* fixture :
         {"elf/libversioned.so", "elf/libwfuser32.so", "elf/edit/testsimple-s390x.so"}) {
        const Bytes original = load(fixture);
        const ElfFile clean = ElfFile::parse(original);
        const std::uint64_t metadata_end =
            clean.section(".dynamic")->offset + clean.section(".dynamic")->size;
        for (int round = 0; round < 400; ++round) {
            Bytes mutated = original;
            for (int flips = 1 + round % 4; flips > 0; --flips)
                mutated[random() % metadata_end] = static_cast<std::uint8_t>(random());
            const ExactCopy image(mutated);
            try {
                const ElfFile elf = ElfFile::parse(image.span());
                EditRequest request = set_path(round % 2 ? "/s" : long_path(300));
                if (round % 3 == 0)
                    request.add_needed = {"libwf1.so", "libwf2.so", "libwf3.so", "libwf4.so",
                                          "libwf5.so"};
                const EditPlan plan = plan_edits(elf, request);
                REQUIRE(wheelfix::edits_problem(plan.edits, mutated.size()) == "");
                CHECK(wheelfix::apply_edits(image.span(), plan.edits).size() == plan.new_size);
                ++planned;
            } catch (const ElfError& error) {
                CHECK(std::string(error.what()).find('\n') == std::string::npos);
            } catch (const EditError& error) {
                CHECK(std::string(error.what()).find('\n') == std::string::npos);
            }
        }
    }
    CHECK(planned > 100);  // most mutations still leave an editable file
}

TEST_CASE("editor: resulting_search_path") {
    EditRequest request;
    CHECK(resulting_search_path(std::string("/a:/b"), request) == "/a:/b");
    request.remove_search_path = {"/a"};
    request.add_search_path = {"$ORIGIN/x", "/b"};
    CHECK(resulting_search_path(std::string("/a:/b"), request) == "/b:$ORIGIN/x");
    request.drop_absolute = true;
    // drop_absolute filters what was there; added entries are appended as given.
    CHECK(resulting_search_path(std::string("/a:/b:${ORIGIN}/y::"), request) ==
          "${ORIGIN}/y:$ORIGIN/x:/b");
    EditRequest set;
    set.set_search_path = "";
    set.add_search_path = {"/z"};
    CHECK(resulting_search_path(std::string("/a"), set) == "/z");
    CHECK(resulting_search_path(std::nullopt, EditRequest{}) == "");
    CHECK(EditRequest{}.empty());
    CHECK_FALSE(set.empty());
}

// patchelf's rules (the `patchelf` front end): operations in patchelf's sequence,
// every new entry on top, so the table starts DEBUG, FLAGS_1, the added NEEDED
// (sorted), then the pre-existing entries; a lone RUNPATH kept as it is.
TEST_CASE("editor: patchelf_rules put new entries on top in patchelf's order") {
    const Bytes original = load("elf/libplain.so");
    EditRequest request;
    request.patchelf_rules = true;
    request.add_needed = {"libzz.so", "libaa.so"};
    request.set_soname = "libplain-new.so";
    request.set_search_path = "$ORIGIN/../lib";
    request.add_flags_1 = DF_1_NODEFLIB;
    request.add_debug = true;
    const Edited edited = edit(original, request);
    const ElfFile result = ElfFile::parse(edited.bytes);
    const auto& dynamic = result.dynamic();
    REQUIRE(dynamic.size() >= 6);
    CHECK(dynamic[0].tag == DT_DEBUG);
    CHECK(dynamic[1].tag == DT_FLAGS_1);
    CHECK(dynamic[1].value == DF_1_NODEFLIB);
    CHECK(strings(result.needed()) == std::vector<std::string>{"libaa.so", "libzz.so", "libz.so.1", "libc.so.6"});
    CHECK(dynamic[2].tag == DT_NEEDED);
    CHECK(dynamic[4].tag == DT_SONAME);  // no SONAME before: on top, under the later insertions
    CHECK(result.soname() == "libplain-new.so");
    CHECK(result.runpath() == "$ORIGIN/../lib");
    CHECK(!result.rpath());
}

TEST_CASE("editor: patchelf_rules search path kinds and the empty path") {
    const Bytes original = load("elf/libplain.so");  // RUNPATH $ORIGIN
    EditRequest force;
    force.patchelf_rules = true;
    force.force_kind = SearchPathKind::rpath;
    force.set_search_path = "$ORIGIN";  // same value: only the kind changes
    const Bytes forced_bytes = edit(original, force).bytes;  // kept: the ElfFile views it
    const ElfFile forced = ElfFile::parse(forced_bytes);
    CHECK(forced.rpath() == "$ORIGIN");
    CHECK(!forced.runpath());

    EditRequest back;
    back.patchelf_rules = true;
    back.set_search_path = "";  // an existing entry keeps an empty value
    const Bytes converted_bytes = edit(forced_bytes, back).bytes;
    const ElfFile converted = ElfFile::parse(converted_bytes);
    CHECK(converted.runpath() == "");
    CHECK(!converted.rpath());

    EditRequest removed;
    removed.remove_all_search_paths = true;
    const Bytes no_path = edit(original, removed).bytes;
    CHECK(!ElfFile::parse(no_path).runpath());
    EditRequest empty_on_none;
    empty_on_none.patchelf_rules = true;
    empty_on_none.set_search_path = "";
    CHECK(edit(no_path, empty_on_none).plan.edits.empty());  // patchelf adds no entry for ""
}

TEST_CASE("editor: header edits write OS ABI, PF_X of PT_GNU_STACK and versym entries in place") {
    const Bytes original = load("elf/libversioned.so");
    const ElfFile elf = ElfFile::parse(original);
    HeaderRequest request;
    request.os_abi = ELFOSABI_FREEBSD;
    request.executable_stack = true;
    request.clear_symbol_version = {"sqrt"};
    const HeaderPlan plan = plan_header_edits(elf, request);
    CHECK(plan.changes.size() == 3);
    const Bytes bytes = wheelfix::apply_edits(original, plan.edits);
    REQUIRE(bytes.size() == original.size());
    const ElfFile result = ElfFile::parse(bytes);
    CHECK(result.os_abi() == ELFOSABI_FREEBSD);
    const auto stack = std::find_if(result.program_headers().begin(), result.program_headers().end(),
                                    [](const ProgramHeader& ph) { return ph.type == PT_GNU_STACK; });
    REQUIRE(stack != result.program_headers().end());
    CHECK((stack->flags & PF_X) != 0);
    for (const Symbol& symbol : result.dynamic_symbols()) {
        if (symbol.name == "sqrt") CHECK(symbol.version_index == VER_NDX_GLOBAL);
        if (symbol.name == "memcpy") CHECK(symbol.version == "GLIBC_2.14");
    }
    CHECK(plan_header_edits(result, request).edits.empty());  // already so: nothing to write
}

TEST_CASE("editor: --set-execstack on a file without PT_GNU_STACK adds patchelf's header") {
    const Bytes original = load("elf/libversioned.so");  // ELF64 LE
    const ElfFile elf = ElfFile::parse(original);
    const auto& headers = elf.program_headers();
    const auto at = std::find_if(headers.begin(), headers.end(),
                                 [](const ProgramHeader& ph) { return ph.type == PT_GNU_STACK; });
    REQUIRE(at != headers.end());
    std::uint64_t phoff = 0;
    for (int i = 7; i >= 0; --i) phoff = phoff << 8 | original[32 + i];
    const std::size_t entry = phoff + static_cast<std::size_t>(at - headers.begin()) * 56;
    const auto stack_of = [](const ElfFile& file) -> std::optional<ProgramHeader> {
        for (const ProgramHeader& ph : file.program_headers())
            if (ph.type == PT_GNU_STACK) return ph;
        return std::nullopt;
    };
    HeaderRequest request;
    request.executable_stack = true;
    SUBCASE("a PT_NULL slot takes it, in place") {
        Bytes slot = original;
        std::fill(slot.begin() + entry, slot.begin() + entry + 56, 0);
        const HeaderPlan plan = plan_header_edits(ElfFile::parse(slot), request);
        CHECK(!plan.add_program_header);
        const Bytes bytes = wheelfix::apply_edits(slot, plan.edits);
        const auto stack = stack_of(ElfFile::parse(bytes));
        REQUIRE(stack);
        CHECK(stack->flags == (PF_R | PF_W | PF_X));
        CHECK(stack->align == 1);
        CHECK(bytes.size() == slot.size());
    }
    SUBCASE("no slot: the dynamic editor adds it, moving the table") {
        Bytes dropped = original;
        std::copy(original.begin() + entry + 56, original.begin() + phoff + headers.size() * 56, dropped.begin() + entry);
        dropped[56] = static_cast<std::uint8_t>(headers.size() - 1);  // e_phnum
        const ElfFile without = ElfFile::parse(dropped);
        REQUIRE(!stack_of(without));
        const HeaderPlan plan = plan_header_edits(without, request);
        REQUIRE(plan.add_program_header);
        CHECK(plan.edits.empty());
        EditRequest add;
        add.add_program_header = plan.add_program_header;
        const Edited result = edit(dropped, add);
        const ElfFile after = ElfFile::parse(result.bytes);
        const auto stack = stack_of(after);
        REQUIRE(stack);
        CHECK(stack->flags == (PF_R | PF_W | PF_X));
        CHECK(after.program_headers().size() == headers.size() + 1);  // the stack and the new PT_LOAD
        CHECK(symbol_view(after) == symbol_view(without));
        check_layout(after);
        request.executable_stack = false;
        CHECK(plan_header_edits(without, request).add_program_header->flags == (PF_R | PF_W));
    }
}

TEST_CASE("editor: many strings placed at once reuse existing ones as a scan would (tail index)") {
    const Bytes original = load("elf/libversioned.so");
    const ElfFile before = ElfFile::parse(original);
    REQUIRE(!before.needed().empty());
    EditRequest request;
    for (int i = 0; i < 24; ++i) request.add_needed.push_back("libmany-needed-" + std::to_string(i) + ".so");
    // past the 16th search: names already in the table (whole, and as a tail of one
    // just added) must be found, not appended again
    request.add_needed.push_back("GLIBC_2.14");   // a version name in .dynstr (memcpy@GLIBC_2.14)
    request.add_needed.push_back("needed-7.so");  // the tail of libmany-needed-7.so
    const Edited result = edit(original, request);
    const ElfFile after = ElfFile::parse(result.bytes);
    const auto names = after.needed();
    CHECK(names.size() == before.needed().size() + 26);
    CHECK(std::find(names.begin(), names.end(), "GLIBC_2.14") != names.end());
    CHECK(std::find(names.begin(), names.end(), "needed-7.so") != names.end());
    std::uint64_t appended = 0;
    for (int i = 0; i < 24; ++i) appended += ("libmany-needed-" + std::to_string(i) + ".so").size() + 1;
    std::uint64_t strsz = 0, old_strsz = 0;
    for (const DynamicEntry& entry : after.dynamic())
        if (entry.tag == DT_STRSZ) strsz = entry.value;
    for (const DynamicEntry& entry : before.dynamic())
        if (entry.tag == DT_STRSZ) old_strsz = entry.value;
    CHECK(strsz == old_strsz + appended);  // nothing appended for the two existing strings
    check_layout(after);
}

TEST_CASE("editor: --page-size aligns the appended segment") {
    const Bytes original = load("elf/libversioned.so");
    for (const std::uint64_t page : {std::uint64_t(0x10000), std::uint64_t(0x200000)}) {
        CAPTURE(page);
        EditRequest request = set_path(long_path(300));
        request.page_size = page;
        const Edited result = edit(original, request);  // the bytes outlive the view
        const ElfFile after = ElfFile::parse(result.bytes);
        const ProgramHeader& segment = last_load(after);
        CHECK(segment.align == page);
        CHECK((segment.offset - segment.vaddr) % page == 0);
        check_layout(after);
    }
    EditRequest odd = set_path(long_path(300));
    odd.page_size = 3000;
    CHECK_THROWS_AS(plan_edits(ElfFile::parse(original), odd), EditError);
}

TEST_CASE("editor: an interpreter request on a file without PT_INTERP is refused") {
    EditRequest request;
    request.interpreter = "/lib/ld.so";
    CHECK_THROWS_AS(plan_edits(ElfFile::parse(load("elf/libplain.so")), request), EditError);
}
