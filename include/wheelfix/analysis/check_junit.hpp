// `check --junit FILE`: the check report as JUnit XML, so CI systems (GitLab,
// Jenkins, GitHub test reporters, Buildkite) show each extension that would fail
// to load as a failed test case and list what it misses.
//
// Contract: check_junit() returns one document:
//   <testsuites name="wheelfix check" tests failures errors="0">, then per torch
//   <testsuite name="torch <version>" tests failures errors="0" skipped="0"> with
//   properties input and torch_source, then one <testcase> per ELF member checked
//   (classname: the input's file name, name: the member), holding a
//   <failure type="unresolved" message="N unresolved symbol(s), M missing
//   librar(y/ies)"> when anything is missing. The failure text lists each missing
//   library and each unresolved symbol demangled, with its mangled name and
//   version and its near misses. tests and failures count test cases. Text is
//   escaped for XML 1.0: markup characters as entities, control characters other
//   than tab/newline and invalid UTF-8 bytes as U+FFFD, so any symbol name from
//   any file gives well-formed XML. No timestamps: the same input gives the same
//   bytes. Several inputs (check A.whl B.whl …): one document, the testsuites of
//   each input in turn, its input property telling them apart.
#pragma once

#include "wheelfix/analysis/torch_check.hpp"

#include <string>
#include <vector>

namespace wheelfix::analysis {

std::string check_junit(const std::vector<CheckReport>& reports);

}  // namespace wheelfix::analysis
