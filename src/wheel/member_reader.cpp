// MemberImage and the readers that yield it: the loader's view (stops early,
// confirmed end read) and the far view (head and far reads); member_reader.hpp has
// the contracts.
#include "wheelfix/wheel/member_reader.hpp"

#include "wheelfix/cuda/fatbin_scan.hpp"
#include "wheelfix/elf/dynamic_array.hpp"
#include "wheelfix/elf/editor.hpp"
#include "wheelfix/util/error.hpp"
#include "wheelfix/util/parallel_tasks.hpp"
#include "wheelfix/util/progress.hpp"
#include "wheelfix/zip/codec.hpp"
#include "wheelfix/zip/far_read.hpp"

#include <elf.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <vector>

namespace wheelfix::wheel {

std::unique_ptr<elf::StreamedElf> keeping(std::uint64_t size, Keeps keeps) {
    if (keeps == Keeps::loader) return std::make_unique<elf::StreamedElf>(size, elf::StreamedElf::Needs::dynamic_linking);
    auto streamed = std::make_unique<elf::StreamedElf>(size, elf::StreamedElf::Needs::inspection);
    streamed->stream().add(std::make_unique<cuda::FatbinScanner>());
    return streamed;
}

MemberImage::MemberImage(zip::InflatedMember&& inflated) : way_(ReadWay::whole), index_(std::move(inflated)) {}

MemberImage::MemberImage(const zip::Archive& archive, const zip::Member& member, zip::InflatedMember&& index,
                         std::shared_ptr<elf::StreamedElf> kept)
    : way_(ReadWay::bounded), kept_(std::move(kept)) {
    windows_ = std::make_unique<zip::SeekableMember>(archive, member, std::move(index));  // takes the windows
    index_ = std::move(index);
    index_.windows.clear();
    fetch_ = [windows = windows_.get()](const ByteRanges& ranges, const elf::FetchSink& sink) { windows->read(ranges, sink); };
}

MemberImage::MemberImage(std::shared_ptr<elf::StreamedElf> kept, const zip::SeekableMember& windows)
    : MemberImage(ReadWay::bounded, std::move(kept),
                  [&windows](const ByteRanges& ranges, const elf::FetchSink& sink) { windows.read(ranges, sink); }) {}

MemberImage::MemberImage(ReadWay way, std::shared_ptr<elf::StreamedElf> kept, elf::Fetch fetch)
    : way_(way), kept_(std::move(kept)), fetch_(std::move(fetch)) {}

bool MemberImage::is_elf() const { return kept_ ? kept_->is_elf() : elf::is_elf(index_.data); }

std::uint64_t MemberImage::size() const { return kept_ ? kept_->size() : index_.data.size(); }

std::span<const std::uint8_t> MemberImage::image() const { return kept_ ? kept_->image() : std::span<const std::uint8_t>(index_.data); }

const ByteRanges* MemberImage::present() const { return kept_ ? &kept_->kept() : nullptr; }

elf::ElfFile MemberImage::parse() const {
    return stopped_early_ ? elf::ElfFile::parse_as_loader(image(), present()) : elf::ElfFile::parse(image(), present());
}

void MemberImage::fetch(const ByteRanges& ranges, const elf::FetchSink& sink) const {
    if (kept_) {
        fetch_(ranges, sink);
        return;
    }
    const auto& data = index_.data;
    for (const auto& [begin, end] : ranges.ranges()) {
        const std::uint64_t to = std::min<std::uint64_t>(end, data.size());
        if (begin < to) sink(std::span<const std::uint8_t>(data.data() + begin, static_cast<std::size_t>(to - begin)), begin);
    }
}

elf::Fetch edited_fetch(const MemberImage& original, const ByteEdits& edits) {
    return [&original, &edits](const ByteRanges& ranges, const elf::FetchSink& sink) {
        for (const auto& [begin, end] : ranges.ranges()) {
            // One piece of the edited content, its part in [begin, end): from new offset
            // `at`, `length` bytes of `edit` or (null) of the original, from `from` on.
            auto piece = [&](std::uint64_t at, std::uint64_t length, const ByteEdit* edit, std::uint64_t from) {
                const std::uint64_t lo = std::max(at, begin), hi = std::min(at + length, end);
                if (lo >= hi) return;
                from += lo - at;
                if (edit)
                    return sink(std::span<const std::uint8_t>(edit->bytes)
                                    .subspan(static_cast<std::size_t>(from), static_cast<std::size_t>(hi - lo)),
                                lo);
                ByteRanges wanted;
                wanted.add(from, from + (hi - lo));
                original.fetch(wanted, [&](std::span<const std::uint8_t> chunk, std::uint64_t offset) {
                    sink(chunk, offset - from + lo);
                });
            };
            std::uint64_t at = 0, next = 0;  // where the next piece starts, new and original
            for (const auto& edit : edits) {
                piece(at, edit.offset - next, nullptr, next);
                at += edit.offset - next;
                piece(at, edit.bytes.size(), &edit, 0);
                at += edit.bytes.size();
                next = edit.offset + edit.length;
            }
            piece(at, UINT64_MAX - at, nullptr, next);  // the rest of the original (its fetch clamps it)
        }
    };
}

MemberImage read_member(const zip::Archive& archive, const zip::Member& member, const StreamSink& streamed) {
    if (!streamed.sink) return MemberImage(zip::inflate_indexed(archive, member, {}, zip::InflateOptions{.keep = true, .sha256 = true}));
    std::shared_ptr<elf::StreamedElf> kept = keeping(member.size, streamed.keeps);
    auto sink = [&kept = *kept, &next = streamed.sink](std::span<const std::uint8_t> chunk) {
        kept.consume(chunk);
        next(chunk);
    };
    std::function<void(std::span<const std::uint8_t>, Sha256&)> hashing;
    if (streamed.hashing)
        hashing = [&kept = *kept, &next = streamed.hashing](std::span<const std::uint8_t> chunk, Sha256& original) {
            kept.consume(chunk);
            next(chunk, original);
        };
    auto index = zip::inflate_indexed(archive, member, sink,
                                      zip::InflateOptions{.sha256 = true,
                                                          .window_every = zip::SeekableMember::spacing(member.size),
                                                          .sink_may_lag = streamed.may_lag,
                                                          .sink_hashing = hashing,
                                                          .sink_start = streamed.start});
    return MemberImage(archive, member, std::move(index), std::move(kept));
}

namespace {

// When a member being streamed has given the loader's view of it (the header's
// loader_view); given up when what a try found missing lay behind the stream.
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
    // Whether what the last try found missing is read from the member's end (the
    // header's loader_view; each costs a bounded few tenths of a second).
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
struct Abandon {};  // the far view gives up: read_far_view is false

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
// read the far view's caller saves: nothing here is trusted.
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

// The far view's fetch: the ranges past the head (a range the head should have
// held was learned too late), each read by a FarReader that holds it in memory
// already, or by a new one entered near it: within PT_DYNAMIC, placed by its
// locator (its decode stops there); elsewhere (the section headers, at the end),
// decoding to the end.
class FarFetch {
public:
    FarFetch(const zip::Archive& archive, const zip::Member& member, const elf::StreamedElf& view, std::uint64_t head_end)
        : archive_(archive), member_(member), view_(view), head_end_(head_end) {}

    void operator()(const ByteRanges& ranges, const elf::FetchSink& sink) {
        if (ranges.empty() || ranges.ranges().front().first < head_end_) throw Abandon{};
        const auto headers = head_headers(view_);
        for (const auto& [begin, end] : ranges.ranges()) {
            ByteRanges range;
            range.add(begin, end);
            reader_for(begin, end, headers).read(range, sink);
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
    const elf::StreamedElf& view_;
    std::uint64_t head_end_;
    std::vector<zip::FarReader> far_;
};

}  // namespace

MemberImage read_loader_view(const zip::Archive& archive, const zip::Member& member, const std::string& wheel_label,
                             std::atomic<int>& tail_reads_left) {
    std::shared_ptr<elf::StreamedElf> kept = keeping(member.size, Keeps::loader);
    elf::StreamedElf& streamed = *kept;
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
        MemberImage view(ReadWay::loader_view, std::move(kept), {});
        view.stopped_early_ = true;
        return view;
    }
    if (!streamed.is_elf()) return MemberImage{};
    MemberImage view(std::move(kept), *seekable);
    try {
        view.read([](std::span<const std::uint8_t> image, const ByteRanges* present) { return elf::ElfFile::parse(image, present); });
    } catch (const elf::ElfError& error) {
        throw InputError(wheel_label, member.name + ": invalid ELF: " + error.what());
    }
    view.way_ = ReadWay::loader_view;
    view.fetch_ = {};  // the seekable goes: the view has what its parse reads
    return view;
}

void read_loader_views(const zip::Archive& archive, const std::vector<const zip::Member*>& members,
                       const std::function<void(std::size_t index, MemberImage& view)>& use) {
    std::vector<std::uint64_t> sizes;
    for (const zip::Member* member : members) sizes.push_back(member->size);
    const ProgressTask progress("reading " + archive.path().filename().string(),
                                std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{0}));
    std::atomic<int> tail_reads_left{kMaxTailReads};
    run_tasks(sizes, [&](std::size_t i) {
        MemberImage view = read_loader_view(archive, *members[i], archive.path().string(), tail_reads_left);
        use(i, view);
        progress.advance(members[i]->size);
    });
}

bool read_far_view(const zip::Archive& archive, const zip::Member& member, const FarViewUse& use) {
    if (member.method != zip::Method::deflated) return false;
    try {
        auto kept = keeping(member.size, Keeps::loader);
        const std::uint64_t head_end = std::min(kFarViewHead, member.size);
        read_head(archive, member, head_end, *kept);
        if (!kept->is_elf()) return false;
        const elf::StreamedElf& view = *kept;
        MemberImage image(ReadWay::far_view, std::move(kept), FarFetch(archive, member, view, head_end));
        return image.read([&](std::span<const std::uint8_t>, const ByteRanges*) {
            use(image.parse());
            return true;
        });
    } catch (const Abandon&) {
    } catch (const BytesNotKept&) {
    } catch (const elf::ElfError&) {
    } catch (const elf::EditError&) {
    } catch (const InputError&) {
    } catch (const zip::CodecError&) {
    }
    return false;
}

}  // namespace wheelfix::wheel
