// read_loader_view: a library member read as far as the loader's view of it needs
// (loader_view.hpp has the contract).
#include "wheelfix/analysis/loader_view.hpp"

#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/parallel_tasks.hpp"
#include "wheelfix/util/progress.hpp"
#include "wheelfix/zip/far_read.hpp"
#include "wheelfix/zip/seekable_member.hpp"

#include <numeric>
#include <optional>

namespace wheelfix::analysis {

namespace {

// When a member being streamed has given the loader's view of it (kStopEarlyFrom):
// tried at the first MiB, then each time the stream passes the end of what the last
// try found missing; given up when that lay behind the stream (it was not kept: the
// member is read to the end and fetched again).
class EarlyStop {
public:
    EarlyStop(std::uint64_t size, std::atomic<int>& tail_reads_left)
        : size_(size), trying_(size >= kStopEarlyFrom), tail_reads_left_(tail_reads_left) {}

    bool due(std::uint64_t chunk) {
        position_ += chunk;
        return trying_ && position_ >= next_try_ && position_ < size_;
    }
    void missing(const BytesNotKept& missing, elf::StreamedElf& streamed) {
        if (missing.begin() < position_ || missing.end() <= missing.begin()) {
            trying_ = false;
            return;
        }
        streamed.stream().want(missing.begin(), missing.end() - missing.begin());
        next_try_ = missing.end();
    }
    void give_up() { trying_ = false; }
    // Whether what the last try found missing is worth reading from the member's end
    // for (zip/far_read.hpp): kTailFrom bytes or more ahead of the stream and within
    // the far reader's ring of the end, once a member and at most kMaxTailReads times
    // a wheel (each costs a bounded few tenths of a second, whatever the bytes).
    bool tail_first(const BytesNotKept& missing) {
        if (tail_tried_ || missing.begin() < position_ || missing.begin() - position_ < kTailFrom ||
            size_ - std::min(size_, missing.begin()) > zip::FarReader::kRing)
            return false;
        tail_tried_ = true;
        return tail_reads_left_.fetch_sub(1) > 0;
    }

private:
    std::uint64_t size_;
    bool trying_;
    std::atomic<int>& tail_reads_left_;
    bool tail_tried_ = false;
    std::uint64_t position_ = 0;
    std::uint64_t next_try_ = std::uint64_t(1) << 20;
};

struct EnoughRead {};

// After the whole member streamed past: what the parse still lacks fetched again
// (elf::read_streamed); a layout it gives up on is fetched whole into the image.
void complete(elf::StreamedElf& streamed, const zip::SeekableMember& seekable) {
    auto fetch = [&](const ByteRanges& ranges, const elf::FetchSink& sink) { seekable.read(ranges, sink); };
    const bool parsed_kept = elf::read_streamed(streamed, fetch, [](std::span<const std::uint8_t> image, const ByteRanges* present) {
        elf::ElfFile::parse(image, present);
        return present != nullptr;
    });
    if (parsed_kept) return;
    ByteRanges everything;
    everything.add(0, streamed.size());
    fetch(everything, [&](std::span<const std::uint8_t> chunk, std::uint64_t at) { streamed.fill(at, chunk); });
}

}  // namespace

elf::ElfFile LoaderView::parse() const {
    return stopped_early ? elf::ElfFile::parse_as_loader(bytes->image(), &bytes->kept()) : bytes->parse();
}

LoaderView read_loader_view(const zip::Archive& archive, const zip::Member& member, const std::string& wheel_label,
                            std::atomic<int>& tail_reads_left) {
    LoaderView view{std::make_unique<elf::StreamedElf>(member.size, elf::StreamedElf::Needs::dynamic_linking), false};
    elf::StreamedElf& streamed = *view.bytes;
    EarlyStop stop(member.size, tail_reads_left);
    std::optional<zip::SeekableMember> seekable;
    try {
        seekable.emplace(archive, member, [&](std::span<const std::uint8_t> chunk) {
            streamed.consume(chunk);
            if (!stop.due(chunk.size())) return;
            if (!streamed.is_elf()) return stop.give_up();
            for (;;) {
                try {
                    elf::ElfFile::parse_as_loader(streamed.image(), &streamed.kept());
                } catch (const BytesNotKept& missing) {
                    if (stop.tail_first(missing))
                        if (const auto tail = zip::FarReader::open_confirmed(archive, member, missing.begin())) {
                            ByteRanges to_end;
                            to_end.add(missing.begin(), member.size);
                            tail->read(to_end, [&](std::span<const std::uint8_t> bytes, std::uint64_t at) { streamed.fill(at, bytes); });
                            continue;  // and try again with the end in
                        }
                    return stop.missing(missing, streamed);
                } catch (const elf::ElfError&) {
                    return stop.give_up();  // the whole file's parse says what is wrong
                }
                throw EnoughRead{};
            }
        });
    } catch (const EnoughRead&) {
        view.stopped_early = true;
        return view;
    }
    if (!streamed.is_elf()) return LoaderView{};
    try {
        complete(streamed, *seekable);
    } catch (const elf::ElfError& error) {
        throw InputError(wheel_label, member.name + ": invalid ELF: " + error.what());
    }
    return view;
}

std::vector<const zip::Member*> library_members(const zip::Archive& archive) {
    std::vector<const zip::Member*> libraries;
    for (const zip::Member& member : archive.members())
        if (!member.is_directory && !member.is_symlink && looks_like_shared_library(member.name)) libraries.push_back(&member);
    return libraries;
}

void read_loader_views(const zip::Archive& archive, const std::vector<const zip::Member*>& members,
                       const std::function<void(std::size_t index, LoaderView& view)>& use) {
    std::vector<std::uint64_t> sizes;
    for (const zip::Member* member : members) sizes.push_back(member->size);
    const ProgressTask progress("reading " + archive.path().filename().string(),
                                std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{0}));
    const std::string label = archive.path().string();
    std::atomic<int> tail_reads_left{kMaxTailReads};
    run_tasks(sizes, [&](std::size_t i) {
        LoaderView view = read_loader_view(archive, *members[i], label, tail_reads_left);
        use(i, view);
        progress.advance(members[i]->size);
    });
}

}  // namespace wheelfix::analysis
