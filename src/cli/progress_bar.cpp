// The stderr progress bar (progress_bar.hpp has the contract).
#include "progress_bar.hpp"

#include "wheelfix/util/text.hpp"

#include "wheelfix/util/progress.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace wheelfix::cli {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kRedrawInterval = std::chrono::milliseconds(100);
constexpr int kDefaultWidth = 80;
constexpr int kBarCells = 24;

std::chrono::milliseconds show_after() {
    if (const char* value = std::getenv("WHEELFIX_PROGRESS_DELAY_MS"); value && *value) {
        char* end = nullptr;
        long ms = std::strtol(value, &end, 10);
        if (end && *end == '\0' && ms >= 0) return std::chrono::milliseconds(ms);
    }
    return std::chrono::seconds(1);
}

int terminal_width() {
    winsize size{};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
    return kDefaultWidth;
}

bool stderr_wants_bar(const GlobalOptions& global) {
    if (global.quiet || ::isatty(STDERR_FILENO) != 1) return false;
    const char* term = std::getenv("TERM");
    return !(term && std::string(term) == "dumb");
}

struct Task {
    std::string what;
    std::uint64_t total = 0;
    std::uint64_t done = 0;
    Clock::time_point started;
};

std::string bar_cells(double fraction) {
    int filled = static_cast<int>(fraction * kBarCells + 0.5);
    return std::string(filled, '#') + std::string(kBarCells - filled, '.');
}

// "reading x.whl  [#####...]  45%  120.3 MiB/270.0 MiB", cut to `width` columns.
std::string bar_line(std::string what, std::uint64_t done, std::uint64_t total, int width) {
    done = std::min(done, total);
    double fraction = total ? double(done) / double(total) : 0.0;
    std::string tail = fmt::format("  [{}] {:3}%  {}/{}", bar_cells(fraction), int(fraction * 100), human_size(done),
                                   human_size(total));
    int room = width - 1 - int(tail.size());
    if (room < 8) return what.substr(0, std::max(0, width - 1));
    if (int(what.size()) > room) what = "..." + what.substr(what.size() - (room - 3));
    return what + tail;
}

}  // namespace

// Tasks running at once (repair -j) are summed into one bar.
class ScopedProgressBar::Bar final : public ProgressListener {
public:
    std::uint64_t begin(std::string_view what, std::uint64_t total) override {
        std::lock_guard lock(mutex_);
        tasks_[++last_id_] = Task{std::string(what), total, 0, Clock::now()};
        return last_id_;
    }

    void advance(std::uint64_t id, std::uint64_t amount) override {
        std::lock_guard lock(mutex_);
        auto task = tasks_.find(id);
        if (task == tasks_.end()) return;
        task->second.done += amount;
        auto now = Clock::now();
        if (now - oldest_start() < delay_ || now - last_draw_ < kRedrawInterval) return;
        last_draw_ = now;
        draw();
    }

    void end(std::uint64_t id) override {
        std::lock_guard lock(mutex_);
        tasks_.erase(id);
        erase();
    }

private:
    Clock::time_point oldest_start() const {
        auto oldest = Clock::time_point::max();
        for (const auto& [id, task] : tasks_) oldest = std::min(oldest, task.started);
        return oldest;
    }

    void draw() {
        std::uint64_t done = 0, total = 0;
        for (const auto& [id, task] : tasks_) done += std::min(task.done, task.total), total += task.total;
        std::string what = tasks_.size() == 1 ? tasks_.begin()->second.what : fmt::format("{} tasks", tasks_.size());
        std::string line = "\r" + bar_line(what, done, total, terminal_width()) + "\x1b[K";
        std::fputs(line.c_str(), stderr);
        std::fflush(stderr);
        drawn_ = true;
    }

    void erase() {
        if (!drawn_) return;
        std::fputs("\r\x1b[K", stderr);
        std::fflush(stderr);
        drawn_ = false;
        last_draw_ = {};
    }

    std::mutex mutex_;
    std::map<std::uint64_t, Task> tasks_;
    std::uint64_t last_id_ = 0;
    std::chrono::milliseconds delay_ = show_after();
    Clock::time_point last_draw_{};
    bool drawn_ = false;
};

ScopedProgressBar::ScopedProgressBar(const GlobalOptions& global) {
    if (!stderr_wants_bar(global)) return;
    bar_ = std::make_unique<Bar>();
    set_progress_listener(bar_.get());
}

ScopedProgressBar::~ScopedProgressBar() {
    if (bar_) set_progress_listener(nullptr);
}

}  // namespace wheelfix::cli
