// resolve_needed (analysis/needed_resolution.hpp): ld.so's search order over the
// wheel's installed layout and the file system, then the classes.
#include "wheelfix/analysis/needed_resolution.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "wheelfix/analysis/abi_rules.hpp"
#include "wheelfix/elf/elf_file.hpp"
#include "wheelfix/policy/library_classes.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/text.hpp"

#include <elf.h>
#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace wheelfix::analysis {

namespace {

// One object that asks for libraries: a wheel member or a grafted library.
struct Requester {
    std::string label;
    bool in_wheel = false;
    std::string origin;  // its directory: installed path in the wheel, or a file system directory
    std::optional<std::string> rpath, runpath;
    std::string elf_class, machine;
    std::vector<std::string> needed;
};

struct SearchDir {
    bool in_wheel = false;
    std::string path;
    std::string via;
};

// "a/b/../c" inside the installed layout; nullopt when it climbs above the root.
std::optional<std::string> normalize_inside(std::string_view path) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (start <= path.size()) {
        auto slash = path.find('/', start);
        if (slash == std::string_view::npos) slash = path.size();
        auto part = path.substr(start, slash - start);
        if (part == "..") {
            if (parts.empty()) return std::nullopt;
            parts.pop_back();
        } else if (!part.empty() && part != ".") {
            parts.push_back(part);
        }
        start = slash + 1;
    }
    std::string out;
    for (auto part : parts) out += (out.empty() ? "" : "/") + std::string(part);
    return out;
}

// "<name>.libs/…": where auditwheel (and repair) put grafted libraries.
bool in_graft_directory(std::string_view installed) {
    const auto slash = installed.find('/');
    return slash != std::string_view::npos && installed.substr(0, slash).ends_with(".libs");
}

std::string_view parent_of(std::string_view path) {
    auto slash = path.rfind('/');
    return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}

// One RPATH/RUNPATH entry of `who` as a directory; nullopt (with a note) when it
// names nothing ld.so would search here.
std::optional<SearchDir> expand_entry(const Requester& who, const std::string& entry, const std::string& via,
                                      std::vector<std::string>& notes) {
    const auto rest = after_origin(entry);
    if (!rest && !entry.starts_with("/")) {
        if (!entry.empty()) notes.push_back(entry + ": relative " + via + " entry (relative to the working directory) not searched");
        return std::nullopt;
    }
    if (rest && !rest->empty() && rest->front() != '/') {
        notes.push_back(entry + ": " + via + " entry not searched");
        return std::nullopt;
    }
    if ((rest ? *rest : std::string_view(entry)).find('$') != std::string_view::npos) {
        notes.push_back(entry + ": " + via + " entry with an unknown $ token not searched");
        return std::nullopt;
    }
    if (!rest) return SearchDir{false, entry, via};
    if (!who.in_wheel) return SearchDir{false, who.origin + std::string(*rest), via};
    auto inside = normalize_inside(who.origin + std::string(*rest));
    if (!inside) return std::nullopt;  // above the platlib root: other installs, known by name
    return SearchDir{true, *inside, via};
}

// One dynamic string token ($NAME or ${NAME}) replaced everywhere in `entry`.
std::string replace_token(std::string entry, std::string_view name, std::string_view value) {
    for (const std::string& token : {"$" + std::string(name), "${" + std::string(name) + "}"}) {
        const bool braced = token.back() == '}';
        std::size_t at = 0;
        while ((at = entry.find(token, at)) != std::string::npos) {
            // "$LIBX" is not $LIB: an unbraced token ends where no identifier character follows.
            const auto end = at + token.size();
            if (!braced && end < entry.size() && (std::isalnum(static_cast<unsigned char>(entry[end])) || entry[end] == '_')) {
                at = end;
                continue;
            }
            entry.replace(at, token.size(), value);
            at += value.size();
        }
    }
    return entry;
}

// $LIB and $PLATFORM as glibc's ld.so expands them for an object of this class and
// machine (dst_lib, dst_platform); $ORIGIN is left to expand_entry.
std::string expand_lib_and_platform(const Requester& who, const std::string& entry, const std::filesystem::path& root) {
    if (entry.find('$') == std::string::npos) return entry;
    return replace_token(replace_token(entry, "LIB", dst_lib(who.elf_class, who.machine, root)), "PLATFORM",
                         dst_platform(who.machine));
}

void add_entries(const Requester& who, const std::string& value, const std::string& via, std::vector<SearchDir>& dirs,
                 std::vector<std::string>& notes, const std::filesystem::path& root) {
    for (const auto& entry : split(value, ':'))
        if (auto dir = expand_entry(who, expand_lib_and_platform(who, entry, root), via, notes)) dirs.push_back(std::move(*dir));
}

// What probing a file system candidate found.
struct Probe {
    enum class Kind { absent, skipped, not_elf, elf } kind = Kind::absent;
    std::string why;
    std::string elf_class, machine;
};

std::string machine_of(std::uint16_t machine, elf::Class cls, elf::Endian endian) {
    return machine == EM_ARM ? std::string("armv7l") : elf::machine_name(machine, cls, endian);
}

Probe probe_file(const std::string& path) {
    Probe probe;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return probe;
        probe.kind = Probe::Kind::skipped;
        probe.why = errno == ELOOP ? "symlink loop" : errno == EACCES ? "cannot be read (permission denied)" : std::strerror(errno);
        return probe;
    }
    struct stat st{};
    unsigned char header[64] = {};
    ssize_t got = -1;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) got = ::pread(fd, header, sizeof header, 0);
    int read_errno = errno;
    ::close(fd);
    if (!S_ISREG(st.st_mode)) {
        probe.kind = Probe::Kind::skipped;
        probe.why = S_ISDIR(st.st_mode) ? "a directory" : "not a regular file";
        return probe;
    }
    if (got < 0) {
        probe.kind = Probe::Kind::skipped;
        probe.why = std::string("cannot be read (") + std::strerror(read_errno) + ")";
        return probe;
    }
    if (got < 20 || std::memcmp(header, ELFMAG, SELFMAG) != 0 || (header[EI_CLASS] != ELFCLASS32 && header[EI_CLASS] != ELFCLASS64) ||
        (header[EI_DATA] != ELFDATA2LSB && header[EI_DATA] != ELFDATA2MSB)) {
        probe.kind = Probe::Kind::not_elf;
        probe.why = "not an ELF file (ld.so stops here: invalid ELF header)";
        return probe;
    }
    auto cls = header[EI_CLASS] == ELFCLASS64 ? elf::Class::elf64 : elf::Class::elf32;
    auto endian = header[EI_DATA] == ELFDATA2LSB ? elf::Endian::little : elf::Endian::big;
    std::uint16_t machine = endian == elf::Endian::little ? std::uint16_t(header[18] | (header[19] << 8))
                                                          : std::uint16_t((header[18] << 8) | header[19]);
    probe.kind = Probe::Kind::elf;
    probe.elf_class = cls == elf::Class::elf64 ? "ELF64" : "ELF32";
    probe.machine = machine_of(machine, cls, endian);
    return probe;
}

std::string identity(const std::string& elf_class, const std::string& machine) {
    return machine + " " + elf_class;
}

// `source`: an ElfReport or a GraftedLibrary, which name the same dynamic facts.
template <typename Source>
Requester requester(const std::string& label, bool in_wheel, std::string origin, const Source& source) {
    return {label, in_wheel, std::move(origin), source.rpath, source.runpath, source.elf_class, source.machine, source.needed};
}

class Resolver {
public:
    Resolver(const std::vector<WheelElf>& elves, const std::vector<std::string>& other_installed, const SearchContext& context)
        : context_(context), conf_dirs_(context.wheel_only ? std::vector<std::string>{} : read_ld_so_conf(context.root)) {
        for (const auto& elf : elves)
            if (!elf.installed.empty()) members_.emplace(elf.installed, &elf);
        others_.insert(other_installed.begin(), other_installed.end());
    }

    NeededResolution run(const std::vector<WheelElf>& elves) {
        NeededResolution out;
        for (const auto& elf : elves)
            out.members.push_back(resolve_object(requester(elf.member, !elf.installed.empty(),
                                                           std::string(parent_of(elf.installed)), *elf.report),
                                                 {}, out));
        while (!pending_.empty()) {
            auto [index, chain] = std::move(pending_.front());
            pending_.pop_front();
            const auto& graft = out.grafts[index];
            out.graft_needs[index] =
                resolve_object(requester(graft.needed_name, false, graft.path.parent_path().string(), graft), chain, out);
        }
        return out;
    }

private:
    using Chain = std::vector<Requester>;

    ElfNeeds resolve_object(const Requester& who, const Chain& loaders, NeededResolution& out) {
        ElfNeeds result{who.label, {}};
        Chain chain = loaders;
        chain.push_back(who);
        std::vector<std::string> notes;
        auto dirs = search_dirs(who, loaders, notes);
        for (const auto& name : who.needed) {
            auto need = search(who, name, dirs);
            need.skipped.insert(need.skipped.begin(), notes.begin(), notes.end());
            classify(need, who, chain, out);
            result.needs.push_back(std::move(need));
        }
        return result;
    }

    std::vector<SearchDir> search_dirs(const Requester& who, const Chain& loaders, std::vector<std::string>& notes) const {
        std::vector<SearchDir> dirs;
        if (!who.runpath) {
            if (who.rpath) add_entries(who, *who.rpath, "RPATH", dirs, notes, context_.root);
            for (auto it = loaders.rbegin(); it != loaders.rend(); ++it)
                if (!it->runpath && it->rpath) add_entries(*it, *it->rpath, "RPATH of " + it->label, dirs, notes, context_.root);
        }
        for (const auto& path : context_.ldpaths)
            if (!path.empty()) dirs.push_back({false, path, "--ldpaths"});
        if (who.runpath) add_entries(who, *who.runpath, "RUNPATH", dirs, notes, context_.root);
        if (context_.wheel_only) {
            std::erase_if(dirs, [](const SearchDir& dir) { return !dir.in_wheel; });
            return dirs;
        }
        for (const auto& dir : conf_dirs_) dirs.push_back({false, under_root(dir), "ld.so.conf"});
        for (const auto& dir : default_directories(who.elf_class, who.machine)) dirs.push_back({false, under_root(dir), "default"});
        return dirs;
    }

    std::string under_root(const std::string& dir) const {
        if (context_.root.empty() || context_.root == "/") return dir;
        return (context_.root / std::filesystem::path(dir).relative_path()).string();
    }

    ResolvedNeed search(const Requester& who, const std::string& name, const std::vector<SearchDir>& dirs) {
        ResolvedNeed need;
        need.name = name;
        const std::string wanted = identity(who.elf_class, who.machine);
        if (name.find('/') != std::string::npos) {
            if (context_.wheel_only) return need;
            if (name.front() == '/') try_file(need, name, "path", wanted);
            else need.problem = "a relative path in NEEDED (resolved against the working directory)";
            return need;
        }
        for (const auto& dir : dirs) {
            if (dir.in_wheel) {
                if (try_member(need, dir, name, wanted)) return need;
            } else if (try_file(need, dir.path + "/" + name, dir.via, wanted)) {
                return need;
            }
            if (!need.problem.empty()) return need;
        }
        return need;
    }

    bool try_member(ResolvedNeed& need, const SearchDir& dir, const std::string& name, const std::string& wanted) {
        std::string path = dir.path.empty() ? name : dir.path + "/" + name;
        if (auto member = members_.find(path); member != members_.end()) {
            const auto& report = *member->second->report;
            if (identity(report.elf_class, report.machine) != wanted) {
                need.skipped.push_back(path + " (in the wheel): " + identity(report.elf_class, report.machine) + ", not " + wanted);
                return false;
            }
            need.library_class = LibraryClass::in_wheel;
            need.location = path;
            need.via = dir.via;
            return true;
        }
        if (others_.contains(path)) need.problem = path + " (in the wheel) is not an ELF file (ld.so stops here: invalid ELF header)";
        return false;
    }

    bool try_file(ResolvedNeed& need, const std::string& path, const std::string& via, const std::string& wanted) {
        auto probe = probe_file(path);
        switch (probe.kind) {
            case Probe::Kind::absent: return false;
            case Probe::Kind::skipped: need.skipped.push_back(path + ": " + probe.why); return false;
            case Probe::Kind::not_elf: need.problem = path + " is " + probe.why; need.location = path; return false;
            case Probe::Kind::elf: break;
        }
        if (identity(probe.elf_class, probe.machine) != wanted) {
            need.skipped.push_back(path + ": " + identity(probe.elf_class, probe.machine) + ", not " + wanted);
            return false;
        }
        need.library_class = LibraryClass::graft;  // decided by classify()
        need.location = path;
        need.via = via;
        return true;
    }

    void classify(ResolvedNeed& need, const Requester& who, const Chain& chain, NeededResolution& out) {
        if (need.library_class == LibraryClass::in_wheel) return;
        bool found = !need.location.empty() && need.problem.empty();
        if (policy::matches_soname_glob(context_.exclude, need.name)) {
            need.library_class = LibraryClass::excluded;
            return;
        }
        auto named = policy::classify_name(policy::library_classes(), need.name, context_.musl);
        switch (named.named) {
            case policy::NamedClass::system: need.library_class = LibraryClass::system; return;
            case policy::NamedClass::driver: need.library_class = LibraryClass::driver; return;
            case policy::NamedClass::python: need.library_class = LibraryClass::python; return;
            case policy::NamedClass::torch:
                need.library_class = LibraryClass::torch;
                need.distribution = policy::distribution(*named.rule, context_.cuda_major);
                return;
            case policy::NamedClass::nvidia:
                need.library_class = LibraryClass::nvidia;
                need.distribution = policy::distribution(*named.rule, cuda_major_of(need.name));
                return;
            case policy::NamedClass::none: break;
        }
        if (!found && shipped_elsewhere_in_wheel(need)) return;
        if (!found) {
            need.library_class = LibraryClass::missing;
            if (need.problem.empty()) {
                std::vector<std::string> passed;
                for (const auto& skip : need.skipped)
                    if (skip.starts_with("/") && passed.size() < 3) passed.push_back(skip);
                need.problem = passed.empty() ? "not found" : "not found; passed over " + join(passed, ", ");
            }
            return;
        }
        need.library_class = LibraryClass::graft;
        take_graft(need, who, chain, out);
    }

    // A member the search path does not reach, that the package loads first (the
    // header's in-wheel via "import").
    bool shipped_elsewhere_in_wheel(ResolvedNeed& need) const {
        for (const auto& [path, elf] : members_) {
            if (in_graft_directory(path)) continue;
            const auto& soname = elf->report->soname;
            if (base_name(path) != need.name && !(soname && *soname == need.name)) continue;
            need.library_class = LibraryClass::in_wheel;
            need.location = path;
            need.via = "import (loaded by the package first; not on the search path)";
            need.problem.clear();
            return true;
        }
        return false;
    }

    std::optional<int> cuda_major_of(const std::string& name) const {
        // libcudart.so.13 -> 13; else the wheel's
        const auto dot = name.rfind(".so.");
        const std::string tail = dot == std::string::npos ? "" : name.substr(dot + 4, name.find('.', dot + 4) - (dot + 4));
        if (!tail.empty() && tail.size() <= 3 && std::all_of(tail.begin(), tail.end(), ::isdigit))
            if (const int major = std::stoi(tail); major >= 10 && major <= 99) return major;
        return context_.cuda_major;
    }

    void take_graft(ResolvedNeed& need, const Requester& who, const Chain& chain, NeededResolution& out) {
        if (auto known = graft_index_.find(need.name); known != graft_index_.end()) {
            auto& graft = out.grafts[known->second];
            if (std::find(graft.needed_by.begin(), graft.needed_by.end(), who.label) == graft.needed_by.end())
                graft.needed_by.push_back(who.label);
            return;
        }
        GraftedLibrary graft;
        graft.needed_name = need.name;
        graft.path = need.location;
        graft.needed_by.push_back(who.label);
        try {
            MappedFile file(graft.path);
            if (file.bytes().size() > kMaxGraftBytes) throw elf::ElfError("larger than 256 MiB, the most repair grafts");
            auto elf = elf::ElfFile::parse(file.bytes());
            if (auto soname = elf.soname()) graft.soname = std::string(*soname);
            if (auto rpath = elf.rpath()) graft.rpath = std::string(*rpath);
            if (auto runpath = elf.runpath()) graft.runpath = std::string(*runpath);
            for (auto name : elf.needed()) graft.needed.emplace_back(name);
            graft.elf_class = elf.elf_class() == elf::Class::elf64 ? "ELF64" : "ELF32";
            graft.machine = machine_of(elf.machine(), elf.elf_class(), elf.endian());
            graft.needs = needs_of(elf);
        } catch (const std::exception& error) {
            need.library_class = LibraryClass::missing;
            need.problem = need.location + ": cannot be read as a library (" + error.what() + ")";
            return;
        }
        graft_index_.emplace(need.name, out.grafts.size());
        pending_.emplace_back(out.grafts.size(), chain);
        out.grafts.push_back(std::move(graft));
        out.graft_needs.emplace_back();
    }

    const SearchContext& context_;
    std::vector<std::string> conf_dirs_;
    std::map<std::string, const WheelElf*> members_;
    std::set<std::string> others_;
    std::map<std::string, std::size_t> graft_index_;
    std::deque<std::pair<std::size_t, Chain>> pending_;
};

constexpr int kMaxIncludeDepth = 8;

void parse_conf(std::string_view text, const std::filesystem::path& root, const std::filesystem::path& directory,
                int depth, std::set<std::string>& seen, std::vector<std::string>& dirs);

void include_glob(const std::string& pattern, const std::filesystem::path& root, const std::filesystem::path& directory,
                  int depth, std::set<std::string>& seen, std::vector<std::string>& dirs) {
    std::filesystem::path system_pattern = pattern.starts_with('/') ? std::filesystem::path(pattern) : directory / pattern;
    std::string rooted = (root / system_pattern.relative_path()).string();
    glob_t found{};
    if (::glob(rooted.c_str(), 0, nullptr, &found) == 0) {
        for (std::size_t i = 0; i < found.gl_pathc; ++i) {
            std::filesystem::path file = found.gl_pathv[i];
            std::error_code ec;
            auto canonical = std::filesystem::weakly_canonical(file, ec).string();
            if (!seen.insert(canonical).second || !std::filesystem::is_regular_file(file, ec)) continue;
            std::ifstream in(file);
            if (!in) continue;
            std::ostringstream text;
            text << in.rdbuf();
            auto relative = std::filesystem::relative(file, root, ec);
            auto system_dir = (std::filesystem::path("/") / relative).parent_path();
            parse_conf(text.str(), root, system_dir, depth + 1, seen, dirs);
        }
    }
    ::globfree(&found);
}

void parse_conf(std::string_view text, const std::filesystem::path& root, const std::filesystem::path& directory,
                int depth, std::set<std::string>& seen, std::vector<std::string>& dirs) {
    if (depth > kMaxIncludeDepth) return;
    for (std::string line : split(text, '\n')) {
        if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
        std::replace_if(line.begin(), line.end(), [](char c) { return c == '\t' || c == '\r' || c == ':' || c == ','; }, ' ');
        std::vector<std::string> words = split_nonempty(line, ' ');
        if (words.empty()) continue;
        if (words[0] == "include") {
            for (std::size_t i = 1; i < words.size(); ++i) include_glob(words[i], root, directory, depth, seen, dirs);
        } else if (words[0] != "hwcap") {  // hwcap lines are ignored
            for (auto& dir : words) {
                while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
                if (dir.starts_with('/') && std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
            }
        }
    }
}

}  // namespace

const char* library_class_name(LibraryClass library_class) {
    switch (library_class) {
        case LibraryClass::in_wheel: return "in-wheel";
        case LibraryClass::excluded: return "excluded";
        case LibraryClass::system: return "system";
        case LibraryClass::driver: return "driver";
        case LibraryClass::python: return "libpython";
        case LibraryClass::torch: return "torch";
        case LibraryClass::nvidia: return "nvidia";
        case LibraryClass::graft: return "graft";
        case LibraryClass::missing: return "missing";
    }
    return "missing";
}

std::optional<std::string> installed_path(std::string_view member) {
    auto slash = member.find('/');
    if (slash == std::string_view::npos) return std::string(member);
    auto top = member.substr(0, slash);
    if (!top.ends_with(".data")) return std::string(member);
    auto rest = member.substr(slash + 1);
    for (std::string_view scheme : {"platlib/", "purelib/"})
        if (rest.starts_with(scheme)) return std::string(rest.substr(scheme.size()));
    return std::nullopt;
}

std::vector<std::string> read_ld_so_conf(const std::filesystem::path& root) {
    std::set<std::string> seen;
    std::vector<std::string> dirs;
    include_glob("/etc/ld.so.conf", root, "/etc", -1, seen, dirs);  // the top file, read as an include at depth 0
    return dirs;
}

namespace {

// Debian's multiarch triplet for the class and machine; nullptr when it has none.
const std::string* multiarch_triplet(std::string_view elf_class, std::string_view machine) {
    static const std::map<std::string, std::string, std::less<>> triplets = {
        {"x86_64 ELF64", "x86_64-linux-gnu"},       {"i686 ELF32", "i386-linux-gnu"},
        {"aarch64 ELF64", "aarch64-linux-gnu"},     {"armv7l ELF32", "arm-linux-gnueabihf"},
        {"ppc64le ELF64", "powerpc64le-linux-gnu"}, {"ppc64 ELF64", "powerpc64-linux-gnu"},
        {"s390x ELF64", "s390x-linux-gnu"},         {"riscv64 ELF64", "riscv64-linux-gnu"},
        {"loongarch64 ELF64", "loongarch64-linux-gnu"}, {"mips64 ELF64", "mips64el-linux-gnuabi64"},
    };
    const auto it = triplets.find(std::string(machine) + " " + std::string(elf_class));
    return it == triplets.end() ? nullptr : &it->second;
}

}  // namespace

std::string dst_lib(std::string_view elf_class, std::string_view machine, const std::filesystem::path& root) {
    std::error_code ignored;
    if (const std::string* triplet = multiarch_triplet(elf_class, machine))
        if (std::filesystem::is_directory(root / "lib" / *triplet, ignored) ||
            std::filesystem::is_directory(root / "usr/lib" / *triplet, ignored))
            return "lib/" + *triplet;
    const std::string wide = elf_class == "ELF64" ? "lib64" : "lib32";
    if (std::filesystem::is_directory(root / wide, ignored) && !std::filesystem::is_symlink(root / wide, ignored)) return wide;
    return "lib";
}

namespace {

#if defined(__x86_64__)
// glibc's ld.so (sysdeps/x86/cpu-features.c, init_cpu_features) replaces the
// kernel's AT_PLATFORM "x86_64" on Intel CPUs: "xeon_phi" with AVX512CD, ER and PF
// usable, else "haswell" with AVX2, FMA, BMI1, BMI2, LZCNT, MOVBE and POPCNT usable.
// "Usable" includes the OS saving the vector state (XCR0), as glibc requires.
std::string host_x86_64_platform() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return "x86_64";
    const unsigned max_leaf = eax;
    const bool intel = ebx == 0x756e6547 && edx == 0x49656e69 && ecx == 0x6c65746e;  // "GenuineIntel"
    if (!intel || max_leaf < 7) return "x86_64";
    __get_cpuid(1, &eax, &ebx, &ecx, &edx);
    const unsigned leaf1_ecx = ecx;
    const auto bit = [](unsigned word, int n) { return ((word >> n) & 1u) != 0; };
    unsigned long long xcr0 = 0;
    if (bit(leaf1_ecx, 27)) {  // OSXSAVE: XGETBV may be executed
        unsigned lo = 0, hi = 0;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
    }
    const bool ymm = (xcr0 & 0x6) == 0x6;            // SSE and AVX state
    const bool zmm = ymm && (xcr0 & 0xe0) == 0xe0;   // opmask and ZMM state
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    const unsigned leaf7_ebx = ebx;
    unsigned ext_ecx = 0;
    if (__get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx)) ext_ecx = ecx;
    if (zmm && bit(leaf7_ebx, 28) && bit(leaf7_ebx, 27) && bit(leaf7_ebx, 26)) return "xeon_phi";
    const bool haswell = ymm && bit(leaf7_ebx, 5) /* AVX2 */ && bit(leaf1_ecx, 12) /* FMA */ &&
                         bit(leaf7_ebx, 3) /* BMI1 */ && bit(leaf7_ebx, 8) /* BMI2 */ &&
                         bit(ext_ecx, 5) /* LZCNT */ && bit(leaf1_ecx, 22) /* MOVBE */ && bit(leaf1_ecx, 23) /* POPCNT */;
    return haswell ? "haswell" : "x86_64";
}
#endif

}  // namespace

std::string dst_platform(std::string_view machine) {
#if defined(__x86_64__)
    // The libraries are looked up on this machine, for its own ld.so: an x86-64
    // object's $PLATFORM is what this host's glibc makes of its CPU.
    if (machine == "x86_64") {
        static const std::string host = host_x86_64_platform();
        return host;
    }
#endif
    // AT_PLATFORM as the kernel reports it; for the other machines wheels target it is the machine name.
    return std::string(machine);
}

std::vector<std::string> default_directories(std::string_view elf_class, std::string_view machine) {
    std::vector<std::string> dirs;
    if (const std::string* triplet = multiarch_triplet(elf_class, machine)) {
        dirs.push_back("/lib/" + *triplet);
        dirs.push_back("/usr/lib/" + *triplet);
    }
    if (elf_class == "ELF64") {
        dirs.push_back("/lib64");
        dirs.push_back("/usr/lib64");
    } else {
        dirs.push_back("/lib32");
        dirs.push_back("/usr/lib32");
    }
    dirs.push_back("/lib");
    dirs.push_back("/usr/lib");
    return dirs;
}

std::vector<NeededResolution::Outside> NeededResolution::outside_wheel() const {
    std::vector<Outside> out;
    for (const auto* objects : {&members, &graft_needs})
        for (const ElfNeeds& object : *objects)
            for (const auto& need : object.needs) {
                if (need.library_class != LibraryClass::graft && need.library_class != LibraryClass::missing) continue;
                auto it = std::find_if(out.begin(), out.end(), [&](const Outside& seen) {
                    return seen.name == need.name && seen.library_class == need.library_class;
                });
                if (it == out.end())
                    it = out.insert(out.end(), {need.name, need.library_class, need.location, need.problem, {}});
                if (std::find(it->needed_by.begin(), it->needed_by.end(), object.name) == it->needed_by.end())
                    it->needed_by.push_back(object.name);
            }
    return out;
}

std::vector<NeededResolution::Missing> NeededResolution::missing() const {
    auto out = outside_wheel();
    std::erase_if(out, [](const Outside& library) { return library.library_class != LibraryClass::missing; });
    return out;
}

std::vector<NeededResolution::Provided> NeededResolution::provided_beside() const {
    std::vector<Provided> providers;
    auto add = [&](const ResolvedNeed& need) {
        std::string provider;
        if (need.library_class == LibraryClass::driver) provider = "the GPU driver";
        else if (need.library_class == LibraryClass::torch || need.library_class == LibraryClass::nvidia)
            provider = need.distribution.empty() ? library_class_name(need.library_class) : need.distribution;
        else return;
        auto it = std::find_if(providers.begin(), providers.end(), [&](const Provided& p) { return p.provider == provider; });
        if (it == providers.end()) it = providers.insert(providers.end(), {provider, {}});
        if (std::find(it->libraries.begin(), it->libraries.end(), need.name) == it->libraries.end())
            it->libraries.push_back(need.name);
    };
    for (const auto& object : members)
        for (const auto& need : object.needs) add(need);
    return providers;
}

std::vector<std::string> NeededResolution::names_of(LibraryClass library_class) const {
    std::set<std::string> names;
    for (const auto* objects : {&members, &graft_needs})
        for (const ElfNeeds& object : *objects)
            for (const auto& need : object.needs)
                if (need.library_class == library_class) names.insert(need.name);
    return {names.begin(), names.end()};
}

NeededResolution resolve_needed(const std::vector<WheelElf>& elves, const std::vector<std::string>& other_installed,
                                const SearchContext& context) {
    Resolver resolver(elves, other_installed, context);
    return resolver.run(elves);
}

}  // namespace wheelfix::analysis
