// A member's partial views: read_loader_view, as far as the loader's view of it needs;
// read_far_view, its head and the ranges far from it (member_view.hpp has the contracts).
#include "wheelfix/analysis/member_view.hpp"

#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/elf/dynamic_array.hpp"
#include "wheelfix/elf/editor.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/parallel_tasks.hpp"
#include "wheelfix/util/progress.hpp"
#include "wheelfix/zip/codec.hpp"
#include "wheelfix/zip/far_read.hpp"
#include "wheelfix/zip/seekable_member.hpp"

#include <elf.h>

#include <algorithm>
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

struct Abandon {};  // the speculation gives up: nullopt

// The program headers of the member's head, for recognising PT_DYNAMIC far from
// it (elf/dynamic_array.hpp); nullopt when the head does not hold them.
std::optional<elf::ElfFile> head_headers(const elf::StreamedElf& view) {
    try {
        return elf::ElfFile::parse_headers(view.image(), &view.kept());
    } catch (const elf::ElfError&) {
    } catch (const BytesNotKept&) {
    }
    return std::nullopt;
}

// PT_DYNAMIC's segment, when `headers` has one that holds [begin, end).
const elf::ProgramHeader* dynamic_holding(const elf::ElfFile& headers, std::uint64_t begin, std::uint64_t end) {
    for (const auto& ph : headers.program_headers())
        if (ph.type == PT_DYNAMIC && begin >= ph.offset && end - ph.offset <= ph.filesz) return &ph;
    return nullptr;
}

// FarReader's locator for PT_DYNAMIC: the first place the inflated bytes read as
// its dynamic array gives the entry's offset. A wrong answer costs only the second
// read the speculation saves (speculation.hpp): nothing here is trusted.
zip::FarReader::Locator dynamic_locator(elf::ElfFile headers, std::uint64_t dynamic_offset) {
    return [headers = std::move(headers), dynamic_offset](std::span<const std::uint8_t> bytes,
                                                          std::uint64_t count) -> std::optional<std::uint64_t> {
        const auto found = elf::find_dynamic_array(headers, bytes);
        if (!found || count + *found > dynamic_offset) return std::nullopt;
        return dynamic_offset - (count + *found);
    };
}

// The member's first `count` inflated bytes streamed into `view` (the inflate stops there).
void read_head(const zip::Archive& archive, const zip::Member& member, std::uint64_t count, elf::StreamedElf& view) {
    struct Enough {};
    std::uint64_t seen = 0;
    try {
        archive.stream(member, [&](std::span<const std::uint8_t> chunk) {
            view.consume(chunk);
            seen += chunk.size();
            if (seen >= count) throw Enough{};
        });
    } catch (const Enough&) {
    }
}

// The partial image with the ranges past the head that its readers want.
class SpeculativeView {
public:
    SpeculativeView(const zip::Archive& archive, const zip::Member& member)
        : archive_(archive), member_(member), view_(member.size, elf::StreamedElf::Needs::dynamic_linking),
          head_end_(std::min(kFarViewHead, member.size)) {
        read_head(archive, member, head_end_, view_);
    }

    bool is_elf() const { return view_.is_elf(); }
    elf::ElfFile parse() const { return view_.parse(); }

    // What a reader found missing (with all that is wanted and not kept), from
    // past the head; a range the head should have held was learned too late. Each
    // range is read by a FarReader that holds it in memory already, or by a new one
    // entered near it: within PT_DYNAMIC, placed by its locator (its decode stops
    // there); elsewhere (the section headers, at the end), decoding to the end.
    void fetch(const BytesNotKept& missing) {
        const ByteRanges ranges = view_.to_fetch(missing);
        if (ranges.empty() || ranges.ranges().front().first < head_end_) throw Abandon{};
        const auto headers = head_headers(view_);
        for (const auto& [begin, end] : ranges.ranges()) {
            ByteRanges range;
            range.add(begin, end);
            reader_for(begin, end, headers).read(range, [&](std::span<const std::uint8_t> chunk, std::uint64_t at) {
                view_.fill(at, chunk);
            });
        }
    }

private:
    zip::FarReader& reader_for(std::uint64_t begin, std::uint64_t end, const std::optional<elf::ElfFile>& headers) {
        for (auto& far : far_)
            if (far.known_from() <= begin && far.in_memory(begin, end)) return far;
        const elf::ProgramHeader* dynamic = headers ? dynamic_holding(*headers, begin, end) : nullptr;
        auto opened = zip::FarReader::open(archive_, member_, begin,
                                           dynamic ? dynamic_locator(*headers, dynamic->offset) : zip::FarReader::Locator{});
        if (!opened || begin < opened->known_from()) throw Abandon{};
        far_.push_back(std::move(*opened));
        return far_.back();
    }

    const zip::Archive& archive_;
    const zip::Member& member_;
    elf::StreamedElf view_;
    std::uint64_t head_end_;
    std::vector<zip::FarReader> far_;
};

// use(parse) until nothing it reads is missing; false when that takes more rounds
// than read_streamed would.
bool use_on(SpeculativeView& view, const FarViewUse& use) {
    for (int round = 1; round <= elf::StreamedElf::kMaxRounds; ++round) {
        try {
            use(view.parse());
            return true;
        } catch (const BytesNotKept& missing) {
            view.fetch(missing);
        }
    }
    return false;
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

bool read_far_view(const zip::Archive& archive, const zip::Member& member, const FarViewUse& use) {
    if (member.method != zip::Method::deflated) return false;
    try {
        SpeculativeView view(archive, member);
        return view.is_elf() && use_on(view, use);
    } catch (const Abandon&) {
    } catch (const elf::ElfError&) {
    } catch (const elf::EditError&) {
    } catch (const InputError&) {
    } catch (const zip::CodecError&) {
    }
    return false;
}

}  // namespace wheelfix::analysis
