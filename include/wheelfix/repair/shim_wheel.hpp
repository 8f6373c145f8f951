// shim: make a wheel's extensions load against a torch they were not built for, by
// adding a generated shim library (abi/shim.hpp) that defines the torch symbols
// the target torch no longer exports.
//
// Contract: shim_wheel(wheel, torch, out_dir, maps) loads the torch's symbol index
// (abi/symbol_index.hpp: package directory, torch wheel or index file) and reads the
// wheel once, as a plan run by the one executor (plan.hpp): every ELF member with
// a dynamic section is checked (abi::check_elf) on its one parse by a ShimPlanner
// (shim_planner.hpp, which has the order of authority between --map, the drift data
// and near misses, and what cannot be shimmed).
// One shim per call (one target torch), at shim_directory()/<shim file>, with
// RUNPATH "$ORIGIN/../torch/lib". Every affected extension gets an edit step, the
// shim_links (relink's request_for); the wheel is written to out_dir/<same name>
// (plan.hpp: its refusals, `overwrite`, `dry_run` and ShimResult::plan).
// METADATA's torch requirement becomes the shimmed torch's minor series (retag.hpp
// pin_for_torch: within the author's, superseding an earlier retag's pin), so pip
// installs the wheel beside the torch it was shimmed for; `requirements` lists the change.
// When nothing needs a shim, the wheel is copied unchanged (RECORD kept), but for a
// variant wheel's variant: in every case a variant wheel (a label, or a
// variant.json) has its ELF members analysed on the read's one parse and its variant
// derived again for the output in the same plan (variant.hpp label_output):
// abi_dependency :: torch follows the pin written; the label is kept, or made again
// when it was auto-made (ShimResult::variant).
// The shim is foreseen before the read (repair/foresight.hpp, as repair does), so
// the extensions that need it are edited as they are read (plan.hpp).
// Refused (InputError): what ShimPlanner refuses (shim_planner.hpp), a torch index
// without a version, writing over the input.
#pragma once

#include "wheelfix/repair/relink.hpp"
#include "wheelfix/repair/shim_planner.hpp"
#include "wheelfix/wheel/wheel.hpp"

#include <filesystem>
#include <string>

namespace wheelfix::repair {

// Where a wheel's shim lives ("<distribution>.libs", auditwheel's convention) and
// the links that wire it into an extension (its SONAME appended to NEEDED,
// "{root}/<dist>.libs" to the search path).
std::string shim_directory(const wheel::Wheel& wheel);
Links shim_links(const wheel::Wheel& wheel, const abi::ShimLibrary& library);
// `library` added to `plan` at shim_directory()/<its file name>, and kept (without its
// bytes) in result.shim and result.shim_member; returns its shim_links.
Links add_shim(const wheel::Wheel& wheel, abi::ShimLibrary library, WheelPlan& plan, ShimResult& result);

ShimResult shim_wheel(const std::filesystem::path& wheel, const std::filesystem::path& torch,
                      const std::filesystem::path& out_dir, const SymbolMap& maps, bool overwrite = false,
                      bool dry_run = false);

}  // namespace wheelfix::repair
