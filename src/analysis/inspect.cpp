// inspect's run over one input (inspect.hpp has the contract).
#include "wheelfix/analysis/inspect.hpp"

#include "wheelfix/analysis/modules.hpp"
#include "wheelfix/analysis/torch_releases.hpp"
#include "wheelfix/analysis/variant.hpp"

namespace wheelfix::analysis {

bool InspectedInput::has_findings() const {
    if (!judged.findings.empty()) return true;
    const auto* wheel = std::get_if<WheelReport>(&report);
    return wheel != nullptr && !wheel->variant_findings.empty();
}

InspectedInput inspect_input(const std::string& path, const policy::Profile* profile, const SearchContext& context) {
    InspectedInput input{{}, TargetFindings{profile, {}, {}}};
    if (path.ends_with(".whl")) {
        WheelReport report = inspect_wheel(path);
        attach_libraries(report, context);
        const auto releases = bundled_releases(report, path);
        report.torch_range = torch_range_of(releases, path);
        judge_torch_claim(report, &releases);
        if (profile) {
            input.judged.findings = evaluate(*profile, report);
            input.judged.coverage = sm_coverage(report.modules, report.elves, profile->sms);
        }
        input.report = std::move(report);
    } else {
        ElfReport report = inspect_file(path);
        if (profile) {
            input.judged.findings = evaluate(*profile, report);
            std::vector<ElfReport> one{report};
            input.judged.coverage = sm_coverage(group_cuda_modules(one), one, profile->sms);
        }
        input.report = std::move(report);
    }
    return input;
}

}  // namespace wheelfix::analysis
