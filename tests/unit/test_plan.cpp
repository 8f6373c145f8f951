// execute_plan's MemberDecision::observe_edited (repair/plan.hpp): what repair's
// proof reads an edited member from instead of reading it back from the output.
//
// Proven against the written output itself: every byte the engine's reader kept of
// the new content is the member as written (inflated from the output by zlib's
// reader), and every range `again` reads (around, across and past the edits, the
// whole member) is that member's slice. The edits grow the dynamic string table (a long RUNPATH and an
// added NEEDED), so the editor's edits change the size, not only bytes in place.
#include "wheelfix/wheel/member_reader.hpp"
#include "wheelfix/repair/plan.hpp"
#include "wheelfix/util/timings.hpp"
#include "wheelfix/util/byte_ranges.hpp"
#include "wheelfix/wheel/wheel.hpp"
#include "wheelfix/zip/archive.hpp"

#include "zip_test_support.hpp"

#include <doctest/doctest.h>

#include <map>

using namespace wheelfix;
using namespace wheelfix::test;

namespace {

using Bytes = std::vector<std::uint8_t>;

const fs::path kSampleWheel =
    fs::path(WHEELFIX_TEST_DATA) / ".." / ".." / "sample_wheels" / "dist" / "sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_x86_64.whl";

struct Seen {
    std::vector<std::pair<ByteRanges::Range, Bytes>> kept;     // what the engine's reader kept
    std::uint64_t size = 0;                    // the edited image's size
    std::vector<std::pair<ByteRanges::Range, Bytes>> fetched;  // what `again` gave per range
    bool finished = false;
};

}  // namespace

TEST_CASE("execute_plan: observe_edited gets each edited member's new content as kept while written, and reads any range of it again") {
    REQUIRE(fs::exists(kSampleWheel));
    TempDir dir;
    auto wheel = wheel::Wheel::open(kSampleWheel);
    repair::WheelPlan plan;
    plan.output = dir / kSampleWheel.filename();
    std::map<std::string, Seen> seen;

    repair::PlanHooks hooks;
    struct Grown : repair::MemberView {
        std::optional<elf::EditRequest> request;
    };
    hooks.decision.view = [](const std::string&, const elf::ElfFile& elf) {
        auto view = std::make_shared<Grown>();
        if (!elf.has_dynamic()) return std::shared_ptr<const repair::MemberView>(view);
        elf::EditRequest edits;
        edits.add_search_path = {"$ORIGIN/" + std::string(300, 'x'), "$ORIGIN/../torch/lib"};
        edits.add_needed = {"libwheelfix_test_added.so.1"};
        view->request = edits;
        return std::shared_ptr<const repair::MemberView>(view);
    };
    hooks.decision.edits_for = [](const repair::MemberView& view, const repair::WheelFacts*) {
        return repair::MemberEdits{static_cast<const Grown&>(view).request};
    };
    hooks.decision.observe_edited = [&](const std::string& member, wheel::MemberImage& edited) {
        Seen& slot = seen[member];
        CHECK_FALSE(slot.finished);  // once per member
        slot = Seen{};
        slot.size = edited.size();
        CHECK(edited.way() == wheel::ReadWay::bounded);
        CHECK(edited.trusted());
        REQUIRE(edited.present() != nullptr);
        for (const auto& [begin, end] : edited.present()->ranges())
            slot.kept.push_back({{begin, end}, Bytes(edited.image().begin() + static_cast<std::ptrdiff_t>(begin),
                                                     edited.image().begin() + static_cast<std::ptrdiff_t>(end))});
        {
            const std::uint64_t n = slot.size;
            std::vector<ByteRanges::Range> asked = {{0, n}, {0, 64}, {n / 3, n / 3 + 1000}, {n - 100, n}, {n / 2, n / 2 + 1}};
            for (const auto& [begin, end] : asked) {
                ByteRanges ranges;
                ranges.add(begin, end);
                Bytes bytes;
                std::uint64_t next = begin;
                edited.fetch(ranges, [&](std::span<const std::uint8_t> chunk, std::uint64_t at) {
                    CHECK(at == next);  // in order, with the edited content's offsets
                    bytes.insert(bytes.end(), chunk.begin(), chunk.end());
                    next = at + chunk.size();
                });
                slot.fetched.push_back({{begin, end}, std::move(bytes)});
            }
            slot.finished = true;
        }
    };
    repair::ExecuteOptions options;
    std::map<std::string, Bytes> written;
    options.prove = [&](const fs::path& staged, const repair::PlanResult&) {
        auto archive = zip::Archive::open(staged);
        for (const auto& [member, slot] : seen) {
            const auto* entry = archive.find(member);
            REQUIRE(entry != nullptr);
            written[member] = archive.read(*entry);
        }
        return true;
    };
    auto result = repair::execute_plan(wheel, plan, hooks, options);
    REQUIRE(result.written);
    REQUIRE_FALSE(result.changed.empty());
    CHECK(seen.size() == result.changed.size());
    for (const auto& change : result.changed) {
        CAPTURE(change.member);
        REQUIRE(seen.contains(change.member));
        const Seen& slot = seen.at(change.member);
        const Bytes& member = written.at(change.member);
        CHECK(change.size_after > change.size_before);  // the edits grew the member
        CHECK(slot.finished);
        CHECK(slot.size == member.size());
        REQUIRE_FALSE(slot.kept.empty());
        CHECK(slot.kept.front().first.first == 0);  // the ELF header at least
        for (const auto& [range, bytes] : slot.kept) {
            REQUIRE(range.second <= member.size());
            CHECK(bytes == Bytes(member.begin() + static_cast<std::ptrdiff_t>(range.first),
                                 member.begin() + static_cast<std::ptrdiff_t>(range.second)));
        }
        for (const auto& [range, bytes] : slot.fetched) {
            CAPTURE(range.first);
            CAPTURE(range.second);
            REQUIRE(range.second <= member.size());
            CHECK(bytes == Bytes(member.begin() + static_cast<std::ptrdiff_t>(range.first),
                                 member.begin() + static_cast<std::ptrdiff_t>(range.second)));
        }
    }
}

// ---- speculation (plan.hpp, step 2) -----------------------------------------------------

namespace {

// A wheel with one big deflated ELF member (the bounded path): the sample's first
// library with a dynamic section, followed by zeros up to past kBoundedFrom.
fs::path big_member_wheel(const fs::path& dir) {
    auto sample = zip::Archive::open(kSampleWheel);
    std::string library;
    for (const auto& member : sample.members()) {
        if (!member.name.ends_with(".so")) continue;
        auto bytes = sample.read(member);
        if (!elf::ElfFile::parse(bytes).has_dynamic()) continue;
        library.assign(bytes.begin(), bytes.end());
        break;
    }
    REQUIRE_FALSE(library.empty());
    library.resize(static_cast<std::size_t>(repair::kBoundedFrom + (1 << 20)), '\0');
    fs::create_directories(dir);
    WheelBuilder builder;
    builder.files.push_back({"demo_pkg/big.so", library});
    builder.edit_members = [](std::vector<ZipEntry>& members) {
        for (auto& member : members)
            if (member.name == "demo_pkg/big.so") member.method = ZIP_CM_DEFLATE;
    };
    return builder.write(dir);
}

elf::EditRequest added_entry(const std::string& entry) {
    elf::EditRequest request;
    request.add_search_path = {entry};
    return request;
}

struct Written {
    Bytes wheel;
    std::uint64_t inflated = 0;  // bytes the run inflated (timings)
};

// The wheel-wide fact of this test's decision: the search path entry every ELF
// member with a dynamic section gets.
struct Entry : repair::WheelFacts {
    explicit Entry(std::string text) : entry(std::move(text)) {}
    std::string entry;
};

const std::string kFinalEntry = "$ORIGIN/" + std::string(300, 'r');

// A decision that reads the wheel: the entry is known for certain after the read
// (kFinalEntry); before it, `foreseen` (nullopt: not foreseen, the member waits).
// What was written and inflated.
Written run_with(const fs::path& input, const fs::path& output, const std::optional<std::string>& foreseen) {
    auto wheel = wheel::Wheel::open(input);
    repair::WheelPlan plan;
    plan.output = output;
    repair::PlanHooks hooks;
    hooks.decision.view = [](const std::string&, const elf::ElfFile& elf) {
        auto view = std::make_shared<repair::MemberView>();
        view->reads_wheel = elf.has_dynamic();
        return std::shared_ptr<const repair::MemberView>(view);
    };
    hooks.decision.edits_for = [](const repair::MemberView& view, const repair::WheelFacts* facts) {
        if (!view.reads_wheel) return repair::MemberEdits{};
        if (!facts) return repair::MemberEdits{std::nullopt, true};
        return repair::MemberEdits{added_entry(static_cast<const Entry*>(facts)->entry)};
    };
    if (foreseen)
        hooks.decision.foresee = [&]() -> std::shared_ptr<const repair::WheelFacts> { return std::make_shared<Entry>(*foreseen); };
    hooks.decision.decide = [](repair::WheelPlan&, const repair::PlanResult&) -> std::shared_ptr<const repair::WheelFacts> {
        return std::make_shared<Entry>(kFinalEntry);
    };
    const auto before = timings::totals()[static_cast<std::size_t>(timings::Phase::inflate)].bytes;
    auto result = repair::execute_plan(wheel, plan, hooks);
    REQUIRE(result.written);
    REQUIRE(result.changed.size() == 1);
    const auto after = timings::totals()[static_cast<std::size_t>(timings::Phase::inflate)].bytes;
    const auto bytes = read_bytes(output);
    return {Bytes(bytes.begin(), bytes.end()), after - before};
}

}  // namespace

TEST_CASE("execute_plan: a right foresight saves the second read; a wrong or absent one changes no byte") {
    TempDir dir;
    const fs::path input = big_member_wheel(dir / "in");
    timings::enable();
    const auto waited = run_with(input, dir / "waited" / input.filename(), std::nullopt);
    const auto right = run_with(input, dir / "right" / input.filename(), kFinalEntry);
    const auto wrong = run_with(input, dir / "wrong" / input.filename(), "$ORIGIN/elsewhere");
    timings::enable(false);
    CAPTURE(waited.inflated);
    CAPTURE(right.inflated);
    CAPTURE(wrong.inflated);
    CHECK(right.wheel == waited.wheel);
    CHECK(wrong.wheel == waited.wheel);
    // A member that waits for the final facts is inflated by the pass and once more
    // by the splice's hash (plus the bytes around the edits: here a deflate block of
    // zeros can span megabytes); with the right facts foreseen its speculation costs
    // the head instead of the second pass; with wrong ones, its early edit is
    // dropped and it streams again.
    const std::uint64_t member = repair::kBoundedFrom + (1 << 20);
    CHECK(waited.inflated >= 2 * member);
    CHECK(right.inflated + member <= waited.inflated + wheel::kFarViewHead + (1 << 20));
    CHECK(wrong.inflated >= waited.inflated);
}
