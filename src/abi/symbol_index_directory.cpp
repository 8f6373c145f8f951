// load_index_from_directory: a torch package directory (…/site-packages/torch with
// lib/ and version.py), a site-packages directory holding torch/, or any directory
// of shared libraries. Each library is mapped read-only and parsed in place, so
// only the pages holding its headers, dynamic section and symbol tables are read.
// Files named like libraries that are not ELF (linker scripts) are skipped;
// symbolic links to a library the directory already holds are not indexed twice.
#include "symbol_index_internal.hpp"

#include "wheelfix/util/files.hpp"

#include "wheelfix/util/error.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace wheelfix::abi {

namespace {

namespace fs = std::filesystem;

struct TorchLayout {
    fs::path library_dir;
    fs::path version_file;  // may not exist
};

TorchLayout locate(const fs::path& path) {
    std::error_code error;
    if (fs::is_directory(path / "lib", error)) return {path / "lib", path / "version.py"};
    if (fs::is_directory(path / "torch" / "lib", error)) return {path / "torch" / "lib", path / "torch" / "version.py"};
    return {path, path / "version.py"};
}

// torch/version.py: "" when there is none; a FIFO or device there is refused
// (util/files.hpp), and so is a file over 1 MiB (torch's is a few hundred bytes).
std::string read_small_file(const fs::path& path) {
    std::error_code error;
    if (!fs::exists(path, error)) return {};
    return read_regular_file(path, 1 << 20);
}

LibraryExports read_library(const fs::path& path) {
    MappedFile file(path);
    try {
        return exports_of(path.filename().string(), elf::ElfFile::parse(file.bytes()));
    } catch (const elf::ElfError& error) {
        throw InputError(path.string(), std::string("invalid ELF: ") + error.what());
    }
}

bool is_elf_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    in.read(magic, 4);
    return in.gcount() == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

// Regular files named like libraries, and symbolic links whose target is not
// itself in the directory, sorted by name. A symbolic link that leads nowhere (or
// into a loop) is skipped with a note, not a refusal of the whole directory: a
// broken venv link must not stop `check`. Special files named like libraries
// (a FIFO libfoo.so) are skipped the same way, never opened.
std::vector<fs::path> library_files(const fs::path& dir, std::vector<std::string>& notes) {
    std::vector<fs::path> files;
    std::error_code error;
    const fs::path canonical_dir = fs::canonical(dir, error);
    for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
        const fs::directory_entry& entry = *it;
        const std::string name = entry.path().filename().string();
        if (!detail::looks_like_library(name)) continue;
        std::error_code entry_error;
        const fs::file_status status = entry.status(entry_error);
        if (entry_error || !fs::exists(status)) {
            notes.push_back("skipped " + printable(entry.path().string()) + ": a symbolic link that leads nowhere");
            continue;
        }
        if (!fs::is_regular_file(status)) {
            if (!fs::is_directory(status))
                notes.push_back("skipped " + printable(entry.path().string()) + ": not a regular file");
            continue;
        }
        if (entry.is_symlink(entry_error)) {
            const fs::path target = fs::canonical(entry.path(), entry_error);
            if (!entry_error && target.parent_path() == canonical_dir) continue;
        }
        if (is_elf_file(entry.path())) files.push_back(entry.path());
    }
    if (error) throw InputError(dir.string(), "cannot list: " + error.message());
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace

SymbolIndex load_index_from_directory(const fs::path& torch_dir, const IndexOptions& options) {
    const TorchLayout layout = locate(torch_dir);
    std::vector<detail::Candidate> candidates;
    std::vector<std::string> notes;
    for (const fs::path& file : library_files(layout.library_dir, notes))
        candidates.push_back({file.filename().string(), [file] { return read_library(file); },
                              detail::file_size_or_zero(file)});  // the work, for the order
    if (candidates.empty())
        throw InputError(torch_dir.string(), "no shared libraries (expected a torch directory with lib/)");
    SymbolIndex index;
    index.source = torch_dir.string();
    const detail::TorchVersion version = detail::parse_version_py(read_small_file(layout.version_file));
    index.torch_version = version.version;
    index.cuda_version = version.cuda;
    index.libraries = detail::read_libraries(candidates, options, torch_dir.string());
    index.notes = std::move(notes);
    return index;
}

}  // namespace wheelfix::abi
