// `wheelfix retag WHEEL --torch VERSION|auto -o DIR [--torch-from PATH]... [--cuda V]
// [--platform TAG] [--pin minor|exact|none|range|SPECIFIER] [--local-format dotted|compact|full]
// [--fix-version] [--verify] [--json]`: record the torch (and CUDA) a wheel needs in
// its local version, pin torch in METADATA, optionally set the platform tag.
// What is read and proven is repair/retag.hpp's (retag_digests), --torch auto
// repair/torch_auto.hpp's (pick_retag_torch), the options' judgement repair/retag.hpp's
// (RetagCommand, retag_options); this file binds the options and renders.
// Exit 0 when written, 1 when --torch auto found no torch the wheel loads against
// (nothing written), 2 on usage or input errors.
#include "commands.hpp"
#include "options.hpp"

#include "torch_input.hpp"
#include "style.hpp"

#include "wheelfix/analysis/torch_check.hpp"
#include "wheelfix/analysis/torch_matrix_text.hpp"
#include "wheelfix/analysis/torch_releases.hpp"
#include "wheelfix/repair/report_json.hpp"
#include "wheelfix/repair/report_text.hpp"
#include "wheelfix/repair/retag.hpp"
#include "wheelfix/repair/torch_auto.hpp"
#include "wheelfix/wheel/filename.hpp"
#include "wheelfix/util/error.hpp"

#include <fmt/format.h>

namespace wheelfix::cli {

namespace {

struct RetagArguments {
    std::string wheel;
    repair::RetagCommand command;  // judged below (repair/retag.hpp check_retag_command)
    std::string pin;               // --pin as given: parsed into command.pin
    std::string output;
    bool verify = false;
};

void render_text(const repair::RetagOptions& options, const std::optional<repair::RetagPick>& pick,
                 const repair::RetagResult& result, const GlobalOptions& global) {
    if (global.quiet && result.plan.empty()) return;
    if (pick)
        fmt::print("{}{}", render_matrix_text(pick->releases->matrix, palette(global)),
                   torch_requirement_text(pick->requirement, pick->releases->stable));
    fmt::print("{}", repair::retag_text(result, options));
}

int run_retag(const RetagArguments& args, const GlobalOptions& global) {
    repair::RetagCommand command = args.command;
    command.pin = repair::parse_pin_request(args.pin, command.automatic());
    repair::check_retag_command(command);
    require_output_directory(args.output);
    auto wheel = wheel::Wheel::open(args.wheel);
    repair::require_agreeing_versions(wheel, command.fix_version);
    if (command.platform) repair::require_plausible_platform(wheel, *command.platform);
    std::optional<repair::RetagPick> pick;
    if (command.automatic()) {
        pick = repair::pick_retag_torch(args.wheel, command.torch_from,
                                        command.pin.mode(),
                                        torch_loader(global.verbose));
        if (!pick->torch) {
            if (global.json) fmt::print("{}", repair::retag_json(args.wheel, pick, nullptr, command.pin));
            else
                fmt::print("{}{}nothing written\n", render_matrix_text(pick->releases->matrix, palette(global)),
                           torch_requirement_text(pick->requirement, pick->releases->stable));
            return 1;
        }
    }
    // The extensions were read through their loader views; the copy is retag's own read.
    const auto digests = repair::retag_digests(wheel, args.verify);
    auto torch = pick ? *pick->torch : repair::retag_torch_version(command.torch);
    const repair::RetagOptions options = repair::retag_options(command, torch, pick ? &pick->requirement : nullptr);
    auto result = repair::retag_wheel(wheel, digests, options, args.output);
    if (global.json) fmt::print("{}", repair::retag_json(args.wheel, pick, &result, command.pin));
    else render_text(options, pick, result, global);
    return 0;
}

}  // namespace

CommandRunner register_retag(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand(
        "retag", "Record the torch (and CUDA) the wheel needs in its local version, pin torch in METADATA, optionally "
                 "set the platform tag; only metadata changes, every other member is copied as stored");
    auto args = std::make_shared<RetagArguments>();
    command->add_option("wheel", args->wheel, "Wheel (*.whl)")->required();
    command->add_option("--torch", args->command.torch,
                        "Torch version the wheel needs (2.10, 2.10.0), or 'auto': the releases of the torch atlas it "
                        "loads on (or the newest --torch-from it loads against)")
        ->required();
    command->add_option("--torch-from", args->command.torch_from,
                        "With --torch auto: torch atlas, torch directory, torch wheel or wheelfix index to check "
                        "against (repeatable; default: the bundled atlas)")
        ->take_all();
    add_wheel_dir_option(*command, args->output, "Output directory, default ./wheelhouse/ (the wheel's new file name)");
    command->add_option("--cuda", args->command.cuda, "Set or replace the cuXYZ local segment (13.0 -> cu130)");
    command->add_option("--platform", args->command.platform,
                        "New platform tag or compressed tag set (manylinux_2_17_x86_64.manylinux2014_x86_64)");
    command->add_option("--pin", args->pin,
                        "Requires-Dist torch pin, always within the author's: minor (>=2.10,<2.11; the default), "
                        "exact (==the torch version as given), none (left as it is), range (with --torch auto: every "
                        "release whose symbols resolve; symbol-level only), or a specifier ('>=2.9,<2.11'); --torch "
                        "auto's default is the verdict's pin (a C++ extension's built-for minor, a stable-ABI one's "
                        "linkable range)")
        ->type_name("TEXT:{minor,exact,none,range}");  // the words completion offers; a specifier is free text
    command->add_option("--local-format", args->command.local_format,
                        "Torch segment spelling: dotted (torch2.10), compact (torch210), full (torch2.10.0)")
        ->check(CLI::IsMember({"dotted", "compact", "full"}))
        ->capture_default_str();
    command->add_flag("--fix-version", args->command.fix_version,
                      "Accept a file name whose version disagrees with METADATA: METADATA's version wins");
    command->add_flag("--overwrite", args->command.overwrite, "Replace the output file if it exists (refused otherwise)");
    command->add_flag("--verify", args->verify,
                      "Inflate and hash every member against RECORD before writing (default: sizes only, "
                      "METADATA and WHEEL hashed; other members are copied with their RECORD lines as they were)");
    command->add_flag("--dry-run", args->command.dry_run, "Print the plan (rename, METADATA and WHEEL replaced), write nothing");
    return [args, &global] { return run_retag(*args, global); };
}

}  // namespace wheelfix::cli
