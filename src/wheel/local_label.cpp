// Local labels: the segments are rewritten as a list (Version already lowercased
// and split them), then joined behind the normalized public part and parsed again.
#include "wheelfix/wheel/local_label.hpp"

#include "wheelfix/util/error.hpp"
#include "wheelfix/util/text.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace wheelfix::wheel {

namespace {

using Segments = std::vector<std::string>;

bool is_cuda_segment(std::string_view segment) { return segment.starts_with("cu") && all_digits(segment.substr(2)); }

bool is_torch_head(std::string_view segment) {
    return segment == "torch" || (segment.starts_with("torch") && all_digits(segment.substr(5)));
}

// The torch segment split the way Version splits a label ("torch2.10" -> torch2, 10).
Segments torch_segments(const Version& torch, LocalFormat format) { return split(torch_segment(torch, format), '.'); }

// [first, last) of the torch segment with its numeric tail, or nullopt.
std::optional<std::pair<std::size_t, std::size_t>> find_torch(const Segments& segments) {
    auto head = std::find_if(segments.begin(), segments.end(), [](const auto& s) { return is_torch_head(s); });
    if (head == segments.end()) return std::nullopt;
    auto tail = std::find_if(head + 1, segments.end(), [](const auto& s) { return !all_digits(s); });
    return std::pair{static_cast<std::size_t>(head - segments.begin()), static_cast<std::size_t>(tail - segments.begin())};
}

std::optional<std::size_t> find_cuda(const Segments& segments) {
    auto found = std::find_if(segments.begin(), segments.end(), [](const auto& s) { return is_cuda_segment(s); });
    if (found == segments.end()) return std::nullopt;
    return static_cast<std::size_t>(found - segments.begin());
}

void set_cuda(Segments& segments, const std::string& cuda) {
    if (auto at = find_cuda(segments)) segments[*at] = cuda;
    else segments.insert(segments.begin(), cuda);
}

// Right after the CUDA segment, unless a numeric segment follows it; else at the end.
std::size_t torch_insertion_point(const Segments& segments) {
    auto cuda = find_cuda(segments);
    if (!cuda) return segments.size();
    std::size_t after = *cuda + 1;
    return after < segments.size() && all_digits(segments[after]) ? segments.size() : after;
}

void set_torch(Segments& segments, const Segments& torch) {
    std::size_t at = torch_insertion_point(segments);
    if (auto span = find_torch(segments)) {
        segments.erase(segments.begin() + static_cast<std::ptrdiff_t>(span->first),
                       segments.begin() + static_cast<std::ptrdiff_t>(span->second));
        at = span->first;
    }
    segments.insert(segments.begin() + static_cast<std::ptrdiff_t>(at), torch.begin(), torch.end());
}

}  // namespace

std::optional<LocalFormat> parse_local_format(std::string_view name) {
    if (name == "dotted") return LocalFormat::dotted;
    if (name == "compact") return LocalFormat::compact;
    if (name == "full") return LocalFormat::full;
    return std::nullopt;
}

std::string torch_segment(const Version& torch, LocalFormat format) {
    const auto& release = torch.release();
    if (release.size() < 2)
        throw InputError("--torch", "needs at least MAJOR.MINOR, got '" + torch.original() + "'");
    std::vector<std::uint64_t> minor_series(release.begin(), release.begin() + 2);
    switch (format) {
    case LocalFormat::dotted: return "torch" + join(minor_series, ".");
    case LocalFormat::compact: return "torch" + join(minor_series, "");
    case LocalFormat::full: return "torch" + join(release, ".");
    }
    return {};
}

std::string cuda_segment(std::string_view cuda) {
    std::string text(cuda);
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (is_cuda_segment(text)) return text;
    auto dot = text.find('.');
    std::string major = text.substr(0, dot);
    std::string rest = dot == std::string::npos ? "0" : text.substr(dot + 1);
    std::string minor = rest.substr(0, rest.find('.'));  // a patch level ("12.8.1") is not part of the label
    std::string patch = rest.find('.') == std::string::npos ? "0" : rest.substr(rest.find('.') + 1);
    if (!all_digits(major) || !all_digits(minor) || !all_digits(patch))
        throw InputError("--cuda", "expected a CUDA version like 13.0 or 12.8, got '" + std::string(cuda) + "'");
    return "cu" + major + minor;
}

Version relabel_version(const Version& version, const LocalLabelRequest& request) {
    Segments segments = version.local_segments();
    if (request.cuda) set_cuda(segments, cuda_segment(*request.cuda));
    if (request.torch) set_torch(segments, torch_segments(*request.torch, request.format));
    std::string text = version.public_part() + (segments.empty() ? "" : "+" + join(segments, "."));
    auto result = Version::try_parse(text);
    if (!result) throw InputError("--torch", "the new version '" + text + "' would not be valid PEP 440");
    return Version::parse(result->normalized());
}

}  // namespace wheelfix::wheel
