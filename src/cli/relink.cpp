// `wheelfix relink WHEEL|ELF [-o DIR|FILE] [...]`: RPATH/RUNPATH, NEEDED and SONAME
// edits, patchelf-grade, inside a wheel or on one ELF file.
#include "commands.hpp"
#include "options.hpp"

#include "wheelfix/repair/relink.hpp"
#include "wheelfix/repair/report_json.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/text.hpp"

#include <fmt/format.h>

#include <filesystem>

namespace wheelfix::cli {

namespace {

struct RelinkArguments {
    std::string input;
    std::string output;
    const CLI::Option* output_option = nullptr;  // given on the command line, or the ./wheelhouse default
    repair::RelinkOptions options;
    std::optional<std::string> set_rpath;
    std::optional<std::string> set_soname;
    std::vector<std::string> replace_needed;
    bool force_rpath = false;
    bool force_runpath = false;
};

void finish_options(RelinkArguments& args) {
    args.options.set_rpath = args.set_rpath;
    args.options.set_soname = args.set_soname;
    for (const auto& text : args.replace_needed) args.options.replace_needed.push_back(split_replacement(text));
    if (args.force_rpath) args.options.force_kind = elf::SearchPathKind::rpath;
    if (args.force_runpath) args.options.force_kind = elf::SearchPathKind::runpath;
}

void render_text(const repair::RelinkResult& result, const GlobalOptions& global) {
    if (!result.plan.empty()) {
        fmt::print("{}would write {} (dry run: nothing written)\n", result.plan, result.output.string());
        return;
    }
    if (global.quiet) return;
    for (const auto& change : result.changed) {
        fmt::print("{}\n", change.member);
        for (const auto& line : change.changes) fmt::print("  {}\n", line);
        if (global.verbose)
            fmt::print("  size {} -> {}{}, {} re-deflated\n", change.size_before, change.size_after,
                       change.grew ? " (grew)" : "", human_size(change.recompressed_bytes));
    }
    fmt::print("wrote {} ({} of {} ELF file(s) changed)\n", result.output.string(), result.changed.size(),
               result.elf_members);
}

int run_relink(RelinkArguments& args, const GlobalOptions& global) {
    finish_options(args);
    bool is_wheel = args.input.ends_with(".whl");
    if (args.options.dry_run && !is_wheel) throw InputError("--dry-run", "is for wheels; a bare ELF file has no plan");
    if (is_wheel) require_output_directory(args.output);
    if (!is_wheel && args.output_option->count() == 0) {  // an ELF file without -o: wheelhouse/<its name>
        const std::filesystem::path into = args.output;
        require_output_directory(into.string());
        std::filesystem::create_directories(into);
        args.output = (into / std::filesystem::path(args.input).filename()).string();
    }
    auto result = is_wheel ? repair::relink_wheel(args.input, args.options, args.output)
                           : repair::relink_file(args.input, args.options, args.output);
    if (global.json) fmt::print("{}", repair::relink_json(result));
    else render_text(result, global);
    return 0;
}

}  // namespace

CommandRunner register_relink(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand(
        "relink", "Edit RPATH/RUNPATH, NEEDED and SONAME of the ELF files in a wheel (or of one ELF file); "
                  "only edited members are recompressed, and only around the changed bytes");
    auto args = std::make_shared<RelinkArguments>();
    auto& o = args->options;
    command->add_option("input", args->input, "Wheel (*.whl) or ELF file")->required();
    args->output_option = add_wheel_dir_option(
        *command, args->output,
        "Output directory, default ./wheelhouse/ (a wheel keeps its file name); for an ELF file the output file "
        "(default: its name in ./wheelhouse/)");
    command->add_option("--set-rpath", args->set_rpath,
                        "Replace the search path ('{root}' = the wheel root, e.g. '{root}/torch/lib')");
    command->add_option("--add-rpath", o.add_rpath, "Append search path entries (repeatable, ':'-separated)");
    command->add_option("--remove-rpath", o.remove_rpath, "Remove search path entries (repeatable)");
    command->add_flag("--drop-absolute-rpaths", o.drop_absolute,
                      "Remove entries that are absolute or climb out of the wheel");
    auto* force_rpath = command->add_flag("--force-rpath", args->force_rpath, "Write DT_RPATH (converting DT_RUNPATH)");
    command->add_flag("--force-runpath", args->force_runpath, "Write DT_RUNPATH (converting DT_RPATH)")
        ->excludes(force_rpath);
    command->add_option("--replace-needed", args->replace_needed, "Replace a NEEDED entry, OLD=NEW (repeatable)");
    command->add_option("--add-needed", o.add_needed, "Add a NEEDED entry (repeatable)");
    command->add_option("--remove-needed", o.remove_needed, "Remove a NEEDED entry (repeatable)");
    command->add_option("--set-soname", args->set_soname, "Set the SONAME");
    command->add_option("--only", o.only, "Edit only members matching GLOB (repeatable; no '/' = base name)");
    add_exclude_option(*command, o.exclude);
    command->add_flag("--overwrite", o.overwrite, "Replace the output file if it exists (refused otherwise)");
    command->add_flag("--dry-run", o.dry_run, "Print the plan (each ELF edit, what is copied raw), write nothing");
    return [args, &global] { return run_relink(*args, global); };
}

}  // namespace wheelfix::cli
