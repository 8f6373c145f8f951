// analyze_elf: one pass over a parsed ELF image to fill an ElfReport.
#include "wheelfix/analysis/elf_report.hpp"

#include "wheelfix/abi/demangle.hpp"
#include "wheelfix/analysis/abi_rules.hpp"
#include "wheelfix/analysis/torch_matrix.hpp"
#include "wheelfix/cuda/coverage.hpp"
#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/util/text.hpp"

#include <elf.h>

#include <algorithm>
#include <charconv>
#include <tuple>

namespace wheelfix::analysis {

namespace {

std::string type_name(std::uint16_t type) {
    switch (type) {
        case ET_REL: return "REL";
        case ET_EXEC: return "EXEC";
        case ET_DYN: return "DYN";
        case ET_CORE: return "CORE";
        default: return "type " + std::to_string(type);
    }
}

// "$ORIGIN/../../torch/lib" -> number of ".." components right after $ORIGIN.
int origin_climb(std::string_view path) {
    const auto rest = after_origin(path);
    if (!rest) return -1;
    int depth = 0, climb = 0;
    for (const auto& part : split_nonempty(*rest, '/')) {
        if (part == "..") --depth;
        else if (part != ".") ++depth;
        climb = std::min(climb, depth);
    }
    return -climb;
}

bool is_cuda_library(std::string_view name) {
    for (std::string_view prefix : {"libcuda", "libcublas", "libcufft", "libcurand", "libcusolver", "libcusparse",
                                    "libnccl", "libnvrtc", "libnvJitLink", "libcudnn", "libnvToolsExt", "libcupti",
                                    "libnvshmem", "libcufile"})
        if (name.starts_with(prefix)) return true;
    return false;
}

std::optional<int> cudart_major(const std::vector<std::string>& needed) {
    for (const auto& library : needed) {
        std::string_view name = library;
        if (!name.starts_with("libcudart.so.")) continue;
        name.remove_prefix(13);
        int major = 0;
        auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), major);
        if (ec == std::errc()) return major;
    }
    return std::nullopt;
}

// Which torch library a symbol most likely comes from, judged by its namespace
// and what the file links (the real resolution is `wheelfix check`).
std::string likely_torch_library(const std::string& demangled, const std::vector<std::string>& needed) {
    auto links = [&](std::string_view soname) { return std::find(needed.begin(), needed.end(), soname) != needed.end(); };
    auto first_linked = [&](std::initializer_list<std::string_view> candidates) -> std::string {
        for (auto candidate : candidates)
            if (links(candidate)) return std::string(candidate);
        return std::string(*candidates.begin());
    };
    auto mentions = [&](std::string_view scope) { return demangled.find(scope) != std::string::npos; };
    if (mentions("c10::cuda::")) return first_linked({"libc10_cuda.so"});
    if (mentions("at::cuda::") || mentions("torch::cuda::") || mentions("c10d::"))
        return first_linked({"libtorch_cuda.so", "libtorch.so"});
    if (mentions("c10::") && !mentions("at::") && !mentions("torch::")) return first_linked({"libc10.so"});
    return first_linked({"libtorch_cpu.so", "libtorch.so", "libtorch_python.so"});
}

std::vector<TorchImport> torch_imports(const elf::ElfFile& elf, const std::vector<std::string>& needed) {
    std::vector<TorchImport> imports;
    for (const auto& symbol : elf.dynamic_symbols()) {
        if (symbol.defined() || symbol.name.empty()) continue;
        if (!abi::is_torch_symbol(symbol.name)) continue;
        TorchImport import;
        import.mangled = std::string(symbol.name);
        import.demangled = abi::demangle(symbol.name);
        import.library = likely_torch_library(import.demangled, needed);
        imports.push_back(std::move(import));
    }
    std::sort(imports.begin(), imports.end(), [](const TorchImport& a, const TorchImport& b) {
        return std::tie(a.library, a.demangled) < std::tie(b.library, b.demangled);
    });
    return imports;
}

std::vector<cuda::FatbinEntry> fatbin_entries(const elf::ElfFile& elf) {
    std::vector<cuda::FatbinEntry> entries;
    for (const auto& section : elf.sections()) {
        if (section.name != ".nv_fatbin" || section.type == SHT_NOBITS) continue;
        auto found = cuda::parse_fatbin_section(elf.section_image(section), elf.present(), section.offset);
        entries.insert(entries.end(), found.begin(), found.end());
    }
    return entries;
}

std::vector<GpuSupport> blackwell_support(const std::vector<cuda::FatbinEntry>& entries) {
    std::vector<GpuSupport> support;
    if (entries.empty()) return support;
    for (auto sm : kBlackwellSms) {
        auto best = cuda::best_entry_for(entries, sm);
        support.push_back(best ? GpuSupport{sm, true, cuda::describe_entry(*best)} : GpuSupport{sm, false, {}});
    }
    return support;
}

void fill_linkage(ElfReport& report, const elf::ElfFile& elf, std::optional<int> directory_depth) {
    for (auto library : elf.needed()) report.needed.emplace_back(library);
    if (auto soname = elf.soname()) report.soname = std::string(*soname);
    if (auto rpath = elf.rpath()) report.rpath = std::string(*rpath);
    if (auto runpath = elf.runpath()) report.runpath = std::string(*runpath);
    const auto& effective = report.runpath ? report.runpath : report.rpath;
    if (effective)
        for (auto& entry : split_nonempty(*effective, ':'))
            report.search_path.push_back(classify_search_path(std::move(entry), directory_depth));
}

// CPython names extensions built against musl "*-linux-musl.so"; such files often
// have no NEEDED libc at all, so the name is the only trace of the libc.
bool named_for_musl(std::string_view name) { return name.find("-linux-musl") != std::string_view::npos; }

void fill_policy(ElfReport& report, const elf::ElfFile& elf) {
    report.needs = needs_of(elf);
    if (named_for_musl(report.name)) report.needs.links_musl = true;
    report.honest_tag = policy::honest_tag(report.needs, report.machine);
}

void fill_cuda_linkage(ElfReport& report) {
    report.cudart_major = cudart_major(report.needed);
    for (const auto& library : report.needed)
        if (is_cuda_library(library)) report.cuda_libraries.push_back(library);
}

void fill_fatbin(ElfReport& report, const elf::ElfFile& elf) {
    report.fatbin = fatbin_entries(elf);
    report.blackwell = blackwell_support(report.fatbin);
}

void fill_symbols(ElfReport& report, const elf::ElfFile& elf) {
    for (const auto& symbol : elf.dynamic_symbols()) {
        if (symbol.name.empty()) continue;
        ++(symbol.defined() ? report.defined_symbols : report.undefined_symbols);
    }
    report.torch_imports = torch_imports(elf, report.needed);
}

constexpr std::string_view kShimVersionPrefix = "WHEELFIX_TORCH_";

void fill_shim(ElfReport& report, const elf::ElfFile& elf) {
    for (const auto& definition : elf.version_defs())
        if (!definition.names.empty() && definition.names.front().starts_with(kShimVersionPrefix))
            report.shim_for_torch = std::string(definition.names.front().substr(kShimVersionPrefix.size()));
    if (report.shim_for_torch.empty()) return;
    for (const auto& symbol : elf.dynamic_symbols())
        if (symbol.defined() && symbol.version.starts_with(kShimVersionPrefix))
            report.shim_provides.push_back(abi::demangle(symbol.name));
    std::sort(report.shim_provides.begin(), report.shim_provides.end());
}

}  // namespace

SearchPathEntry classify_search_path(std::string path, std::optional<int> directory_depth) {
    SearchPathEntry entry;
    int climb = origin_climb(path);
    entry.absolute = climb < 0;
    entry.outside_wheel = climb >= 0 && directory_depth && climb > *directory_depth;
    entry.path = std::move(path);
    return entry;
}

void set_needed(ElfReport& report, std::vector<std::string> needed) {
    report.needed = std::move(needed);
    report.cuda_libraries.clear();
    fill_cuda_linkage(report);
}

ElfReport analyze_elf(std::string name, std::span<const std::uint8_t> bytes, std::optional<int> directory_depth,
                      const ByteRanges* present) {
    return analyze_elf(std::move(name), elf::ElfFile::parse(bytes, present), directory_depth);
}

ElfReport analyze_search(std::string name, const elf::ElfFile& elf, std::optional<int> directory_depth) {
    ElfReport report;
    report.name = std::move(name);
    report.size = elf.bytes().size();
    report.elf_class = elf.elf_class() == elf::Class::elf64 ? "ELF64" : "ELF32";
    report.endian = elf.endian() == elf::Endian::little ? "little" : "big";
    report.machine = policy::platform_arch(elf);
    report.type = type_name(elf.type());
    fill_linkage(report, elf, directory_depth);
    return report;
}

ElfReport analyze_linking(std::string name, const elf::ElfFile& elf, std::optional<int> directory_depth) {
    ElfReport report = analyze_search(std::move(name), elf, directory_depth);
    fill_policy(report, elf);
    fill_cuda_linkage(report);
    return report;
}

ElfReport analyze_elf(std::string name, const elf::ElfFile& elf, std::optional<int> directory_depth) {
    ElfReport report = analyze_linking(std::move(name), elf, directory_depth);
    fill_fatbin(report, elf);
    fill_symbols(report, elf);
    fill_shim(report, elf);
    return report;
}

bool links_torch_library(const ElfReport& report) {
    return std::any_of(report.needed.begin(), report.needed.end(), [](const std::string& library) {
        return library.starts_with("libc10") || library.starts_with("libtorch");
    });
}

bool uses_torch(const ElfReport& report) { return !report.torch_imports.empty() || links_torch_library(report); }

}  // namespace wheelfix::analysis
