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

InputError InputError::within(const std::string& outer) const {
    return InputError(outer, file_.empty() ? problem_ : file_ + ": " + problem_);
}

}  // namespace wheelfix
