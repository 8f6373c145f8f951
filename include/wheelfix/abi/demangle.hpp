// C++ symbol names: demangling through the C++ runtime (cxxabi) and the torch
// namespace test used to tell torch imports from everything else.
//
// Contract: demangle() never throws; a name that is not a mangled C++ name (a C
// symbol, garbage) comes back unchanged. top_namespace() reads the Itanium
// mangling directly (no demangling) and returns the outermost namespace of a
// function, variable, vtable, typeinfo or guard variable ("c10" for
// _ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib, "std" for St-prefixed
// names), or an empty string for unnamespaced and C names.
#pragma once

#include <string>
#include <string_view>

namespace wheelfix::abi {

std::string demangle(std::string_view mangled);
std::string top_namespace(std::string_view mangled);
// The namespaces torch's libraries export from: c10, at, torch, caffe2, c10d.
bool is_torch_namespace(std::string_view ns);

}  // namespace wheelfix::abi
