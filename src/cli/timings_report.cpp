// `--timings` output (timings_report.hpp).
#include "timings_report.hpp"

#include "wheelfix/util/timings.hpp"

#include <fmt/format.h>

namespace wheelfix::cli {

namespace {

double seconds(std::chrono::nanoseconds time) { return std::chrono::duration<double>(time).count(); }

double mebibytes(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace

void print_timings(std::FILE* out, std::chrono::steady_clock::time_point started) {
    const auto wall = std::chrono::steady_clock::now() - started;
    const auto rss = timings::peak_rss();
    std::string header = fmt::format("timings: wall {:.3f} s, peak RSS {:.1f} MiB", seconds(wall), mebibytes(rss.self));
    if (rss.children > 0) header += fmt::format(" (largest child {:.1f} MiB)", mebibytes(rss.children));
    fmt::print(out, "{} (phases: self time, summed over threads)\n", header);
    const auto totals = timings::totals();
    for (std::size_t i = 0; i < timings::kPhases; ++i) {
        const auto phase = static_cast<timings::Phase>(i);
        const auto& total = totals[i];
        std::string bytes = total.bytes ? fmt::format("  {:>9.1f} MB", static_cast<double>(total.bytes) / 1e6) : "";
        fmt::print(out, "  {:<15} {:>9.3f} s  {:>8} scope{}{}\n", timings::phase_name(phase), seconds(total.time), total.scopes,
                   total.scopes == 1 ? "" : "s", bytes);
    }
}

}  // namespace wheelfix::cli
