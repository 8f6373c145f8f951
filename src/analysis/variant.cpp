// Variant properties from the binaries, and variant.json claims judged (analysis/variant.hpp).
#include "wheelfix/analysis/variant.hpp"

#include "wheelfix/abi/atlas.hpp"
#include "wheelfix/analysis/modules.hpp"
#include "wheelfix/analysis/torch_releases.hpp"
#include "wheelfix/policy/variant_rules.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/text.hpp"
#include "wheelfix/wheel/scan.hpp"
#include "wheelfix/wheel/version.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <tuple>
#include <map>
#include <set>
#include <stdexcept>

namespace wheelfix::analysis {

namespace {

constexpr const char* kNvidia = "nvidia";
constexpr const char* kSmArch = "sm_arch";
constexpr const char* kCudaLowerBound = "cuda_version_lower_bound";
constexpr const char* kAbiDependency = "abi_dependency";

struct SmValue {
    std::uint32_t sm = 0;
    bool real = true;
    bool operator<(const SmValue& other) const { return std::tie(sm, other.real) < std::tie(other.sm, real); }
    std::string text() const { return std::to_string(sm) + (real ? "_real" : "_virtual"); }
};

std::optional<SmValue> parse_sm_value(std::string_view text) {
    SmValue value;
    std::string_view rest;
    if (text.ends_with("_real")) rest = text.substr(0, text.size() - 5);
    else if (text.ends_with("_virtual")) { rest = text.substr(0, text.size() - 8); value.real = false; }
    else return std::nullopt;
    auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), value.sm);
    if (error != std::errc() || end != rest.data() + rest.size() || rest.empty()) return std::nullopt;
    return value;
}

// The module's entries, every variant pooled (the union over its alternative builds).
std::set<SmValue> module_values(const CudaModule& module, const std::vector<ElfReport>& elves) {
    std::set<SmValue> values;
    for (auto index : module.variants)
        for (const auto& entry : elves[index].fatbin) {
            if (entry.kind == cuda::EntryKind::cubin) values.insert({entry.sm, true});
            else if (entry.kind == cuda::EntryKind::ptx) values.insert({entry.sm, false});
        }
    return values;
}

bool module_runs(const CudaModule& module, const std::vector<ElfReport>& elves, std::uint32_t sm) {
    const std::uint32_t sms[] = {sm};
    return module_support(module, elves, sms).front().runs;
}

// The known SMs (variants.policy `sm`) an installer selects a wheel for by this value
// (variant.hpp sm_arch_values has the rule).
std::vector<std::uint32_t> selected_sms(const SmValue& value) {
    std::vector<std::uint32_t> sms{value.sm};
    for (const auto& row : policy::variant_rules().sm) {
        std::uint32_t sm = 0;
        std::from_chars(row.key.data(), row.key.data() + row.key.size(), sm);
        if (sm != value.sm && sm / 10 == value.sm / 10 && sm > value.sm) sms.push_back(sm);
    }
    return sms;
}

// Empty when every module runs every SM the value selects, else the first one it does not, with the module.
std::optional<std::pair<std::uint32_t, std::string>> unrun_selected_sm(const WheelReport& report, const SmValue& value) {
    for (std::uint32_t sm : selected_sms(value))
        for (const auto& module : report.modules)
            if (!module_runs(module, report.elves, sm)) return std::make_pair(sm, module.name);
    return std::nullopt;
}

void raise(std::optional<CudaFloor>& floor, const std::string& version, const std::string& because) {
    if (!floor || policy::cuda_version_less(floor->version, version)) floor = CudaFloor{version, because};
}

// "2.9.1+cu128" -> "2.9"
std::string minor_of(const std::string& torch_version) {
    const auto version = wheel::Version::try_parse(torch_version.substr(0, torch_version.find('+')));
    if (!version || version->release().size() < 2) return {};
    return std::to_string(version->release()[0]) + "." + std::to_string(version->release()[1]);
}

bool minor_less(const std::string& a, const std::string& b) {
    return wheel::Version::parse(a) < wheel::Version::parse(b);
}

// The minors every one of whose releases passes `keep`, in version order.
std::vector<std::string> whole_minors(const std::vector<std::string>& versions, const std::function<bool(std::size_t)>& keep) {
    std::map<std::string, bool> all;  // minor -> every release kept
    for (std::size_t i = 0; i < versions.size(); ++i) {
        const std::string minor = minor_of(versions[i]);
        if (minor.empty()) continue;
        auto [it, fresh] = all.emplace(minor, true);
        it->second = it->second && keep(i);
    }
    std::vector<std::string> minors;
    for (const auto& [minor, every] : all)
        if (every) minors.push_back(minor);
    std::sort(minors.begin(), minors.end(), minor_less);
    return minors;
}

// The torch release `version` names without its local label ("2.9.1+cu128" -> 2.9.1),
// as PEP 440 matches it against a public specifier.
std::optional<wheel::Version> public_release(const std::string& version) {
    return wheel::Version::try_parse(public_version(version));
}

bool admitted_by_all(const std::vector<wheel::SpecifierSet>& sets, const wheel::Version& version) {
    return std::all_of(sets.begin(), sets.end(), [&](const wheel::SpecifierSet& set) { return set.contains(version); });
}

// The specifier of every Requires-Dist on torch that has one; nullopt when one cannot be read.
std::optional<std::vector<wheel::SpecifierSet>> torch_specifiers(const std::vector<wheel::Requirement>& requirements) {
    std::vector<wheel::SpecifierSet> sets;
    for (const auto& requirement : requirements) {
        if (!requirement.url.empty() || requirement.specifier.empty()) continue;
        auto set = wheel::SpecifierSet::try_parse(requirement.specifier);
        if (!set) return std::nullopt;
        sets.push_back(std::move(*set));
    }
    return sets;
}

// The bundled atlas's releases for the wheel's arch ("2.10.0+cu128").
std::vector<std::string> atlas_versions(const std::string& input) {
    const std::string arch = wheel_facts(input).arch;
    std::vector<std::string> versions;
    for (const auto& release : abi::Atlas::bundled().releases())
        if (release.arch.empty() || release.arch == arch) versions.push_back(release.torch_version);
    return versions;
}

// Whether every release minor `minor` stands for passes `admits`: the atlas's releases
// of it, or X.Y.0 when the atlas knows none.
bool minor_admitted(const std::string& minor, const std::vector<std::string>& versions,
                    const std::function<bool(const wheel::Version&)>& admits) {
    bool known = false;
    for (const auto& version : versions) {
        if (minor_of(version) != minor) continue;
        known = true;
        const auto release = public_release(version);
        if (!release || !admits(*release)) return false;
    }
    return known || admits(wheel::Version::parse(minor + ".0"));
}

std::vector<std::string> sm_arch_values(const WheelReport& report) {
    std::set<SmValue> candidates;
    for (const auto& module : report.modules)
        for (const SmValue& value : module_values(module, report.elves)) candidates.insert(value);
    std::vector<std::string> values;
    for (const SmValue& value : candidates)
        if (!unrun_selected_sm(report, value)) values.push_back(value.text());
    return values;
}

std::optional<CudaFloor> cuda_lower_bound(const WheelReport& report) {
    std::optional<CudaFloor> floor;
    for (const auto& elf : report.elves) {
        // One input's toolkit floor raises `floor`; "" (the rules do not know the input) is an InputError.
        const auto need = [&](const std::string& cuda, const std::string& unknown, const std::string& because) {
            if (cuda.empty()) throw InputError(report.path + ": " + elf.name, unknown);
            raise(floor, cuda, because + " (" + elf.name + ")");
        };
        if (elf.cudart_major) {
            const std::string library = "libcudart.so." + std::to_string(*elf.cudart_major);
            need(policy::cuda_for_cudart(*elf.cudart_major),
                 "links " + library + ", a CUDA major wheelfix's variant rules do not know", library);
        }
        for (const auto& entry : elf.fatbin) {
            if (entry.kind == cuda::EntryKind::ptx) {
                const std::string isa = std::to_string(entry.version_major) + "." + std::to_string(entry.version_minor);
                need(policy::cuda_for_ptx_isa(entry.version_major, entry.version_minor),
                     "PTX ISA " + isa + " (" + entry.arch_name() + "), newer than wheelfix's variant rules know",
                     "PTX ISA " + isa + " of " + entry.arch_name());
            } else if (entry.kind == cuda::EntryKind::cubin) {
                need(policy::cuda_for_sm(entry.sm),
                     "cubin for SM " + std::to_string(entry.sm) + ", newer than wheelfix's variant rules know",
                     "cubin " + entry.arch_name());
            }
        }
    }
    return floor;
}

}  // namespace

VariantDerivation derive_variant(const WheelReport& report, const std::vector<std::string>& torch_minors) {
    VariantDerivation derived;
    derived.cuda = cuda_lower_bound(report);
    if (derived.cuda) derived.properties[kNvidia][kCudaLowerBound] = {derived.cuda->version};
    auto sms = sm_arch_values(report);
    if (!sms.empty()) derived.properties[kNvidia][kSmArch] = std::move(sms);
    if (!torch_minors.empty()) derived.properties[kAbiDependency]["torch"] = torch_minors;
    return derived;
}

std::string auto_variant_label(const wheel::VariantProperties& properties) {
    std::string cuda_major;
    std::vector<std::string> reals;
    if (auto nvidia = properties.find(kNvidia); nvidia != properties.end()) {
        if (auto bound = nvidia->second.find(kCudaLowerBound); bound != nvidia->second.end() && !bound->second.empty())
            cuda_major = bound->second.front().substr(0, bound->second.front().find('.'));
        if (auto sms = nvidia->second.find(kSmArch); sms != nvidia->second.end())
            for (const auto& value : sms->second)
                if (auto sm = parse_sm_value(value); sm && sm->real) reals.push_back(std::to_string(sm->sm));
    }
    const std::string head = cuda_major.empty() ? "cpu" : "cu" + cuda_major;
    const std::string readable = reals.empty() ? head : head + "sm" + join(reals, ".");
    if (readable.size() <= wheel::kVariantLabelMax) return readable;
    std::string lines;
    for (const auto& line : wheel::property_lines(properties)) lines += line + "\n";
    const auto digest = sha256({reinterpret_cast<const std::uint8_t*>(lines.data()), lines.size()});
    return head + "_" + hex_digest(digest).substr(0, 8);
}

wheel::VariantFile variant_file(const std::string& label, const wheel::VariantProperties& properties,
                                wheel::VariantSchema schema) {
    const policy::VariantRules& rules = policy::variant_rules();
    wheel::VariantFile file;
    file.schema = schema;
    for (const std::string& name_space : rules.namespaces) {
        if (!properties.contains(name_space)) continue;
        auto provider = std::find_if(rules.providers.begin(), rules.providers.end(),
                                     [&](const policy::VariantProvider& p) { return p.name_space == name_space; });
        if (schema == wheel::VariantSchema::v0_0_3) {
            if (provider == rules.providers.end()) continue;
            file.providers[name_space] = {provider->plugin_api, {provider->requirement}};
        }
        file.namespaces.push_back(name_space);
    }
    for (const auto& [name_space, features] : properties)
        if (std::find(rules.namespaces.begin(), rules.namespaces.end(), name_space) == rules.namespaces.end())
            throw std::logic_error("variant namespace '" + name_space + "' is not in variants.policy");
    if (file.namespaces.empty())
        throw InputError("--schema", std::string("schema ") + wheel::variant_schema_name(schema) +
                                         " needs a namespace with an installer provider (nvidia): this wheel has no CUDA "
                                         "property; use --schema 0.1.1");
    file.variants[label] = properties;
    return file;
}

std::vector<std::string> proven_torch_minors(const std::string& input, const WheelReport& report) {
    if (!std::any_of(report.elves.begin(), report.elves.end(), [](const ElfReport& elf) { return uses_torch(elf); }))
        return {};
    const Targets targets = read_targets(input);
    const TorchLoader no_other_torch = [](const std::string& path, const abi::IndexOptions&) -> abi::SymbolIndex {
        throw std::logic_error("no torch path but the atlas was asked for: " + path);
    };
    const ReleaseMatrix run = check_releases(targets, input, release_request("all", {}), no_other_torch);
    std::vector<std::string> versions;
    for (const auto& column : run.matrix.columns) versions.push_back(column.torch_version);
    const auto authors = torch_specifiers(report.torch_requirements);
    if (!authors) return {};
    return whole_minors(versions, [&](std::size_t column) {
        if (run.matrix.column_verdict(column) != Verdict::ok) return false;
        // Only what the torch verdict pins (torch_verdict.hpp): a C++ extension's built-for minor.
        const auto version = public_release(versions[column]);
        if (!run.requirement.pin || !version || !run.requirement.pin->contains(*version)) return false;
        return admitted_by_all(*authors, *version);
    });
}

std::vector<std::string> pinned_torch_minors(const std::vector<wheel::Requirement>& requirements, const std::string& input) {
    const auto sets = torch_specifiers(requirements);
    if (!sets || sets->empty()) return {};
    // No ceiling: every minor from the floor on would be claimed.
    if (admitted_by_all(*sets, wheel::Version::parse("9999"))) return {};
    const auto versions = atlas_versions(input);
    return whole_minors(versions, [&](std::size_t i) {
        const auto version = public_release(versions[i]);
        return version && admitted_by_all(*sets, *version);
    });
}

std::vector<std::string> variant_claim_problems(const WheelReport& report, const wheel::VariantProperties& claimed) {
    std::vector<std::string> problems;
    auto nvidia = claimed.find(kNvidia);
    if (nvidia == claimed.end()) return problems;
    if (auto sms = nvidia->second.find(kSmArch); sms != nvidia->second.end()) {
        for (const auto& text : sms->second) {
            const auto value = parse_sm_value(text);
            if (!value) {
                problems.push_back("nvidia :: sm_arch :: " + text + " is not an SM value (X_real or X_virtual)");
                continue;
            }
            if (report.modules.empty()) {
                problems.push_back("nvidia :: sm_arch :: " + text + " claimed, but no ELF holds device code");
                continue;
            }
            if (auto unrun = unrun_selected_sm(report, *value)) {
                std::string problem = "nvidia :: sm_arch :: " + text + " claimed, but " + unrun->second +
                                      " cannot run SM " + std::to_string(unrun->first);
                if (unrun->first != value->sm) problem += " (which an installer selects it for by that value)";
                problems.push_back(std::move(problem));
            }
        }
    }
    if (auto bound = nvidia->second.find(kCudaLowerBound); bound != nvidia->second.end()) {
        const auto needed = cuda_lower_bound(report);
        for (const auto& text : bound->second)
            if (needed && policy::cuda_version_less(text, needed->version))
                problems.push_back("nvidia :: cuda_version_lower_bound :: " + text + " claimed, but the binaries need CUDA " +
                                   needed->version + " (" + needed->because + ")");
    }
    return problems;
}

void judge_torch_claim(WheelReport& report, const std::optional<ReleaseMatrix>* releases) {
    if (!report.variant) return;
    const auto& claimed = report.variant->variants.begin()->second;
    const auto dependency = claimed.find(kAbiDependency);
    if (dependency == claimed.end()) return;
    const auto torch = dependency->second.find("torch");
    if (torch == dependency->second.end()) return;
    const auto claim = [](const std::string& minor) { return std::string(kAbiDependency) + " :: torch :: " + minor + " claimed, but "; };
    if (std::none_of(report.elves.begin(), report.elves.end(), [](const ElfReport& elf) { return uses_torch(elf); })) {
        for (const auto& minor : torch->second) report.variant_findings.push_back(claim(minor) + "no ELF member uses torch");
        return;
    }
    const auto authors = torch_specifiers(report.torch_requirements);
    const std::optional<ReleaseMatrix> made = releases ? std::nullopt : bundled_releases(report, report.path);
    const std::optional<ReleaseMatrix>& run = releases ? *releases : made;
    const TorchRequirement* verdict = run && run->requirement.any && run->requirement.pin ? &run->requirement : nullptr;
    const auto versions = atlas_versions(report.path);
    for (const auto& minor : torch->second) {
        const auto parsed = wheel::Version::try_parse(minor);
        if (!parsed || parsed->release().size() != 2 || minor_of(minor + ".0") != minor) {
            report.variant_findings.push_back(std::string(kAbiDependency) + " :: torch :: " + minor +
                                              " is not a torch minor (X.Y)");
            continue;
        }
        if (authors && !minor_admitted(minor, versions, [&](const wheel::Version& v) { return admitted_by_all(*authors, v); }))
            report.variant_findings.push_back(claim(minor) + "the wheel's Requires-Dist (" + join(wheel::requirement_summaries(report.torch_requirements), "; ") +
                                              ") does not admit every " + minor + " release");
        else if (verdict && !minor_admitted(minor, versions, [&](const wheel::Version& v) { return verdict->pin->contains(v); }))
            report.variant_findings.push_back(claim(minor) + "the torch verdict pins " + verdict->specifier +
                                              " (wheelfix check --torch-release all)");
    }
}

void attach_variant(WheelReport& report, const wheel::Wheel& wheel) {
    report.variant_label = wheel.filename().variant_label;
    report.variant = wheel::read_variant_json(wheel);
    const std::string member = wheel.dist_info() + "/" + wheel::kVariantJsonName;
    if (!report.variant) {
        if (!report.variant_label.empty())
            report.variant_findings.push_back("the file name's variant label '" + report.variant_label + "' but no " + member);
        return;
    }
    const auto& [label, properties] = *report.variant->variants.begin();
    if (report.variant_label.empty())
        report.variant_findings.push_back(member + " names variant '" + label + "' but the file name has no label");
    else if (label != report.variant_label)
        report.variant_findings.push_back(member + " names variant '" + label + "' but the file name's label is '" +
                                          report.variant_label + "'");
    for (auto& problem : variant_claim_problems(report, properties)) report.variant_findings.push_back(std::move(problem));
}

std::vector<wheel::VerifyFinding> verify_findings(const wheel::Wheel& wheel, const std::string& input) {
    if (!wheel::is_variant_wheel(wheel)) return wheel::verify_wheel(wheel, wheel::scan_members(wheel.archive()));
    const std::string member = wheel.dist_info() + "/" + wheel::kVariantJsonName;
    auto report = inspect_wheel(input);
    judge_torch_claim(report);
    auto findings = std::move(report.record_findings);
    for (auto& problem : report.variant_findings) findings.push_back({member, "variant " + problem});
    return findings;
}

}  // namespace wheelfix::analysis
