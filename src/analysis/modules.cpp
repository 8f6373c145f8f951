// CUDA modules: group sibling variants, then judge coverage over all of them.
#include "wheelfix/analysis/modules.hpp"

#include "wheelfix/cuda/coverage.hpp"

#include <algorithm>
#include <map>

namespace wheelfix::analysis {

namespace {

struct MemberPath {
    std::string parent;     // "sgl_kernel" for sgl_kernel/sm100/x.so
    std::string directory;  // "sm100"
    std::string file;       // "x.so"
};

MemberPath split_member(std::string_view name) {
    MemberPath path;
    auto slash = name.rfind('/');
    path.file = std::string(slash == std::string_view::npos ? name : name.substr(slash + 1));
    if (slash == std::string_view::npos) return path;
    std::string_view dir = name.substr(0, slash);
    auto up = dir.rfind('/');
    if (up == std::string_view::npos) return path;  // directly in a top-level directory: no siblings
    path.parent = std::string(dir.substr(0, up));
    path.directory = std::string(dir.substr(up + 1));
    return path;
}

// Files without a grouping parent are their own module: the key is the name itself.
std::string module_key(const std::string& name) {
    auto path = split_member(name);
    return path.parent.empty() ? "\n" + name : path.parent + "/*/" + path.file;
}

std::string module_name(const CudaModule& module, const std::vector<ElfReport>& elves) {
    if (module.variants.size() == 1) return elves[module.variants.front()].name;
    auto first = split_member(elves[module.variants.front()].name);
    std::string directories;
    for (auto index : module.variants)
        directories += (directories.empty() ? "" : ",") + split_member(elves[index].name).directory;
    return first.parent + "/{" + directories + "}/" + first.file;
}

}  // namespace

std::vector<CudaModule> group_cuda_modules(const std::vector<ElfReport>& elves) {
    std::vector<CudaModule> modules;
    std::map<std::string, std::size_t> by_key;
    for (std::size_t i = 0; i < elves.size(); ++i) {
        if (elves[i].fatbin.empty()) continue;
        auto [found, added] = by_key.emplace(module_key(elves[i].name), modules.size());
        if (added) modules.emplace_back();
        modules[found->second].variants.push_back(i);
    }
    for (auto& module : modules) {
        module.name = module_name(module, elves);
        module.blackwell = module_support(module, elves, kBlackwellSms);
    }
    return modules;
}

std::vector<ModuleSupport> module_support(const CudaModule& module, const std::vector<ElfReport>& elves,
                                          std::span<const std::uint32_t> sms) {
    std::vector<cuda::FatbinEntry> pooled;
    std::vector<std::size_t> owner;
    for (auto index : module.variants)
        for (const auto& entry : elves[index].fatbin) {
            pooled.push_back(entry);
            owner.push_back(index);
        }
    std::vector<ModuleSupport> support;
    for (auto sm : sms) {
        auto best = cuda::best_entry_index(pooled, sm);
        if (best) support.push_back({sm, true, elves[owner[*best]].name, cuda::describe_entry(pooled[*best])});
        else support.push_back({sm, false, {}, {}});
    }
    return support;
}

std::vector<CoverageRow> sm_coverage(const std::vector<CudaModule>& modules, const std::vector<ElfReport>& elves,
                                     std::span<const std::uint32_t> sms) {
    std::vector<CoverageRow> rows;
    for (const auto& module : modules) {
        rows.push_back({module.name, true, module_support(module, elves, sms)});
        if (module.variants.size() < 2) continue;
        for (auto index : module.variants) {
            CudaModule alone{elves[index].name, {index}, {}};
            rows.push_back({elves[index].name, false, module_support(alone, elves, sms)});
        }
    }
    return rows;
}

std::string module_code_summary(const CudaModule& module, const std::vector<ElfReport>& elves) {
    std::string out;
    for (auto index : module.variants) {
        std::vector<std::string> seen;  // a library holds many fatbins: name each kind of code once
        std::string codes;
        for (const auto& entry : elves[index].fatbin) {
            auto text = cuda::describe_entry(entry);
            if (std::find(seen.begin(), seen.end(), text) != seen.end()) continue;
            seen.push_back(text);
            codes += (codes.empty() ? "" : ", ") + text;
        }
        if (module.variants.size() > 1) codes += " in " + split_member(elves[index].name).directory + "/";
        out += (out.empty() ? "" : "; ") + codes;
    }
    return out;
}

}  // namespace wheelfix::analysis
