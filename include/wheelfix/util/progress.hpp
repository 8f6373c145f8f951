// Progress of long work (reading every member of a wheel, the libraries of a torch
// wheel), reported by the core to whoever listens: the CLI draws a bar on stderr
// when it is a terminal (src/cli/progress_bar.hpp).
//
// Contract: a front end installs at most one ProgressListener with
// set_progress_listener() before the work starts and removes it (nullptr) before
// the listener dies. The core opens a ProgressTask per long step (begin on
// construction, end on destruction, also when an exception unwinds) and advances
// it as bytes pass. With no listener installed a ProgressTask does nothing but
// test one pointer, so the core may advance per chunk. Tasks may run on several
// threads at once (repair -j): begin() hands out an id that advance() and end()
// name, and a listener must be thread-safe. The core does not nest tasks on one
// thread (a listener may add running tasks up). Units are the caller's (bytes
// everywhere today); `total` may be an estimate (a central directory's sizes are
// untrusted), so the amount done may pass it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace wheelfix {

class ProgressListener {
public:
    virtual ~ProgressListener() = default;
    virtual std::uint64_t begin(std::string_view what, std::uint64_t total) = 0;  // returns the task's id
    virtual void advance(std::uint64_t task, std::uint64_t amount) = 0;
    virtual void end(std::uint64_t task) = 0;
};

void set_progress_listener(ProgressListener* listener);  // nullptr: nobody listens

class ProgressTask {
public:
    ProgressTask(std::string_view what, std::uint64_t total);
    ProgressTask(const ProgressTask&) = delete;
    ProgressTask& operator=(const ProgressTask&) = delete;
    ~ProgressTask();

    void advance(std::uint64_t amount) const {
        if (listener_) listener_->advance(id_, amount);
    }

private:
    ProgressListener* listener_;
    std::uint64_t id_ = 0;
};

}  // namespace wheelfix
