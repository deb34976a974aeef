// A GPU kernel's names as the trace stores them (CUPTI_ACTIVITY_KIND_KERNEL's mangledName,
// demangledName, shortName): one answer for the same kernel whichever producer wrote the trace.
#pragma once

#include <string>
#include <string_view>

namespace rlscope::trace {

// The C++ demangling of a mangled symbol; the name itself when it is not one (a C kernel, a
// name that is already demangled).
std::string demangleKernelName(const std::string& mangled);

// nsys's shortName: the function's own name, without scope, template arguments, parameters or
// return type ("void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)" →
// "vectorized_elementwise_kernel"). The demangled name itself when nothing is left.
std::string shortKernelName(std::string_view demangled);

}  // namespace rlscope::trace
