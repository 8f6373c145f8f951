// `--timings`: where a command's time went, printed on stderr after the command.
//
// Contract: print_timings() writes, to `out`, one header line with the wall-clock
// time since `started` and the peak RSS (util/timings.hpp: of wheelfix, and of the
// largest child such as the load test's python3 when there was one), then one line
// per phase in a fixed order — read, inflate, parse, edit, deflate/splice, hash,
// write, proofs — every phase always printed (0.000 s when it did not run), with
// its self time summed over threads and how many timed scopes it had. What no
// phase claims (deciding, reporting, waiting) is the wall time minus the phases of
// the main thread; threads make the sum exceed the wall time. Text only, never on
// stdout, so a `--json` document stays the one thing there.
#pragma once

#include <chrono>
#include <cstdio>

namespace wheelfix::cli {

void print_timings(std::FILE* out, std::chrono::steady_clock::time_point started);

}  // namespace wheelfix::cli
