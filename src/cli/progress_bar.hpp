// The progress bar: a ProgressListener (util/progress.hpp) drawing one line on
// stderr for long work.
//
// Contract: ScopedProgressBar installs a bar for its lifetime when stderr is a
// terminal and neither --quiet is given nor TERM is "dumb"; otherwise it installs
// nothing, so the core's progress calls cost one pointer test. A task shows up
// only once it has run for a second (WHEELFIX_PROGRESS_DELAY_MS overrides, for
// tests and slow links), is redrawn at most ten times a second, fits the
// terminal's width, and its line is erased when the task ends (also when an error
// unwinds it), so finished work and error messages never share a line with it.
// Tasks running at once (repair -j) are summed into one bar ("2 tasks").
#pragma once

#include "commands.hpp"

#include <memory>

namespace wheelfix::cli {

class ScopedProgressBar {
public:
    explicit ScopedProgressBar(const GlobalOptions& global);
    ScopedProgressBar(const ScopedProgressBar&) = delete;
    ScopedProgressBar& operator=(const ScopedProgressBar&) = delete;
    ~ScopedProgressBar();

    class Bar;

private:
    std::unique_ptr<Bar> bar_;
};

}  // namespace wheelfix::cli
