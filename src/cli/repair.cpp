// `wheelfix repair WHEEL... --torch PATH|auto -o DIR [--target PROFILE] [...]`: the
// pipeline step (repair/repair.hpp) over one or more wheels, -j of them at a time
// (repair/torch_auto.hpp repair_batch, whose contract says what --torch auto picks and
// writes), with a one-screen summary per wheel (repair/report_text.hpp): what was
// wrong, what was done, what is left; with --torch auto the matrix first.
// Exit status: 0 when every wheel came out clean, 1 when a wheel was written (or,
// with --strict / --dry-run, would be) with findings left, or no torch release loads
// (nothing written), 2 when a wheel could not be repaired at all (its line says why).
#include "commands.hpp"
#include "options.hpp"
#include "style.hpp"
#include "torch_input.hpp"

#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/analysis/report_text.hpp"
#include "wheelfix/analysis/torch_matrix_text.hpp"
#include "wheelfix/analysis/torch_releases.hpp"
#include "wheelfix/repair/repair.hpp"
#include "wheelfix/repair/report_json.hpp"
#include "wheelfix/repair/report_text.hpp"
#include "wheelfix/repair/schedule.hpp"
#include "wheelfix/repair/torch_auto.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/text.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <variant>

namespace wheelfix::cli {

namespace {

struct RepairArguments {
    repair::RepairOptions options;          // the flags that are options as given
    std::vector<std::string> wheels;
    std::string torch;
    std::vector<std::string> torch_from;  // with --torch auto: atlases, and real torches to shim and load-test against
    std::string output;
    std::optional<std::string> target;
    std::string pin = "minor";
    std::string local_format = "dotted";
    std::vector<std::string> maps;
    std::optional<std::string> ldpaths;     // else LD_LIBRARY_PATH
    bool no_load_test = false;
    std::optional<std::string> variant;     // --variant LABEL|auto
    std::string variant_schema = wheel::variant_schema_name(wheel::kDefaultVariantSchema);
    bool variant_requires = false;
    unsigned jobs = 0;  // threads in all; 0: the CPUs this process may use
};

using Outcome = repair::RepairOutcome;

// WHEELFIX_LOAD_TEST_TIMEOUT: the load test's time limit in seconds (1..3600).
std::chrono::milliseconds load_test_limit() {
    const char* text = std::getenv("WHEELFIX_LOAD_TEST_TIMEOUT");
    if (text == nullptr || *text == 0) return repair::kDefaultLoadTestLimit;
    char* end = nullptr;
    long seconds = std::strtol(text, &end, 10);
    if (*end != 0 || seconds < 1 || seconds > 3600)
        throw InputError("WHEELFIX_LOAD_TEST_TIMEOUT", "not a number of seconds from 1 to 3600: " + std::string(text));
    return std::chrono::seconds(seconds);
}

// --variant, --variant-schema, --variant-requires (repair/variant.hpp).
std::optional<repair::VariantRequest> variant_request(const RepairArguments& args) {
    if (!args.variant) {
        if (args.variant_requires) throw InputError("--variant-requires", "needs --variant LABEL|auto");
        return std::nullopt;
    }
    repair::VariantRequest request;
    request.label = *args.variant;
    request.schema = wheel::parse_variant_schema(args.variant_schema, "--variant-schema");
    request.requires_runtime = args.variant_requires;
    return request;
}

repair::PinRequest pin_request(const RepairArguments& args) {
    const auto pin = repair::parse_pin_request(args.pin, args.torch == kTorchAuto);
    if (pin.kind == repair::PinRequest::Kind::range && args.torch != kTorchAuto)
        throw InputError("--pin range", "needs --torch auto (the range the torch atlas proves)");
    return pin;
}

repair::RepairOptions repair_options(const RepairArguments& args, const repair::PinRequest& pin) {
    repair::RepairOptions options = args.options;
    if (args.target) options.profile = policy::load_profile(*args.target);
    options.pin = pin.torch_pin();
    options.local_format = *wheel::parse_local_format(args.local_format);
    for (const auto& text : args.maps) options.maps.push_back(repair::parse_symbol_map(text));
    options.no_torch = args.torch.empty();
    if (args.torch != kTorchAuto && !args.torch_from.empty()) throw InputError("--torch-from", "only goes with --torch auto");
    const char* library_path = std::getenv("LD_LIBRARY_PATH");
    std::string ldpaths = args.ldpaths.value_or(library_path ? library_path : "");
    for (auto& dir : split_nonempty(ldpaths, ':')) options.graft.ldpaths.push_back(std::move(dir));
    if (options.only_plat && !options.plat) throw InputError("--only-plat", "needs --plat TAG");
    options.variant = variant_request(args);
    if (options.add_runtime_requires && args.torch.empty())
        throw InputError("--add-runtime-requires", "needs --torch: the torch build decides which CUDA runtime it brings");
    if (!args.no_load_test) {
        options.loader = repair::python_loader();
        if (options.loader.empty()) options.no_loader = "no python3 on PATH to load the extensions with";
    }
    options.load_test_limit = load_test_limit();
    if (!args.torch.empty() && std::filesystem::is_directory(args.torch)) options.torch_dir = args.torch;
    return options;
}

void print_section(std::string_view heading, const std::vector<std::string>& lines) {
    if (lines.empty()) return;
    fmt::print("  {:<6}{}\n", heading, lines.front());
    for (std::size_t i = 1; i < lines.size(); ++i) fmt::print("  {:<6}{}\n", "", lines[i]);
}

void render_text(const repair::RepairReport& report, const repair::RepairOptions& options, const GlobalOptions& global) {
    std::string target = options.profile ? ", target " + options.profile->name : "";
    std::string torch = report.torch_skipped ? "no torch checked" : "torch " + report.torch_version;
    fmt::print("{}  ({}{})\n", report.input.filename().string(), torch, target);
    if (!global.quiet) {
        auto wrong = repair::wrong_lines(report);
        print_section("wrong", wrong.empty() ? std::vector<std::string>{"nothing found"} : wrong);
        print_section("done", repair::done_lines(report, global.verbose));
        print_section("proof", repair::load_lines(report));
    }
    print_section("left", repair::left_lines(report));
    if (!report.plan.empty()) fmt::print("{}", report.plan);
    fmt::print("  {}\n", repair::repair_verdict(report, options));
}

std::string auto_torch_text(const repair::TorchAutoPlan& run, const GlobalOptions& global) {
    std::string text = run.input + ":\n" + render_matrix_text(run.releases.matrix, palette(global)) +
                       torch_requirement_text(run.releases.requirement, run.releases.stable);
    if (run.unloadable()) return text;
    return text + fmt::format("torch {}, the newest release of the pin: shimmed against {}{}\n",
                              run.releases.requirement.highest, run.against,
                              run.installed ? " (installed: the load test runs against it)" : "");
}

void print_outcome(const Outcome& outcome, const repair::RepairOptions& options, const GlobalOptions& global) {
    if (const auto* report = std::get_if<repair::RepairReport>(&outcome)) render_text(*report, options, global);
    else if (const auto* skipped = std::get_if<repair::NotRepaired>(&outcome))
        fmt::print("{}  not written: {}\n", skipped->wheel, skipped->why);
}

int run_repair(const RepairArguments& args, const GlobalOptions& global) {
    require_output_directory(args.output);
    const repair::PinRequest pin = pin_request(args);
    auto options = repair_options(args, pin);
    const char* environment = std::getenv(kTorchEnvironment);
    const repair::RepairTorch torch{args.torch, args.torch_from,
                                    repair::real_torches(args.torch_from, environment ? environment : ""), pin};
    const auto load_index = [](const std::string& path) {
        abi::SymbolIndex index = abi::load_index(path);
        print_notes(index);
        return index;
    };
    const repair::RepairBatch batch = repair::repair_batch(args.wheels, torch, options, torch_loader(global.verbose),
                                                           load_index, args.output, args.jobs);
    const auto& outcomes = batch.outcomes;
    if (global.json) {
        std::function<void(JsonWriter&)> extra;
        if (batch.automatic) extra = [&](JsonWriter& json) { repair::write_torch_auto_json(json, batch.plans); };
        fmt::print("{}", repair::repair_json(outcomes, options.dry_run, options.profile ? &*options.profile : nullptr, extra));
    } else {
        for (std::size_t i = 0; i < outcomes.size(); ++i) {
            const auto& plan = batch.plans[i];
            if (plan && !global.quiet) fmt::print("{}", auto_torch_text(*plan, global));
            print_outcome(outcomes[i], plan ? plan->options : options, global);
        }
    }
    for (const auto& outcome : outcomes)
        if (const auto* error = std::get_if<InputError>(&outcome)) fmt::print(stderr, "wheelfix: {}\n", error->what());
    return repair::batch_status(outcomes);
}

}  // namespace

CommandRunner register_repair(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand(
        "repair", "The pipeline step: check against a torch, relink (drop build-tree paths, add the target's), shim "
                  "what does not resolve, retag to the torch, set the honest platform tag; write once and verify");
    auto args = std::make_shared<RepairArguments>();
    command->add_option("wheels", args->wheels, "Wheels (*.whl)")->required();
    add_torch_option(*command, args->torch,
                     "Target torch: package directory, torch wheel, or index file (without it no torch is checked: "
                     "version and pins stay as they are), or 'auto': the range of torch atlas releases the wheel "
                     "loads on, shimmed against its newest");
    command->add_option("--torch-from", args->torch_from,
                        "With --torch auto: a torch atlas (beside the bundled one), or an installed torch, torch "
                        "wheel or index: the one of the range's newest release is shimmed and load-tested against "
                        "(repeatable; $WHEELFIX_TORCH counts too)")
        ->take_all();
    add_wheel_dir_option(*command, args->output, "Output directory, default ./wheelhouse/ (wheels get new file names)");
    add_target_option(*command, args->target,
                      "Target profile: cuda13-blackwell, cuda13-blackwell-all, cuda12-hopper, or a profile file");
    command->add_option("--pin", args->pin,
                        "Requires-Dist torch pin, always within the author's: minor (>=2.10,<2.11), exact (==the "
                        "torch version as given), none (left as it is); with --torch auto the verdict's pin unless "
                        "none, range: every release whose symbols resolve (symbol-level only)")
        ->check(CLI::IsMember({"minor", "exact", "none", "range"}))
        ->capture_default_str();
    command->add_option("--local-format", args->local_format,
                        "Torch segment spelling: dotted (torch2.10), compact (torch210), full (torch2.10.0)")
        ->check(CLI::IsMember({"dotted", "compact", "full"}))
        ->capture_default_str();
    command->add_option("--map", args->maps, "Shim: forward OLD to NEW (mangled names), OLD=NEW (repeatable)");
    command->add_option("--skip-member", args->options.skip_member,
                        "Never edit members matching GLOB (repeatable; no '/' = base name); was --exclude before 0.3");
    command->add_option("--exclude", args->options.graft.exclude,
                        "Never graft a library whose SONAME matches GLOB (repeatable; auditwheel's --exclude)");
    command->add_option("--ldpaths", args->ldpaths,
                        "Directories (':'-separated) searched for libraries to graft, where LD_LIBRARY_PATH is in "
                        "ld.so's order (default: $LD_LIBRARY_PATH)");
    command->add_option("--plat", args->options.plat,
                        "Platform tag wanted (manylinux_2_28_x86_64 ...): refused when the result cannot meet it");
    command->add_flag("--only-plat", args->options.only_plat, "With --plat: that tag exactly, not an older one the result meets");
    command->add_flag("--no-update-tags", args->options.no_update_tags, "Keep the wheel's platform tags as they are");
    command->add_flag("--keep-version", args->options.keep_version,
                      "Keep the public version (no local +torch label: public indexes refuse local versions); "
                      "the torch pin is still written into METADATA");
    command->add_flag("--strip", args->options.strip,
                      "Drop the symbol table and debug sections (.symtab, .strtab, .debug*) of every ELF member "
                      "the wheel ships, grafted libraries included (auditwheel's --strip)");
    command->add_option("--variant", args->variant,
                        "Label the output as a PEP 825 wheel variant in the same pass: 'auto' (cu{CUDA major}sm{SMs}) "
                        "or a LABEL matching ^[0-9a-z_.]{1,16}$; variant.json from what the binaries hold");
    command->add_option("--variant-schema", args->variant_schema, "variant.json schema: 0.0.3 (default) or 0.1.1")
        ->check(CLI::IsMember({"0.0.3", "0.1.1"}));
    command->add_flag("--variant-requires", args->variant_requires,
                      "With --variant: Requires-Dist for the CUDA runtime package, with a variant marker");
    command->add_flag("--add-runtime-requires", args->options.add_runtime_requires,
                      "Add a Requires-Dist for each CUDA library the extensions NEED (libcudart, libnvrtc, libcublas "
                      "...) of another major than the --torch build brings: nvidia-cuda-runtime-cu12>=12,<13 beside "
                      "a CUDA 13 torch; a distribution METADATA already names is left as it is");
    command->add_flag("--strict", args->options.strict, "Write nothing when findings would be left");
    command->add_flag("--dry-run", args->options.dry_run, "Print the plan, write nothing");
    command->add_option("-j,--jobs", args->jobs,
                        "Threads in all (default 0: one per CPU): this many wheels at a time; spare threads "
                        "help the wheels still running")
        ->check(CLI::Range(0u, 256u))
        ->capture_default_str();
    command->add_flag("--overwrite", args->options.overwrite, "Replace output files that exist (refused otherwise)");
    command->add_flag("--no-load-test", args->no_load_test,
                      "Do not load the edited extensions with the dynamic loader (loading runs their initialisers)");
    return [args, &global] { return run_repair(*args, global); };
}

}  // namespace wheelfix::cli
