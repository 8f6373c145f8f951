// The file-level ELF editor (contract in elf/file_editor.hpp).
#include "wheelfix/elf/file_editor.hpp"

#include "editor_internal.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/files.hpp"
#include "wheelfix/util/output_file.hpp"
#include "wheelfix/util/text.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <sstream>
#include <utility>

namespace wheelfix::elf {

namespace {

struct AbiName {
    std::uint8_t abi;
    const char* shown;                   // what --print-os-abi prints
    std::array<const char*, 3> accepted;  // what --set-os-abi takes (lower case)
};

constexpr std::array<AbiName, 12> kAbiNames{{
    {0, "System V", {"system v", "system-v", "sysv"}},
    {1, "HP-UX", {"hp-ux", nullptr, nullptr}},
    {2, "NetBSD", {"netbsd", nullptr, nullptr}},
    {3, "Linux", {"linux", "gnu", nullptr}},
    {4, "GNU Hurd", {"gnu hurd", "gnu-hurd", "hurd"}},
    {6, "Solaris", {"solaris", nullptr, nullptr}},
    {7, "AIX", {"aix", nullptr, nullptr}},
    {8, "IRIX", {"irix", nullptr, nullptr}},
    {9, "FreeBSD", {"freebsd", nullptr, nullptr}},
    {10, "Tru64", {"tru64", nullptr, nullptr}},
    {12, "OpenBSD", {"openbsd", nullptr, nullptr}},
    {13, "OpenVMS", {"openvms", nullptr, nullptr}},
}};

bool has_allowed_prefix(const std::string& dir, const std::vector<std::string>& prefixes) {
    return std::any_of(prefixes.begin(), prefixes.end(),
                       [&](const std::string& prefix) { return dir.starts_with(prefix); });
}

// The e_machine of an ELF file, or nullopt when it is missing or not ELF.
std::optional<std::uint16_t> machine_of(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::array<std::uint8_t, 20> header{};
    const ssize_t got = ::read(fd, header.data(), header.size());
    ::close(fd);
    if (got != static_cast<ssize_t>(header.size()) || !is_elf(header)) return std::nullopt;
    const bool big = header[EI_DATA] == ELFDATA2MSB;
    return static_cast<std::uint16_t>(big ? header[18] << 8 | header[19] : header[19] << 8 | header[18]);
}

// The request with the search path patchelf's --shrink-rpath / --add-rpath compute.
EditRequest resolved_request(const ElfFile& elf, const FileEdit& edit) {
    EditRequest request = edit.dynamic;
    const bool has_path = elf.has_dynamic() && (elf.runpath() || elf.rpath());
    if (edit.shrink_search_path && has_path)
        request.set_search_path = shrunk_search_path(elf, edit.allowed_prefixes);
    if (edit.append_search_path) {
        std::string value = search_path_of(elf);
        value += (value.empty() ? "" : ":") + *edit.append_search_path;
        request.set_search_path = value;
    }
    return request;
}

void write_edited(const std::filesystem::path& output, std::span<const std::uint8_t> original,
                  const ByteEdits& edits, const struct stat& input_status) {
    // In place (the input itself) or -o: replaced, as patchelf does; atomically.
    OutputFile out(output, Existing::replace);
    std::uint64_t at = 0;
    for (const ByteEdit& edit : edits) {
        out.write(original.subspan(at, edit.offset - at));
        out.write(edit.bytes);
        at = edit.offset + edit.length;
    }
    out.write(original.subspan(at));
    out.set_permissions(static_cast<std::filesystem::perms>(input_status.st_mode & 07777));
    out.commit();
    // The owner and group follow the input where we may set them (root, or our own
    // file); otherwise the new file is ours, as any rewritten file would be.
    if (input_status.st_uid != ::geteuid() || input_status.st_gid != ::getegid())
        (void)::chown(output.c_str(), input_status.st_uid, input_status.st_gid);
}

}  // namespace

std::string interpreter_of(const ElfFile& elf) {
    if (std::optional<std::string> path = editor::current_interpreter(elf)) return *path;
    throw EditError("cannot find section '.interp'. The input file is most likely statically linked");
}

std::string os_abi_name(std::uint8_t abi) {
    for (const AbiName& name : kAbiNames)
        if (name.abi == abi) return name.shown;
    char text[8];
    std::snprintf(text, sizeof text, "0x%02X", static_cast<unsigned>(abi));
    return text;
}

std::optional<std::uint8_t> os_abi_from_name(std::string name) {
    name = ascii_lower(trim(name));
    for (const AbiName& abi : kAbiNames)
        for (const char* accepted : abi.accepted)
            if (accepted && name == accepted) return abi.abi;
    return std::nullopt;
}

std::string search_path_of(const ElfFile& elf) {
    if (!elf.has_dynamic()) return {};
    if (const auto runpath = elf.runpath()) return std::string(*runpath);
    if (const auto rpath = elf.rpath()) return std::string(*rpath);
    return {};
}

std::optional<std::string> soname_of(const ElfFile& elf) {
    if (elf.type() != ET_DYN || !elf.has_dynamic()) return std::nullopt;
    const auto soname = elf.soname();
    if (!soname || soname->empty()) return std::nullopt;
    return std::string(*soname);
}

std::vector<std::string> needed_of(const ElfFile& elf) {
    std::vector<std::string> names;
    if (!elf.has_dynamic()) return names;
    for (std::string_view name : elf.needed()) names.emplace_back(name);
    return names;
}

char execstack_of(const ElfFile& elf) {
    for (const ProgramHeader& ph : elf.program_headers())
        if (ph.type == PT_GNU_STACK) return (ph.flags & PF_X) ? 'X' : '-';
    return '?';
}

std::string shrunk_search_path(const ElfFile& elf, const std::vector<std::string>& allowed_prefixes) {
    const std::vector<std::string> needed = needed_of(elf);
    std::vector<bool> found(needed.size(), false);
    std::vector<std::string> kept;
    // patchelf splits on ':' keeping empty parts out
    for (const std::string& dir : split_nonempty(search_path_of(elf), ':')) {
        if (dir.front() != '/') {
            kept.push_back(dir);
            continue;
        }
        if (!allowed_prefixes.empty() && !has_allowed_prefix(dir, allowed_prefixes)) continue;
        bool holds_one = false;
        for (std::size_t i = 0; i < needed.size(); ++i) {
            if (found[i]) continue;
            if (machine_of(dir + "/" + needed[i]) == elf.machine()) found[i] = holds_one = true;
        }
        if (holds_one) kept.push_back(dir);
    }
    return join(kept, ":");
}

SymbolRenames read_rename_map(const std::string& path, bool patchelf_quirks) {
    constexpr std::uint64_t kMaxMapSize = std::uint64_t(64) << 20;
    struct stat status {};
    if (::stat(path.c_str(), &status) != 0)
        throw EditError("Cannot open map file " + path + ": " + std::strerror(errno));  // patchelf adds strerror
    std::string text;
    try {
        text = read_regular_file(path, kMaxMapSize);
    } catch (const InputError&) {
        throw EditError("Cannot open map file " + path + ": not a regular file of at most 64 MiB");
    }
    SymbolRenames renames;
    std::set<std::string, std::less<>> seen;
    std::size_t line_number = 1;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string from, to;
        if (!(words >> from)) {
            if (patchelf_quirks) break;
            continue;
        }
        const std::string where = path + ":" + std::to_string(line_number) + ": ";
        if (!(words >> to)) throw EditError(where + "Map file line is missing the second element");
        if (!seen.insert(from).second) throw EditError(where + "Name '" + from + "' appears twice in the map file");
        if (from.find('@') != std::string::npos || to.find('@') != std::string::npos)
            throw EditError(where + "Name pair contains version tag: " + from + " " + to);
        ++line_number;
        renames.emplace_back(std::move(from), std::move(to));
    }
    return renames;
}

FileEditResult edit_elf_file(const std::filesystem::path& input, const std::filesystem::path& output,
                             const FileEdit& edit, bool always_write) {
    struct stat status {};
    if (::stat(input.c_str(), &status) != 0) throw InputError(input.string(), "cannot be read");
    MappedFile mapped(input);
    std::span<const std::uint8_t> image = mapped.bytes();
    if (!is_elf(image)) throw EditError("not an ELF executable");
    FileEditResult result;
    result.size_before = image.size();

    // Header edits first, on a copy only when there are any (they never move bytes).
    std::vector<std::uint8_t> headers_edited;
    const ElfFile original = ElfFile::parse(image);
    const HeaderPlan headers = plan_header_edits(original, edit.headers);
    if (!headers.edits.empty()) {
        headers_edited = apply_edits(image, headers.edits);
        image = headers_edited;
    }
    result.changes = headers.changes;

    const ElfFile elf = headers_edited.empty() ? original : ElfFile::parse(image);
    EditRequest request = resolved_request(elf, edit);
    request.add_program_header = headers.add_program_header;
    const EditPlan plan = plan_edits(elf, request);
    result.changes.insert(result.changes.end(), plan.changes.begin(), plan.changes.end());
    result.size_after = plan.edits.empty() ? image.size() : plan.new_size;
    if (result.changes.empty() && !always_write) return result;
    // A symlink named as the output is written through, as patchelf writes through it:
    // the file it points to is replaced, the link stays a link.
    std::error_code ignored;
    const std::filesystem::path target =
        std::filesystem::is_symlink(output, ignored) ? std::filesystem::canonical(output) : output;
    write_edited(target, image, plan.edits, status);
    result.written = true;
    return result;
}

}  // namespace wheelfix::elf
