// Errors that reach the user.
//
// Contract: every problem with what the user handed us (a file, an option) is an
// InputError carrying the file it concerns and a one-line description of the
// problem. The CLI prints it as `wheelfix: <file>: <problem>` and exits with
// status 2. Nothing else is thrown across module boundaries on bad input; a
// std::bad_alloc or a logic_error is a bug, not an input problem. Text taken from
// a file (a name, a version) goes into a message through printable(), so that a
// hostile file cannot break the one line or write control sequences to a terminal.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace wheelfix {

class InputError : public std::runtime_error {
public:
    InputError(std::string file, std::string problem);

    const std::string& file() const { return file_; }
    const std::string& problem() const { return problem_; }

    // The same problem, now attributed to `outer` (e.g. a wheel) with `inner`
    // (e.g. the member) prefixed to the problem: "w.whl: pkg/x.so: bad ELF magic".
    InputError within(const std::string& outer) const;

private:
    std::string file_;
    std::string problem_;
};

// `text` with every control character (below 0x20, and 0x7f) written as \xNN.
std::string printable(std::string_view text);

}  // namespace wheelfix
