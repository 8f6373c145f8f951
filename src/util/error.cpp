#include "wheelfix/util/error.hpp"

namespace wheelfix {

namespace {
std::string one_line(std::string text) {
    for (char& c : text)
        if (c == '\n' || c == '\r') c = ' ';
    return text;
}
}  // namespace

InputError::InputError(std::string file, std::string problem)
    : std::runtime_error(file.empty() ? one_line(problem) : file + ": " + one_line(problem)),
      file_(std::move(file)),
      problem_(one_line(std::move(problem))) {}

std::string printable(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte != 0x7f) {
            out += c;
        } else {
            out += "\\x";
            out += kHex[byte >> 4];
            out += kHex[byte & 15];
        }
    }
    return out;
}

InputError InputError::within(const std::string& outer) const {
    return InputError(outer, file_.empty() ? problem_ : file_ + ": " + problem_);
}

}  // namespace wheelfix
