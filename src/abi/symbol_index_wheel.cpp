// load_index_from_wheel: a torch wheel read in place. The libraries are the
// members under torch/lib/ (or, in a wheel without torch/lib/, every member named
// like a shared library); the version comes from torch/version.py. Each library
// member streams through a StreamedElf (elf/streamed_elf.hpp), on the threads the
// budget spares, largest first (read_libraries), so memory peaks at the largest
// kept set per thread, not at any library's size.
#include "symbol_index_internal.hpp"

#include "wheelfix/elf/streamed_elf.hpp"
#include "wheelfix/zip/seekable_member.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/sha256.hpp"
#include "wheelfix/util/text.hpp"
#include "wheelfix/zip/archive.hpp"

#include <fstream>
#include <set>

namespace wheelfix::abi {

namespace {

bool has_torch_lib(const zip::Archive& archive) {
    for (const zip::Member& member : archive.members())
        if (member.name.starts_with("torch/lib/")) return true;
    return false;
}

std::vector<const zip::Member*> library_members(const zip::Archive& archive) {
    const bool torch_layout = has_torch_lib(archive);
    std::vector<const zip::Member*> members;
    std::set<std::string> names;
    for (const zip::Member& member : archive.members()) {
        if (member.is_directory || member.is_symlink) continue;
        if (torch_layout && !member.name.starts_with("torch/lib/")) continue;
        if (torch_layout && member.name.find('/', 10) != std::string::npos) continue;  // torch/lib/libshm/…
        const std::string name = base_name(member.name);
        if (!detail::looks_like_library(name) || !names.insert(name).second) continue;
        members.push_back(&member);
    }
    return members;
}

detail::TorchVersion wheel_version(const zip::Archive& archive) {
    const zip::Member* member = archive.find("torch/version.py");
    if (member == nullptr || member->size > (1u << 20)) return {};
    const std::vector<std::uint8_t> bytes = archive.read(*member);
    return detail::parse_version_py(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// Inflates one member once (and the ranges its layout hid from the stream again);
// returns its exports (empty library when it is not ELF) and says in `read` what
// that cost. Members are read on several threads: this touches only its own `read`.
LibraryExports read_member(const zip::Archive& archive, const zip::Member& member, MemberRead& read) {
    const std::string where = archive.path().string();
    try {
        elf::StreamedElf streamed(member.size, elf::StreamedElf::Needs::dynamic_linking);
        const zip::SeekableMember seekable(archive, member,
                                           [&](std::span<const std::uint8_t> chunk) { streamed.consume(chunk); });
        read = {member.name, member.size, streamed.kept_bytes()};
        if (!streamed.is_elf()) return LibraryExports{base_name(member.name), {}, {}, {}, {}, {}};
        auto fetch = [&](const ByteRanges& ranges, const elf::FetchSink& sink) { seekable.read(ranges, sink); };
        return elf::read_streamed(streamed, fetch,
                                  [&](std::span<const std::uint8_t> image, const ByteRanges* present) {
                                      return exports_of(base_name(member.name), elf::ElfFile::parse(image, present));
                                  });
    } catch (const elf::ElfError& error) {
        throw InputError(where, member.name + ": " + error.what());
    }
}

// The SHA-256 of a whole file, hex, read in 1 MiB pieces.
std::string file_sha256(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path.string(), "cannot open");
    Sha256 hash;
    std::vector<char> buffer(1 << 20);
    while (in) {
        in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
        hash.update({reinterpret_cast<const std::uint8_t*>(buffer.data()), static_cast<std::size_t>(in.gcount())});
    }
    if (in.bad()) throw InputError(path.string(), "cannot read");
    return hex_digest(hash.digest());
}

}  // namespace

std::uint64_t WheelReadStats::bytes_inflated() const {
    std::uint64_t sum = 0;
    for (const MemberRead& read : members) sum += read.size;
    return sum;
}

std::uint64_t WheelReadStats::bytes_kept() const {
    std::uint64_t sum = 0;
    for (const MemberRead& read : members) sum += read.kept;
    return sum;
}

const MemberRead* WheelReadStats::largest_kept() const {
    const MemberRead* largest = nullptr;
    for (const MemberRead& read : members)
        if (largest == nullptr || read.kept > largest->kept) largest = &read;
    return largest;
}

SymbolIndex load_index_from_wheel(const std::filesystem::path& torch_wheel, const IndexOptions& options,
                                  WheelReadStats* stats) {
    const zip::Archive archive = zip::Archive::open(torch_wheel);
    const std::vector<const zip::Member*> members = library_members(archive);
    std::vector<MemberRead> reads(members.size());  // per candidate, for stats
    std::vector<detail::Candidate> candidates;
    for (std::size_t i = 0; i < members.size(); ++i)
        candidates.push_back({base_name(members[i]->name),
                              [&archive, member = members[i], &read = reads[i]] { return read_member(archive, *member, read); },
                              members[i]->size});
    SymbolIndex index;
    index.source = torch_wheel.string();
    const detail::TorchVersion version = wheel_version(archive);
    index.torch_version = version.version;
    index.cuda_version = version.cuda;
    // The wheel's own SHA-256 (index records it), hashed as one more task beside the
    // reads; weighed as 2/5 of its bytes, as SHA-256 runs ~2.5x faster than inflate.
    const detail::SideTask hash_wheel{[&] { index.source_sha256 = file_sha256(torch_wheel); },
                                      detail::file_size_or_zero(torch_wheel) / 5 * 2};
    for (LibraryExports& library :
         detail::read_libraries(candidates, options, torch_wheel.string(), options.hash_wheel ? &hash_wheel : nullptr)) {
        // In the order the libraries were taken (file names are unique among candidates).
        if (stats != nullptr)
            for (std::size_t i = 0; i < candidates.size(); ++i)
                if (candidates[i].file_name == library.file_name) stats->members.push_back(reads[i]);
        if (!library.symbols.empty() || !library.soname.empty() || !library.needed.empty())
            index.libraries.push_back(std::move(library));
    }
    if (candidates.empty()) throw InputError(torch_wheel.string(), "no shared libraries in this wheel");
    return index;
}

}  // namespace wheelfix::abi
