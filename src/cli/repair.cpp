// `wheelfix repair WHEEL... --torch PATH -o DIR [--target PROFILE] [...]`: the
// pipeline step (repair/repair.hpp) over one or more wheels, -j of them at a time,
// with a one-screen summary per wheel: what was wrong, what was done, what is left.
// Exit status: 0 when every wheel came out clean, 1 when a wheel was written (or,
// with --strict / --dry-run, would be) with findings left, 2 when a wheel could
// not be repaired at all (usage or input error: its line says why).
#include "commands.hpp"
#include "options.hpp"
#include "render.hpp"

#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/repair/repair.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/thread_budget.hpp"
#include "wheelfix/zip/archive.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <numeric>
#include <thread>
#include <variant>

namespace wheelfix::cli {

namespace {

struct RepairArguments {
    std::vector<std::string> wheels;
    std::string torch;
    std::string output;
    std::optional<std::string> target;
    std::string pin = "minor";
    std::string local_format = "dotted";
    std::vector<std::string> maps;
    std::vector<std::string> exclude;
    bool strict = false;
    bool dry_run = false;
    bool overwrite = false;
    bool no_load_test = false;
    unsigned jobs = 0;  // threads in all; 0: the CPUs this process may use
};

// The load test's loader: python3 with ctypes, the way `import` loads an
// extension (in a process that provides libpython's symbols), RTLD_NOW so every
// symbol is bound at once. One line per path: "ok PATH" or "fail PATH: why".
constexpr const char* kLoaderScript = R"(import ctypes, os, sys
for path in sys.argv[1:]:
    try:
        ctypes.CDLL(path, mode=os.RTLD_NOW)
        print("ok " + path, flush=True)
    except OSError as error:
        reason = str(error)
        if reason.startswith(path + ": "):
            reason = reason[len(path) + 2:]
        print("fail " + path + ": " + reason, flush=True)
)";

// python3 from PATH, or "" when there is none.
std::string find_python() {
    const char* path = std::getenv("PATH");
    std::string_view rest = path ? path : "";
    while (!rest.empty()) {
        auto colon = rest.find(':');
        std::filesystem::path candidate = std::filesystem::path(rest.substr(0, colon)) / "python3";
        if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
        rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
    return {};
}

using Outcome = std::variant<repair::RepairReport, InputError>;

repair::RepairOptions repair_options(const RepairArguments& args) {
    repair::RepairOptions options;
    if (args.target) options.profile = policy::load_profile(*args.target);
    options.pin = *wheel::parse_torch_pin(args.pin);
    options.local_format = *wheel::parse_local_format(args.local_format);
    for (const auto& text : args.maps) options.maps.push_back(repair::parse_symbol_map(text));
    options.exclude = args.exclude;
    options.strict = args.strict;
    options.dry_run = args.dry_run;
    options.overwrite = args.overwrite;
    if (!args.no_load_test)
        if (auto python = find_python(); !python.empty()) options.loader = {python, "-c", kLoaderScript};
    if (std::filesystem::is_directory(args.torch)) options.torch_dir = args.torch;
    return options;
}

// The order the workers take the wheels in: most inflated bytes first (inflating
// and hashing is where a repair's time goes), so the last wheel to start is a
// small one and -j workers finish together. An archive that does not open counts
// as empty: its repair reports the error.
std::vector<std::size_t> largest_first(const std::vector<std::string>& wheels) {
    std::vector<std::uint64_t> inflated(wheels.size(), 0);
    for (std::size_t i = 0; i < wheels.size(); ++i) {
        try {
            const auto archive = zip::Archive::open(wheels[i]);
            for (const auto& member : archive.members()) inflated[i] += member.size;
        } catch (const std::exception&) {
        }
    }
    std::vector<std::size_t> order(wheels.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return inflated[a] > inflated[b]; });
    return order;
}

// Each wheel on its own, largest first, results in the order given. The thread
// budget is `jobs` (util/thread_budget.hpp): as many workers as wheels allow take
// a wheel each, and shares no worker needs (fewer wheels than jobs, or workers that
// found no wheel left) go to the helpers of the wheels still running.
std::vector<Outcome> repair_all(const RepairArguments& args, const abi::SymbolIndex& index,
                                const repair::RepairOptions& options) {
    const unsigned jobs = args.jobs == 0 ? usable_cpus() : args.jobs;
    set_thread_budget(jobs);
    std::vector<std::optional<Outcome>> outcomes(args.wheels.size());
    const auto order = jobs > 1 ? largest_first(args.wheels) : std::vector<std::size_t>{};
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t taken; (taken = next.fetch_add(1)) < args.wheels.size();) {
            const std::size_t i = order.empty() ? taken : order[taken];
            try {
                outcomes[i] = repair::repair_wheel(args.wheels[i], index, options, args.output);
            } catch (const InputError& error) {
                outcomes[i] = error;
            } catch (const std::filesystem::filesystem_error& error) {
                outcomes[i] = InputError(args.wheels[i], error.what());
            }
        }
    };
    {
        ThreadLoan waiting;  // this thread only waits for the workers
        std::vector<std::jthread> workers;
        const auto count = std::min<std::size_t>(jobs, args.wheels.size());
        // A worker's share goes back when its thread ends, with the lambda holding it.
        for (std::size_t i = 0; i < count; ++i) workers.emplace_back([&work, claim = claim_thread()] { work(); });
    }
    std::vector<Outcome> done;
    for (auto& outcome : outcomes) done.push_back(std::move(*outcome));
    return done;
}

std::string counted(std::size_t count, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", count, count == 1 ? one : many);
}

std::vector<std::string> finding_lines(const std::vector<policy::Finding>& findings) {
    std::vector<std::string> lines;
    for (const auto& finding : findings) lines.push_back(finding.message);
    return lines;
}

std::vector<std::string> wrong_lines(const repair::RepairReport& report) {
    std::vector<std::string> lines;
    if (report.unresolved_torch_symbols > 0)
        lines.push_back(fmt::format("torch {} does not export {} the extensions need", report.torch_version,
                                    counted(report.unresolved_torch_symbols, "torch function", "torch functions")));
    if (!report.absolute_rpath_entries.empty())
        lines.push_back(counted(report.absolute_rpath_entries.size(), "search path entry", "search path entries") +
                        " outside the wheel (build trees, absolute paths): dropped");
    if (report.retag.wheel_tags_rewritten) lines.push_back("WHEEL's Tag lines disagree with the file name: rewritten");
    for (auto& line : finding_lines(report.findings_before)) lines.push_back(std::move(line));
    return lines;
}

std::vector<std::string> done_lines(const repair::RepairReport& report, bool verbose) {
    std::vector<std::string> lines;
    for (const auto& change : report.relinked) {
        lines.push_back("relinked " + change.member);
        if (verbose)
            for (const auto& line : change.changes) lines.push_back("  " + line);
    }
    if (report.shim.shim) {
        auto stubs = report.stubbed.size();
        lines.push_back(fmt::format("added {} ({}, {})", report.shim.shim_member,
                                    counted(report.shim.symbols.size() - stubs, "forwarder", "forwarders"),
                                    counted(stubs, "stub", "stubs")));
    }
    const auto& retag = report.retag;
    if (retag.version.before == retag.version.after)
        lines.push_back("version " + retag.version.before + " kept" +
                        (report.uses_torch ? "" : ": no extension links or imports torch"));
    else
        lines.push_back("version " + retag.version.before + " -> " + retag.version.after);
    if (retag.pin_specifier) lines.push_back("Requires-Dist: torch" + *retag.pin_specifier);
    if (report.platform_after != report.platform_before)
        lines.push_back("platform " + report.platform_before + " -> " + report.platform_after);
    return lines;
}

std::vector<std::string> load_lines(const repair::RepairReport& report) {
    std::vector<std::string> lines;
    for (const auto& load : report.loads) {
        if (load.status == repair::LoadOutcome::Status::loaded) lines.push_back("loads " + load.member + " (RTLD_NOW)");
        else if (load.status == repair::LoadOutcome::Status::not_tested) lines.push_back("not tested " + load.member + ": " + load.reason);
    }
    if (report.written && report.loads.empty() && !report.load_test_skipped.empty())
        lines.push_back("load test skipped: " + report.load_test_skipped);
    return lines;
}

std::vector<std::string> left_lines(const repair::RepairReport& report) {
    auto lines = finding_lines(report.remaining);
    for (const auto& load : report.loads)
        if (load.status == repair::LoadOutcome::Status::failed) lines.push_back("does not load: " + load.member + ": " + load.reason);
    for (const auto& symbol : report.stubbed) lines.push_back("stub (aborts when called): " + symbol);
    for (const auto& skipped : report.shim.not_shimmed) lines.push_back("not shimmed: " + skipped.demangled + ": " + skipped.reason);
    return lines;
}

void print_section(std::string_view heading, const std::vector<std::string>& lines) {
    if (lines.empty()) return;
    fmt::print("  {:<6}{}\n", heading, lines.front());
    for (std::size_t i = 1; i < lines.size(); ++i) fmt::print("  {:<6}{}\n", "", lines[i]);
}

std::string verdict(const repair::RepairReport& report, const repair::RepairOptions& options) {
    auto name = report.output.string();
    if (report.written) return (report.clean() ? "wrote " : "wrote (findings left) ") + name;
    if (options.dry_run) return "would write " + name + " (dry run)";
    if (report.withdrawn)
        return "removed again (--strict, findings left once written): " + name;
    return "not written (--strict, findings left): " + name;
}

void render_text(const repair::RepairReport& report, const repair::RepairOptions& options, const GlobalOptions& global) {
    std::string target = options.profile ? ", target " + options.profile->name : "";
    fmt::print("{}  (torch {}{})\n", report.input.filename().string(), report.torch_version, target);
    if (!global.quiet) {
        auto wrong = wrong_lines(report);
        print_section("wrong", wrong.empty() ? std::vector<std::string>{"nothing found"} : wrong);
        print_section("done", done_lines(report, global.verbose));
        print_section("proof", load_lines(report));
    }
    print_section("left", left_lines(report));
    fmt::print("  {}\n", verdict(report, options));
}

void write_findings(JsonWriter& json, std::string_view key, const std::vector<policy::Finding>& findings) {
    json.key(key).begin_array();
    for (const auto& finding : findings)
        json.begin_object().field("kind", policy::kind_name(finding.kind)).field("member", finding.member)
            .field("message", finding.message).field("repair_fixes", finding.repair_fixes).end_object();
    json.end_array();
}

void write_json(JsonWriter& json, const repair::RepairReport& report) {
    json.begin_object().field("input", report.input.string()).field("output", report.output.string());
    json.field("written", report.written).field("torch_version", report.torch_version)
        .field("uses_torch", report.uses_torch).field("clean", report.clean());
    json.key("wrong").begin_object();
    write_findings(json, "findings", report.findings_before);
    json.field("unresolved_torch_symbols", static_cast<std::uint64_t>(report.unresolved_torch_symbols));
    json.string_array("outside_search_path_entries", report.absolute_rpath_entries);
    json.field("platform", report.platform_before).field("platform_lied", report.platform_lied);
    json.field("wheel_tags_disagreed", report.retag.wheel_tags_rewritten).end_object();
    json.key("done").begin_object().key("relinked").begin_array();
    for (const auto& change : report.relinked)
        json.begin_object().field("member", change.member).string_array("changes", change.changes)
            .field("recompressed_bytes", change.recompressed_bytes).end_object();
    json.end_array().key("shim");
    if (report.shim.shim)
        json.begin_object().field("member", report.shim.shim_member).field("soname", report.shim.shim->soname)
            .field("symbols", static_cast<std::uint64_t>(report.shim.symbols.size()))
            .field("stubs", static_cast<std::uint64_t>(report.stubbed.size())).end_object();
    else
        json.null();
    const auto& retag = report.retag;
    json.key("file_name").begin_object().field("before", retag.file_name.before).field("after", retag.file_name.after).end_object();
    json.key("version").begin_object().field("before", retag.version.before).field("after", retag.version.after).end_object();
    json.field("torch_pin", retag.pin_specifier).field("platform", report.platform_after).end_object();
    json.key("left").begin_object();
    write_findings(json, "findings", report.remaining);
    json.string_array("stubs", report.stubbed).key("not_shimmed").begin_array();
    for (const auto& skipped : report.shim.not_shimmed)
        json.begin_object().field("name", skipped.name).field("demangled", skipped.demangled)
            .field("reason", skipped.reason).end_object();
    json.end_array().end_object().key("load_test").begin_object().field("skipped", report.load_test_skipped);
    json.key("results").begin_array();
    for (const auto& load : report.loads) {
        const char* status = load.status == repair::LoadOutcome::Status::loaded   ? "loaded"
                             : load.status == repair::LoadOutcome::Status::failed ? "failed"
                                                                                  : "not_tested";
        json.begin_object().field("member", load.member).field("status", status).field("reason", load.reason).end_object();
    }
    json.end_array().end_object().end_object();
}

void render_json(const std::vector<Outcome>& outcomes, const repair::RepairOptions& options) {
    JsonWriter json;
    json.begin_object().field("schema", "wheelfix.repair/1").field("dry_run", options.dry_run);
    json.field("target", options.profile ? std::optional<std::string>(options.profile->name) : std::nullopt);
    json.key("wheels").begin_array();
    for (const auto& outcome : outcomes)
        if (const auto* report = std::get_if<repair::RepairReport>(&outcome)) write_json(json, *report);
    json.end_array().key("errors").begin_array();
    for (const auto& outcome : outcomes)
        if (const auto* error = std::get_if<InputError>(&outcome))
            json.begin_object().field("file", error->file()).field("problem", error->problem()).end_object();
    json.end_array().end_object();
    fmt::print("{}", json.str());
}

int exit_status(const std::vector<Outcome>& outcomes) {
    int status = 0;
    for (const auto& outcome : outcomes) {
        if (std::holds_alternative<InputError>(outcome)) return 2;
        if (!std::get<repair::RepairReport>(outcome).clean()) status = 1;
    }
    return status;
}

int run_repair(const RepairArguments& args, const GlobalOptions& global) {
    require_output_directory(args.output);
    auto options = repair_options(args);
    auto index = abi::load_index(args.torch);
    auto outcomes = repair_all(args, index, options);
    if (global.json) {
        render_json(outcomes, options);
    } else {
        for (const auto& outcome : outcomes)
            if (const auto* report = std::get_if<repair::RepairReport>(&outcome)) render_text(*report, options, global);
    }
    for (const auto& outcome : outcomes)
        if (const auto* error = std::get_if<InputError>(&outcome)) fmt::print(stderr, "wheelfix: {}\n", error->what());
    return exit_status(outcomes);
}

}  // namespace

CommandRunner register_repair(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand(
        "repair", "The pipeline step: check against a torch, relink (drop build-tree paths, add the target's), shim "
                  "what does not resolve, retag to the torch, set the honest platform tag; write once and verify");
    auto args = std::make_shared<RepairArguments>();
    command->add_option("wheels", args->wheels, "Wheels (*.whl)")->required();
    add_torch_option(*command, args->torch, "Target torch: package directory, torch wheel, or index file")->required();
    add_wheel_dir_option(*command, args->output, "Output directory (wheels get their new file names)");
    add_target_option(*command, args->target,
                      "Target profile: cuda13-blackwell, cuda13-blackwell-all, cuda12-hopper, or a profile file");
    command->add_option("--pin", args->pin,
                        "Requires-Dist torch pin: minor (>=2.10,<2.11), exact (==the torch version as given), "
                        "none (left as it is)")
        ->check(CLI::IsMember({"minor", "exact", "none"}))
        ->capture_default_str();
    command->add_option("--local-format", args->local_format,
                        "Torch segment spelling: dotted (torch2.10), compact (torch210), full (torch2.10.0)")
        ->check(CLI::IsMember({"dotted", "compact", "full"}))
        ->capture_default_str();
    command->add_option("--map", args->maps, "Shim: forward OLD to NEW (mangled names), OLD=NEW (repeatable)");
    add_exclude_option(*command, args->exclude);
    command->add_flag("--strict", args->strict, "Write nothing when findings would be left");
    command->add_flag("--dry-run", args->dry_run, "Print the plan, write nothing");
    command->add_option("-j,--jobs", args->jobs,
                        "Threads in all (default 0: one per CPU): this many wheels at a time; spare threads "
                        "help the wheels still running")
        ->check(CLI::Range(0u, 256u))
        ->capture_default_str();
    command->add_flag("--overwrite", args->overwrite, "Replace output files that exist (refused otherwise)");
    command->add_flag("--no-load-test", args->no_load_test,
                      "Do not load the edited extensions with the dynamic loader (loading runs their initialisers)");
    return [args, &global] { return run_repair(*args, global); };
}

}  // namespace wheelfix::cli
