// Editing METADATA and WHEEL in place, the way retag does: the headers named
// change, every other byte stays.
//
// Contract: the text is read as RFC 822 header lines up to the first empty line
// (a header's continuation lines belong to it); only the headers an edit names are
// rewritten, as one line "Name: value" ending like the file's first line ("\n" or
// "\r\n"). Every other header, their order, continuation lines, line ends and the
// body after the blank line are kept byte for byte.
// - set_version(): the Version header's value (InputError when there is none).
// - pin_torch(): every Requires-Dist on torch (any spelling of the name) gets the
//   pin intersected with its own specifier (SpecifierSet::intersect: never wider than
//   what the author wrote), keeping the name as written, its extras and its
//   environment marker: "torch[cuda]>=2.10,<2.11; extra == \"gpu\"". A pin the
//   author's specifier excludes, or a specifier it cannot read, is an InputError
//   naming METADATA (wheelfix never loosens an author's pin). The pin replaces the
//   specifier with PinWrite::replace, and in any mode where the specifier is
//   `earlier` (same_as: wheelfix's own pin from an earlier retag, for the torch the
//   local version names, which a new retag or shim supersedes). A URL requirement
//   ("torch @ https://…") is left alone.
//   Without a torch requirement, "Requires-Dist: torch<specifier>" is added after the
//   last Requires-Dist, else after the last header. Returns the new text and each
//   requirement before/after (before is empty for an added one).
// - set_tags(): WHEEL's Tag headers replaced by one per tag, where the first Tag
//   header stood (after the last header when there was none).
// torch_pin_specifier(): minor ">=2.10,<2.11" (the minor series of the version
// given), exact "==2.10.0" (the public version given), none: nullopt.
#pragma once

#include "wheelfix/wheel/metadata.hpp"
#include "wheelfix/wheel/version.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelfix::wheel {

enum class TorchPin { minor, exact, none };

std::optional<SpecifierSet> torch_pin_specifier(const Version& torch, TorchPin pin);

std::string set_version(std::string_view metadata, std::string_view version);

struct PinnedTorch {
    std::string text;                                          // the new METADATA
    std::vector<std::pair<std::string, std::string>> changes;  // requirement before -> after
};
enum class PinWrite { within_author, replace };
PinnedTorch pin_torch(std::string_view metadata, const SpecifierSet& pin, PinWrite write = PinWrite::within_author,
                      const std::optional<SpecifierSet>& earlier = std::nullopt);

std::string set_tags(std::string_view wheel_file, const std::vector<std::string>& tags);
// Requires-Dist lines added after the last Requires-Dist (else after the last
// header), each as written (Requirement::text), unless METADATA (or an earlier one of
// them) holds the same requirement already (same_requirement: parsed, not by text).
std::string add_requirements(std::string_view metadata, const std::vector<Requirement>& requirements);

}  // namespace wheelfix::wheel
