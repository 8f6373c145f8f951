// The local version label as the record of what a CUDA wheel was built for:
// "0.3.21+cu130.torch2.10" says CUDA 13.0 and the torch 2.10 series.
//
// Contract: relabel_version(version, request) returns the version with its local
// label rewritten, normalized (PEP 440: lowercase, '.'-separated, public part in
// canonical spelling), and parsed again to prove it valid:
// - the torch segment is `torch` (optionally followed by digits) plus the purely
//   numeric segments right after it ("torch2", "10" in "+cu130.torch2.10"); it is
//   replaced where it stands. Without one, the new torch segment goes right after
//   the CUDA segment; at the end when there is no CUDA segment, or when the segment
//   after the CUDA one is purely numeric (it would read as part of the torch one);
// - the CUDA segment is `cu` followed by digits ("cu130"); with request.cuda it is
//   replaced where it stands, or put first when there is none;
// - every other segment is kept, in order ("+cu130.something" ->
//   "+cu130.torch2.10.something").
// The torch segment's spelling is a LocalFormat: dotted "torch2.10" (default),
// compact "torch210", full "torch2.10.0" (the release as given to --torch).
// cuda_segment() spells a CUDA version: "13.0" and "13" -> "cu130", "12.8" -> "cu128",
// "cu130" stays. A torch version without MAJOR.MINOR, a CUDA version of another
// shape, or a result that is not PEP 440 is an InputError naming the option.
#pragma once

#include "wheelfix/wheel/version.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace wheelfix::wheel {

enum class LocalFormat { dotted, compact, full };

// "dotted" / "compact" / "full"; nullopt for anything else.
std::optional<LocalFormat> parse_local_format(std::string_view name);

struct LocalLabelRequest {
    std::optional<Version> torch;       // "2.10", "2.10.0", "2.10.0+cu130" (local ignored); nullopt: no torch segment change
    std::optional<std::string> cuda;    // "13.0"; nullopt keeps the CUDA segment as it is
    LocalFormat format = LocalFormat::dotted;
};

std::string torch_segment(const Version& torch, LocalFormat format);  // "torch2.10"
std::string cuda_segment(std::string_view cuda);                      // "cu130"
Version relabel_version(const Version& version, const LocalLabelRequest& request);

}  // namespace wheelfix::wheel
