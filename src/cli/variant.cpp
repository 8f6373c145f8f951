// `wheelfix variant WHEEL... -w DIR [--label auto|LABEL] [--schema 0.0.3|0.1.1]`: label
// wheels as PEP 825 variants from what their binaries hold (repair/variant.hpp; the
// JSON documents are repair/report_json.hpp's), and
// `wheelfix variant merge DIR`: the index-level {name}-{version}-variants.json.
#include "commands.hpp"
#include "options.hpp"

#include "wheelfix/repair/report_json.hpp"
#include "wheelfix/repair/variant.hpp"
#include "wheelfix/util/error.hpp"

#include <fmt/format.h>

namespace wheelfix::cli {

namespace {

struct VariantArguments {
    std::vector<std::string> inputs;
    std::string output;
    std::string schema = wheel::variant_schema_name(wheel::kDefaultVariantSchema);
    repair::VariantRequest request;
    std::string merge_dir;
    CLI::App* merge = nullptr;
};

int run_merge(const VariantArguments& args, const GlobalOptions& global) {
    const auto merged = repair::merge_variants(args.merge_dir, args.request.overwrite, args.request.dry_run);
    if (global.json) {
        fmt::print("{}", repair::variant_merge_json(merged, args.request.dry_run));
        return 0;
    }
    if (global.quiet) return 0;
    for (const auto& index : merged)
        fmt::print("{} {} ({} wheel(s), labels {})\n", args.request.dry_run ? "would write" : "wrote", index.path.string(),
                   index.wheels.size(), fmt::join(index.labels, ", "));
    return 0;
}

int run_variant(VariantArguments& args, const GlobalOptions& global) {
    if (args.merge && args.merge->parsed()) return run_merge(args, global);
    if (args.inputs.empty()) throw InputError("variant", "needs WHEEL... and -w DIR (or: variant merge DIR)");
    require_output_directory(args.output);
    args.request.schema = wheel::parse_variant_schema(args.schema, "--schema");
    std::vector<repair::VariantOutcome> outcomes;
    for (const auto& input : args.inputs) outcomes.push_back(repair::label_wheel(input, args.request, args.output));
    if (global.json) {
        fmt::print("{}", repair::variant_json(args.inputs, outcomes, args.request.dry_run));
        return 0;
    }
    if (global.quiet) return 0;
    for (const auto& outcome : outcomes) {
        if (!outcome.plan.empty()) fmt::print("{}", outcome.plan);
        fmt::print("{} {}  (variant '{}', schema {})\n", outcome.written ? "wrote" : "would write", outcome.output.string(),
                   outcome.label, wheel::variant_schema_name(outcome.schema));
        for (const auto& line : wheel::property_lines(outcome.properties)) fmt::print("  {}\n", line);
        if (outcome.cuda) fmt::print("  (cuda_version_lower_bound from {})\n", outcome.cuda->because);
        for (const auto& requirement : outcome.requires_dist) fmt::print("  Requires-Dist: {}\n", requirement.text);
    }
    return 0;
}

}  // namespace

CommandRunner register_variant(CLI::App& app, const GlobalOptions& global) {
    auto* command = app.add_subcommand(
        "variant", "Label wheels as PEP 825 variants from what their binaries hold (nvidia :: sm_arch, "
                   "cuda_version_lower_bound, abi_dependency :: torch): the label into the file name, "
                   "*.dist-info/variant.json added, every other member copied as stored");
    auto args = std::make_shared<VariantArguments>();
    command->add_option("wheels", args->inputs, "Wheels (*.whl)");
    command->add_option("-o,--output,-w,--wheel-dir", args->output, "Output directory (the file name gets the label)");
    command->add_option("--label", args->request.label,
                        "Variant label: 'auto' (default: cu{CUDA major}sm{SMs}, e.g. cu13sm100.120) or a label "
                        "matching ^[0-9a-z_.]{1,16}$");
    command->add_option("--schema", args->schema,
                        "variant.json schema: 0.0.3 (default: what variant-aware installers read today) or 0.1.1 "
                        "(the PEP 825 draft)")
        ->check(CLI::IsMember({"0.0.3", "0.1.1"}));
    command->add_flag("--variant-requires", args->request.requires_runtime,
                      "Add Requires-Dist for the CUDA runtime package the ELFs need, with a variant marker");
    command->add_flag("--overwrite", args->request.overwrite, "Replace an existing output file");
    command->add_flag("--dry-run", args->request.dry_run, "Print the plan and the properties, write nothing");
    args->merge = command->add_subcommand(
        "merge", "Write {name}-{version}-variants.json for every name and version of the variant wheels in DIR "
                 "(refused when one label names different properties in two wheels)");
    args->merge->add_option("dir", args->merge_dir, "Directory of variant wheels")->required();
    args->merge->add_flag("--overwrite", args->request.overwrite, "Replace an existing -variants.json");
    args->merge->add_flag("--dry-run", args->request.dry_run, "Say what would be written, write nothing");
    return [args, &global] { return run_variant(*args, global); };
}

}  // namespace wheelfix::cli
