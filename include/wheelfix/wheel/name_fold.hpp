// Member names that one file system keeps apart and another merges: names that
// differ only by case (macOS and Windows file systems ignore it) or only by
// Unicode normalisation (NFC "café" and NFD "cafe\u0301": macOS normalises).
//
// Contract:
// - normalised(name) is `name` with every precomposed letter of the covered ranges
//   replaced by its canonical decomposition (NFD): U+00C0-U+024F (Latin-1
//   Supplement, Latin Extended-A/B), U+0386-U+03CF (Greek), U+0400-U+045F
//   (Cyrillic) and U+1E00-U+1EFF (Latin Extended Additional, Vietnamese). Limits,
//   chosen to need no new dependency: other scripts (Hangul, CJK compatibility,
//   ...) are left as they are, and combining marks are not reordered (NFD's
//   canonical ordering), so two spellings that differ only there are not found.
//   Bytes that are not valid UTF-8 are kept as they are.
// - folded(name) is normalised(name) with ASCII, Latin, Greek and Cyrillic letters
//   lowercased (the simple one-to-one mapping; ß stays ß).
// - name_collisions(names) lists each pair of distinct names whose folded forms
//   are equal, with why ("differ only in case", "differ only in Unicode
//   normalisation (NFC/NFD)"), in the order the second name comes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::wheel {

std::string normalised(std::string_view name);
std::string folded(std::string_view name);

struct NameCollision {
    std::string first, second;
    std::string why;
};
std::vector<NameCollision> name_collisions(const std::vector<std::string>& names);

}  // namespace wheelfix::wheel
