// The library members and their loader's views (member_view.hpp has the contract).
#include "wheelfix/analysis/member_view.hpp"

#include "wheelfix/analysis/wheel_report.hpp"
#include "wheelfix/util/parallel_tasks.hpp"
#include "wheelfix/util/progress.hpp"

#include <atomic>
#include <numeric>

namespace wheelfix::analysis {

std::vector<const zip::Member*> library_members(const zip::Archive& archive) {
    std::vector<const zip::Member*> libraries;
    for (const zip::Member& member : archive.members())
        if (!member.is_directory && !member.is_symlink && looks_like_shared_library(member.name)) libraries.push_back(&member);
    return libraries;
}

void read_loader_views(const zip::Archive& archive, const std::vector<const zip::Member*>& members,
                       const std::function<void(std::size_t index, wheel::MemberImage& view)>& use) {
    std::vector<std::uint64_t> sizes;
    for (const zip::Member* member : members) sizes.push_back(member->size);
    const ProgressTask progress("reading " + archive.path().filename().string(),
                                std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{0}));
    const std::string label = archive.path().string();
    std::atomic<int> tail_reads_left{wheel::kMaxTailReads};
    run_tasks(sizes, [&](std::size_t i) {
        wheel::MemberImage view = wheel::read_loader_view(archive, *members[i], label, tail_reads_left);
        use(i, view);
        progress.advance(members[i]->size);
    });
}

}  // namespace wheelfix::analysis
