// Repairing several wheels at once: the -j worker pool under `wheelfix repair`.
//
// Contract: repair_wheels(wheels, setup, batch, out_dir, jobs) runs repair_wheel()
// (repair.hpp) on each wheel on its own, with the torch index and options `setup`
// gives for it on the worker (each wheel its own with `repair --torch auto`; a
// NotRepaired, the verdict finding no pin, is that wheel's outcome, no repair), and
// returns one outcome per wheel, in the order given: its report, or the InputError
// (a filesystem error becomes one naming the wheel) that stopped it. One wheel's
// failure never stops the others. Any other exception (a fault of ours:
// std::logic_error, std::bad_alloc) ends that wheel and, once every worker has
// ended, comes out of repair_wheels (the first in the order given) rather than out
// of a worker thread, where it would abort the process. A batch whose outputs may
// collide is refused whole before any work (refuse_colliding_batch: exit 2, nothing
// written). Of two wheels whose outputs still turn out to have one path, the later
// in the order given is refused before it writes (RepairOptions::claims), whatever
// --overwrite and -j say: its claim waits until the earlier inputs of its
// distribution have claimed or ended (repair.hpp OutputClaims), so which wheel is
// written never depends on which worker reads faster. The thread budget
// (util/thread_budget.hpp) is set to `jobs` (0: the CPUs this process may use); as
// many workers as wheels allow take a wheel each, largest inflated size first
// (inflating and hashing is where a repair's time goes, so the workers finish
// together), except that the wheels of one distribution start in the order given
// (in the places the size order gave them); shares no worker needs go to the
// helpers of the wheels still running. With one job the wheels run in the order
// given. An archive that does not open counts as empty for the order: its repair
// reports the error.
// batch_status(outcomes) is `repair`'s exit status: 2 when a wheel could not be
// repaired at all (an InputError), else 1 when one was not repaired (NotRepaired) or
// came out with findings left or not proven to load, else 0.
#pragma once

#include "wheelfix/abi/symbol_index.hpp"
#include "wheelfix/repair/repair.hpp"
#include "wheelfix/util/error.hpp"

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace wheelfix::repair {

// A wheel the setup decided not to repair (a finding, exit 1): why.
struct NotRepaired {
    std::string wheel;
    std::string why;
};

using RepairOutcome = std::variant<RepairReport, InputError, NotRepaired>;
int batch_status(const std::vector<RepairOutcome>& outcomes);

// Refuses a batch (InputError naming the later input and the earlier one) in which
// two inputs keep the same part of the file name through repair (distribution,
// version as repair may write it (whole without --torch, public with --keep-version,
// else less its local torch segment), build, Python and ABI tags, the platform's architecture; the
// whole platform with no_update_tags) and so may be written under one name: the
// same wheel named twice, two builds one honest tag turns into one, or an input
// lying in out_dir that an earlier input's output would replace. Decided from the
// names alone, before any work, so no input's output is left behind by a refusal.
void refuse_colliding_batch(const std::vector<std::string>& wheels, const RepairOptions& options,
                            const std::filesystem::path& out_dir);

struct WheelJob {
    std::shared_ptr<const abi::SymbolIndex> index;
    RepairOptions options;
};
using WheelSetup = std::function<std::variant<WheelJob, NotRepaired>(std::size_t wheel)>;
// `batch`: the options the batch's output names are judged by (refuse_colliding_batch).
std::vector<RepairOutcome> repair_wheels(const std::vector<std::string>& wheels, const WheelSetup& setup,
                                         const RepairOptions& batch, const std::filesystem::path& out_dir,
                                         unsigned jobs);

}  // namespace wheelfix::repair
