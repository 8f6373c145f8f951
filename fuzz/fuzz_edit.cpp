// Fuzz target: the edit path — read, plan the edits of a fixed relink request,
// apply them, read the result again.
//
// For each of three fixed requests (built by repair::request_for exactly as
// `wheelfix relink` builds them for a member two directories deep): parse the
// input (ElfError is a clean refusal), plan_edits (EditError is a clean refusal),
// then the edits must be valid for the input, their result must have the size the
// plan announced, and OUR READER MUST ACCEPT THE RESULT (an ElfError there is a
// bug: the editor wrote a file it cannot read back) with the requested values in
// place and the dynamic symbols unchanged (where their names come from the table
// DT_STRTAB names, as ld.so reads them). The requests: a long search path plus
// a NEEDED (growth: appended segment), a short SONAME with absolute entries
// dropped and DT_RPATH forced (in place), and five NEEDED with DT_RUNPATH forced
// (.dynamic moves). With WHEELFIX_FUZZ_SAVE=DIR a sample of inputs and results
// is saved (DIR/<hash>.in, DIR/<hash>.<request>.out) for the readelf check
// tests/e2e/test_fuzz_outputs.py runs outside the fuzzer.
#include "fuzz_support.hpp"

#include "wheelfix/elf/editor.hpp"
#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/repair/relink.hpp"
#include "wheelfix/util/byte_edit.hpp"
#include "wheelfix/util/error.hpp"

#include <algorithm>
#include <fstream>
#include <functional>

using namespace wheelfix;
using fuzz::expect_clean;
using fuzz::fuzz_bug;

namespace {

constexpr int kDepth = 2;

std::vector<repair::RelinkOptions> fixed_requests() {
    repair::RelinkOptions grow;
    grow.set_rpath = "{root}/torch/lib:{root}/nvidia/cu13/lib:{root}/sgl_kernel.libs:/opt/fuzz/a/rather/long/path";
    grow.add_needed = {"libwheelfix_shim_torch2.11.0_d3c8572c.so"};
    repair::RelinkOptions in_place;
    in_place.drop_absolute = true;
    in_place.set_soname = "libf.so";
    in_place.force_kind = elf::SearchPathKind::rpath;
    repair::RelinkOptions many_needed;
    many_needed.add_needed = {"libwf1.so", "libwf2.so", "libwf3.so", "libwf4.so", "libwf5.so"};
    many_needed.add_rpath = {"$ORIGIN"};
    many_needed.force_kind = elf::SearchPathKind::runpath;
    return {grow, in_place, many_needed};
}

std::optional<std::string> effective_search_path(const elf::ElfFile& elf) {
    auto value = elf.runpath() ? elf.runpath() : elf.rpath();
    return value ? std::optional<std::string>(*value) : std::nullopt;
}

std::vector<std::string> symbol_names(const elf::ElfFile& elf) {
    std::vector<std::string> names;
    for (const auto& symbol : elf.dynamic_symbols()) names.emplace_back(symbol.name);
    return names;
}

void save(const std::string& name, std::span<const std::uint8_t> bytes) {
    std::ofstream out(std::string(fuzz::save_directory()) + "/" + name, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// A sample of what the editor produced: one output hash in 8, at most 2000 files a run.
void maybe_save(std::span<const std::uint8_t> input, std::size_t request, std::span<const std::uint8_t> output) {
    static int saved = 0;
    if (!fuzz::save_directory() || saved >= 2000) return;
    auto hash = std::hash<std::string_view>{}({reinterpret_cast<const char*>(output.data()), output.size()});
    if (hash % 8 != 0) return;
    ++saved;
    auto stem = std::to_string(std::hash<std::string_view>{}({reinterpret_cast<const char*>(input.data()), input.size()}));
    save(stem + ".in", input);
    save(stem + "." + std::to_string(request) + ".out", output);
}

// Whether our reader reads symbol names from the table ld.so uses: the string
// section .dynsym links is where DT_STRTAB points. In a damaged file where they
// differ the editor makes the .dynstr header follow DT_STRTAB's table (so readelf
// and ld.so agree afterwards), and names read through the header change by design.
bool symbol_names_from_dt_strtab(const elf::ElfFile& elf) {
    std::optional<std::uint64_t> strtab;
    for (const auto& entry : elf.dynamic())
        if (entry.tag == 5 /* DT_STRTAB */) strtab = elf.vaddr_to_offset(entry.value);
    for (const auto& section : elf.sections())
        if (section.type == 11 /* SHT_DYNSYM */)
            return section.link < elf.sections().size() && strtab == elf.sections()[section.link].offset;
    return true;
}

void check_result(const elf::ElfFile& before, const elf::EditRequest& request, const elf::ElfFile& after) {
    const bool both_kinds = before.rpath() && before.runpath();
    if (!both_kinds) {
        auto expected = elf::resulting_search_path(effective_search_path(before), request);
        auto got = effective_search_path(after);
        if (expected.empty() ? got.has_value() : got != expected)
            fuzz_bug("search path after the edit is '" + got.value_or("(none)") + "', expected '" + expected + "'");
        if (!expected.empty() && request.force_kind == elf::SearchPathKind::rpath && after.runpath())
            fuzz_bug("DT_RUNPATH left although DT_RPATH was forced");
        if (!expected.empty() && request.force_kind == elf::SearchPathKind::runpath && !after.runpath())
            fuzz_bug("no DT_RUNPATH although it was forced");
    }
    auto needed = after.needed();
    for (const auto& library : request.add_needed)
        if (std::find(needed.begin(), needed.end(), library) == needed.end()) fuzz_bug("added NEEDED " + library + " missing");
    if (request.set_soname && after.soname() != *request.set_soname) fuzz_bug("SONAME not set");
    if (symbol_names_from_dt_strtab(before) && symbol_names(before) != symbol_names(after))
        fuzz_bug("the edit changed dynamic symbol names");
}

void edit_once(std::span<const std::uint8_t> input, const elf::ElfFile& elf, std::size_t index,
               const repair::RelinkOptions& options) {
    const auto request = repair::request_for(options, elf, kDepth);
    elf::EditPlan plan;
    try {
        plan = elf::plan_edits(elf, request);
    } catch (const elf::EditError& refused) {
        if (std::string(refused.what()).find('\n') != std::string::npos) fuzz_bug("multi-line EditError");
        return;
    }
    if (auto problem = edits_problem(plan.edits, input.size()); !problem.empty()) fuzz_bug("invalid edits: " + problem);
    const auto output = apply_edits(input, plan.edits);
    if (output.size() != plan.new_size) fuzz_bug("plan.new_size differs from the edited size");
    try {
        const auto after = elf::ElfFile::parse(output);
        check_result(elf, request, after);
    } catch (const elf::ElfError& error) {
        fuzz_bug(std::string("our reader refuses the edited file: ") + error.what());
    }
    maybe_save(input, index, output);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const auto requests = fixed_requests();
    // The editor reads the image in place: keep it in an exact-size heap buffer so
    // ASan sees any read past the end.
    std::vector<std::uint8_t> copy(data, data + size);
    const std::span<const std::uint8_t> input(copy);
    expect_clean<elf::ElfError, InputError>([&] {
        const auto elf = elf::ElfFile::parse(input);
        if (!elf.has_dynamic()) return;
        for (std::size_t i = 0; i < requests.size(); ++i) edit_once(input, elf, i, requests[i]);
    });
    return 0;
}
