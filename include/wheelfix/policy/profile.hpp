// Target profiles: what a wheel must be to run on one kind of machine (a CUDA
// runtime major, GPU architectures, where the pip-installed CUDA and torch
// libraries live, a platform tag floor). Data files, not code.
//
// Format (one record a line, fields separated by blanks, '#' to end of line is a
// comment, blank lines skipped -- the same line format as manylinux.policy):
//
//   description TEXT...           free text, at most once
//   cuda-runtime-major N          the libcudart.so.N every extension must link, at most once
//   sm N [N...]                   compute capabilities every CUDA module must run on:
//                                 90, 100, 103, 120, 121 (sm_90 = 90); repeatable
//   rpath PATH                    a directory the RUNPATH of every extension that links
//                                 CUDA or torch libraries must reach; "{root}" is the
//                                 wheel root seen from the member ($ORIGIN/..., as in
//                                 `wheelfix relink`); must start with {root} or $ORIGIN,
//                                 no ':'; repeatable, order kept
//   min-platform TAG              the oldest platform tag the wheel may carry, without
//                                 architecture: manylinux_2_28, manylinux2014,
//                                 musllinux_1_2; at most once
//   replace-needed OLD NEW        a NEEDED soname `repair` swaps; repeatable, OLD unique
//
// Every key is optional but a profile must hold at least one record. Built-in
// profiles (src/policy/data/profiles/*.profile, compiled in): cuda13-blackwell,
// cuda13-blackwell-all, cuda12-hopper.
//
// Contract:
// - parse_profile(text, name, source) parses one profile; any problem is an
//   InputError whose file is "<source>:<line>" and whose problem names the key.
// - load_profile(name_or_path): a value containing '/' or naming an existing file
//   that is not a built-in name is read as a profile file (its name is the file name
//   without ".profile"); otherwise it must be a built-in name, else InputError
//   listing the built-in names.
#pragma once

#include "wheelfix/policy/manylinux.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfix::policy {

struct NeededReplacement {
    std::string from;  // "libfoo.so.1"
    std::string to;
};

struct Profile {
    std::string name;    // "cuda13-blackwell"
    std::string source;  // "built-in" or the file it came from
    std::string description;
    std::optional<int> cuda_runtime_major;
    std::vector<std::uint32_t> sms;          // in file order, no duplicates
    std::vector<std::string> rpaths;         // with {root}, in file order
    std::optional<PlatformTag> min_platform; // kind manylinux/musllinux, major, minor; arch empty
    std::vector<NeededReplacement> replace_needed;

    // "manylinux_2_28" (the PEP 600 spelling of min_platform), or "" when unset.
    std::string min_platform_name() const;
};

Profile parse_profile(std::string_view text, std::string name, std::string source);
Profile load_profile(std::string_view name_or_path);
std::vector<std::string> builtin_profile_names();  // sorted

}  // namespace wheelfix::policy
