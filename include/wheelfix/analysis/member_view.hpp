// The library members `check` and repair's foresight read, each as far as its
// loader's view needs (wheel/member_reader.hpp read_loader_view has how, what it
// costs and what it is trusted for).
//
// Contract: library_members(archive) lists file members named like shared
// libraries, in archive order. read_loader_views(archive, members, use) reads each of
// `members` with wheel::read_loader_view, on the threads the thread budget spares,
// largest first (util/parallel_tasks.hpp), at most wheel::kMaxTailReads far reads
// over them all, and hands each view to use(i, view) on the thread that read it;
// when several fail, the error of the first in the list is the one thrown.
#pragma once

#include "wheelfix/wheel/member_reader.hpp"
#include "wheelfix/zip/archive.hpp"

#include <cstddef>
#include <functional>
#include <vector>

namespace wheelfix::analysis {

std::vector<const zip::Member*> library_members(const zip::Archive& archive);

void read_loader_views(const zip::Archive& archive, const std::vector<const zip::Member*>& members,
                       const std::function<void(std::size_t index, wheel::MemberImage& view)>& use);

}  // namespace wheelfix::analysis
