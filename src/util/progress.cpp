// The progress hook (util/progress.hpp has the contract): one process-wide
// listener pointer, read when a task begins.
#include "wheelfix/util/progress.hpp"

namespace wheelfix {

namespace {
ProgressListener* g_listener = nullptr;
}  // namespace

void set_progress_listener(ProgressListener* listener) { g_listener = listener; }

ProgressTask::ProgressTask(std::string_view what, std::uint64_t total) : listener_(g_listener) {
    if (listener_) id_ = listener_->begin(what, total);
}

ProgressTask::~ProgressTask() {
    if (listener_) listener_->end(id_);
}

}  // namespace wheelfix
