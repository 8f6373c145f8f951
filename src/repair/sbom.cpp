// Package owners and the CycloneDX SBOM of a graft (repair/sbom.hpp has the contract).
#include "wheelfix/repair/sbom.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/json.hpp"
#include "wheelfix/util/process.hpp"
#include "wheelfix/util/text.hpp"
#include "wheelfix/wheel/filename.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

namespace wheelfix::repair {

namespace {

constexpr std::size_t kMaxOutput = 1 << 20;  // a batch of lookups; more is not a package manager's answer
// A package manager's batch of lookups takes well under a second; one that hangs
// (a locked database) leaves the owner unknown rather than the repair waiting.
constexpr std::chrono::seconds kQueryLimit{30};

// The first existing program of `candidates`, or "".
std::string program(std::initializer_list<const char*> candidates) {
    for (const char* candidate : candidates)
        if (::access(candidate, X_OK) == 0) return candidate;
    return {};
}

// What `argv` prints on stdout (at most kMaxOutput bytes) when it exits 0 (or
// `accepted_status`) within kQueryLimit; nullopt when it cannot run, fails or hangs.
// stderr goes to /dev/null; no shell is involved.
std::optional<std::string> output_of(const std::vector<std::string>& argv, int accepted_status = 0) {
    ProcessOptions options;
    options.limit = kQueryLimit;
    options.discard_stderr = true;
    options.max_output = kMaxOutput;
    ProcessResult result;
    try {
        result = run_process(argv, options);
    } catch (const InputError&) {
        return std::nullopt;
    }
    if (!result.exit_status || (*result.exit_status != 0 && *result.exit_status != accepted_status)) return std::nullopt;
    return std::move(result.output);
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// os-release's ID ("debian"), the purl namespace of a distribution's packages.
std::string distribution_id() {
    for (const char* path : {"/etc/os-release", "/usr/lib/os-release"}) {
        std::ifstream in(path);
        for (std::string line; in && std::getline(in, line) && line.size() < 1024;) {
            if (!line.starts_with("ID=")) continue;
            std::string id = line.substr(3);
            if (id.size() >= 2 && (id.front() == '"' || id.front() == '\'')) id = id.substr(1, id.size() - 2);
            return id;
        }
    }
    return {};
}

// One dpkg-query -S for every path ("libffi8:amd64: /usr/lib/..."; several owners are
// "a, b: path"; exit status 1 when some path has none) and one -W for the packages
// found: two processes per wheel, however many files it grafts.
std::map<std::string, PackageOwner> dpkg_owners(const std::string& dpkg_query, const std::vector<std::string>& paths) {
    std::vector<std::string> search{dpkg_query, "-S"};
    search.insert(search.end(), paths.begin(), paths.end());
    auto found = output_of(search, 1);
    std::map<std::string, PackageOwner> owners;
    if (!found) return owners;
    std::map<std::string, std::string> package_of;  // path -> package
    for (const auto& line : split(*found, '\n')) {
        const auto colon_space = line.find(": ");
        if (colon_space == std::string::npos || line.starts_with("diversion by")) continue;
        package_of.emplace(line.substr(colon_space + 2), line.substr(0, std::min(colon_space, line.find(", "))));
    }
    if (package_of.empty()) return owners;
    std::vector<std::string> query{dpkg_query, "-W", "-f=${binary:Package}\t${Package}\t${Version}\t${Architecture}\n"};
    std::set<std::string> packages;
    for (const auto& [path, package] : package_of)
        if (packages.insert(package).second) query.push_back(package);
    auto fields = output_of(query, 1);
    if (!fields) return owners;
    std::map<std::string, PackageOwner> by_package;
    const std::string distro = distribution_id();
    for (const auto& line : split(*fields, '\n')) {
        auto parts = split(line, '\t');
        if (parts.size() != 4 || parts[1].empty() || parts[2].empty()) continue;
        PackageOwner owner{"deb", distro, parts[1], parts[2], parts[3], {}};
        by_package.emplace(parts[0], owner);  // "libffi8:amd64", as -S names a multi-arch package
        by_package.emplace(parts[1], owner);  // "libffi8", as -S names the others
    }
    for (const auto& [path, package] : package_of)
        if (auto owner = by_package.find(package); owner != by_package.end()) owners.emplace(path, owner->second);
    return owners;
}

std::optional<PackageOwner> rpm_owner(const std::string& rpm, const std::string& path) {
    auto fields = output_of({rpm, "-qf", "--queryformat", "%{NAME}\t%{VERSION}-%{RELEASE}\t%{ARCH}\t%{EPOCH}\n", path});
    if (!fields) return std::nullopt;
    auto parts = split(first_line(*fields), '\t');
    if (parts.size() != 4 || parts[0].empty()) return std::nullopt;
    return PackageOwner{"rpm", distribution_id(), parts[0], parts[1], parts[2], parts[3] == "(none)" ? "" : parts[3]};
}

// "PATH is owned by zlib-1.3.1-r0": the version is the last two '-' parts.
std::optional<PackageOwner> apk_owner(const std::string& apk, const std::string& path) {
    auto found = output_of({apk, "info", "--who-owns", path});
    if (!found) return std::nullopt;
    const std::string line = first_line(*found);
    const auto by = line.rfind(" is owned by ");
    if (by == std::string::npos) return std::nullopt;
    const std::string package = line.substr(by + 13);
    const auto release = package.rfind('-');
    const auto version = release == std::string::npos || release == 0 ? std::string::npos : package.rfind('-', release - 1);
    if (version == std::string::npos || version == 0) return std::nullopt;
    auto arch = output_of({apk, "--print-arch"});
    return PackageOwner{"apk", distribution_id(), package.substr(0, version), package.substr(version + 1),
                        arch ? first_line(*arch) : "", {}};
}

// Percent-encoding as the purl spec asks of names, versions and qualifier values.
std::string purl_encoded(std::string_view text) {
    static const char digits[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : text) {
        const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                                c == '.' || c == '-' || c == '_' || c == '~';
        if (unreserved) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += digits[c >> 4];
            out += digits[c & 15];
        }
    }
    return out;
}

std::string generic_purl(const std::string& name, const std::string& sha256_hex) {
    return "pkg:generic/" + purl_encoded(name) + "?checksum=sha256:" + sha256_hex;
}

std::string pypi_purl(const std::string& name, const std::string& version) {
    std::string normalized = wheel::normalize_project_name(name);  // lower-case, runs of -_. as one '-'
    return "pkg:pypi/" + purl_encoded(normalized) + "@" + purl_encoded(version);
}

std::string component_purl(const GraftedFile& graft) {
    return graft.owner ? graft.owner->purl() : generic_purl(graft.needed_name, graft.sha256);
}

}  // namespace

std::string PackageOwner::purl() const {
    std::string text = "pkg:" + type + "/";
    if (!distro.empty()) text += purl_encoded(distro) + "/";
    text += purl_encoded(name) + "@" + purl_encoded(version);
    std::vector<std::string> qualifiers;  // sorted by key, as the spec's canonical form has them
    if (!arch.empty()) qualifiers.push_back("arch=" + purl_encoded(arch));
    if (!epoch.empty()) qualifiers.push_back("epoch=" + purl_encoded(epoch));
    for (std::size_t i = 0; i < qualifiers.size(); ++i) text += (i == 0 ? "?" : "&") + qualifiers[i];
    return text;
}

std::vector<std::optional<PackageOwner>> package_owners(const std::vector<std::filesystem::path>& files) {
    static const std::string dpkg_query = program({"/usr/bin/dpkg-query", "/bin/dpkg-query"});
    static const std::string rpm = program({"/usr/bin/rpm", "/bin/rpm"});
    static const std::string apk = program({"/sbin/apk", "/usr/bin/apk"});
    std::vector<std::vector<std::string>> spellings;  // per file: as found, then as resolved
    std::vector<std::string> all;
    for (const auto& file : files) {
        std::error_code error;
        std::vector<std::string> paths{file.string()};
        const auto canonical = std::filesystem::canonical(file, error);
        if (!error && canonical != file) paths.push_back(canonical.string());
        all.insert(all.end(), paths.begin(), paths.end());
        spellings.push_back(std::move(paths));
    }
    const auto debian = dpkg_query.empty() || all.empty() ? std::map<std::string, PackageOwner>{}
                                                          : dpkg_owners(dpkg_query, all);
    std::vector<std::optional<PackageOwner>> owners;
    for (const auto& paths : spellings) {
        std::optional<PackageOwner> owner;
        for (const auto& path : paths) {
            if (auto found = debian.find(path); found != debian.end()) owner = found->second;
            else if (!rpm.empty()) owner = rpm_owner(rpm, path);
            else if (!apk.empty()) owner = apk_owner(apk, path);
            if (owner) break;
        }
        owners.push_back(std::move(owner));
    }
    return owners;
}

std::string sbom_json(const std::string& name, const std::string& version, const std::vector<GraftedFile>& grafts) {
    const std::string wheel_ref = pypi_purl(name, version);
    std::map<std::string, const GraftedFile*> by_needed_name;
    for (const auto& graft : grafts) by_needed_name.emplace(graft.needed_name, &graft);
    // Who depends on whom: a needed_by entry naming another graft is that graft's NEEDED, any other a member's.
    std::map<std::string, std::set<std::string>> depends_on;  // bom-ref -> bom-refs
    depends_on[wheel_ref];
    for (const auto& graft : grafts) {
        depends_on[graft.member];
        for (const auto& who : graft.needed_by) {
            auto grafted = by_needed_name.find(who);
            depends_on[grafted == by_needed_name.end() ? wheel_ref : grafted->second->member].insert(graft.member);
        }
    }

    JsonWriter json;
    json.begin_object()
        .field("$schema", "http://cyclonedx.org/schema/bom-1.6.schema.json")
        .field("bomFormat", "CycloneDX")
        .field("specVersion", "1.6")
        .field("version", 1);
    json.key("metadata").begin_object();
    json.key("tools").begin_object().key("components").begin_array()
        .begin_object().field("type", "application").field("name", "wheelfix").end_object()
        .end_array().end_object();
    json.key("component").begin_object().field("type", "library").field("bom-ref", wheel_ref)
        .field("name", name).field("version", version).field("purl", wheel_ref).end_object();
    json.end_object();
    json.key("components").begin_array();
    for (const auto& graft : grafts) {
        json.begin_object().field("type", "library").field("bom-ref", graft.member);
        json.field("name", graft.owner ? graft.owner->name : graft.needed_name);
        if (graft.owner) json.field("version", graft.owner->version);
        json.field("purl", component_purl(graft));
        json.key("hashes").begin_array().begin_object().field("alg", "SHA-256").field("content", graft.sha256)
            .end_object().end_array();
        json.key("properties").begin_array();
        json.begin_object().field("name", "wheelfix:member").field("value", graft.member).end_object();
        json.begin_object().field("name", "wheelfix:needed-name").field("value", graft.needed_name).end_object();
        json.begin_object().field("name", "wheelfix:source").field("value", graft.source.string()).end_object();
        json.end_array().end_object();
    }
    json.end_array();
    json.key("dependencies").begin_array();
    for (const auto& [ref, targets] : depends_on) {
        json.begin_object().field("ref", ref).key("dependsOn").begin_array();
        for (const auto& target : targets) json.value(target);
        json.end_array().end_object();
    }
    json.end_array().end_object();
    return json.str();
}

}  // namespace wheelfix::repair
