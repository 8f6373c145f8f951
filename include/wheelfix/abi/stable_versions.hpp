// When each of torch's stable C ABI functions became available, by torch's own account.
//
// Contract: stable_abi_versions() parses src/abi/data/torch_stable_versions.txt, embedded
// at build time, once. That file is PyTorch's torch/csrc/stable/c/shim_function_versions.txt
// unchanged (its origin and licence: torch_stable_versions.NOTICE beside it): lines
// "<name>: TORCH_VERSION_<major>_<minor>_<patch>", '#' comments and blank lines. It names
// what became available in 2.10.0 or later; a function it does not name was available
// before 2.10.0 by its account. parse_stable_abi_versions() reads the same format from
// any text and throws InputError(origin, "line N: …") for any other line or a name given
// twice. stable_abi_since(name) is the release ("2.11.0") the list states for `name`,
// nullopt when the list does not name it. The verdict takes a stable-ABI floor from it
// (torch_verdict.hpp): the newest release stated for any function a wheel imports.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::abi {

struct StableAbiVersion {
    std::string name;     // "torch_from_blob"
    std::string release;  // "2.11.0"
};

const std::vector<StableAbiVersion>& stable_abi_versions();
std::vector<StableAbiVersion> parse_stable_abi_versions(std::string_view text, const std::string& origin);
std::optional<std::string> stable_abi_since(std::string_view name);

}  // namespace wheelfix::abi
