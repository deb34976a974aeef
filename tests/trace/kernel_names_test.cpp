// Kernel names (trace/kernel_names.h): the collector's merge and the Kineto importer label a
// kernel the same way, as nsys does.
#include "rlscope/trace/kernel_names.h"

#include <gtest/gtest.h>

namespace rlscope::trace {
namespace {

TEST(KernelNames, DemanglesSymbolsAndLeavesOtherNamesAlone) {
  EXPECT_EQ(demangleKernelName("_Z10add_kernelPfPKfS1_i"),
            "add_kernel(float*, float const*, float const*, int)");
  EXPECT_EQ(demangleKernelName("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(demangleKernelName("void at::f<int>(int)"), "void at::f<int>(int)");
  EXPECT_EQ(demangleKernelName(""), "");
}

TEST(KernelNames, ShortNameIsTheFunctionsOwnName) {
  EXPECT_EQ(shortKernelName("add_kernel(float*, float const*, float const*, int)"), "add_kernel");
  // A Kineto kernel name: return type, namespaces, template arguments with nested brackets.
  EXPECT_EQ(
      shortKernelName("void at::native::vectorized_elementwise_kernel<4, "
                      "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >"
                      "(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"),
      "vectorized_elementwise_kernel");
  EXPECT_EQ(shortKernelName("ampere_sgemm_128x64_tn"), "ampere_sgemm_128x64_tn");
  EXPECT_EQ(shortKernelName("ns::Outer<int>::inner(int)"), "inner");
  EXPECT_EQ(shortKernelName("void (anonymous namespace)::softmax_warp<float, 8>(float*, int)"),
            "softmax_warp");
  EXPECT_EQ(shortKernelName("void cub::DeviceReduceKernel<cub::Policy<(int)600>, float*>(float*)"),
            "DeviceReduceKernel");
  // Nothing left: the name itself.
  EXPECT_EQ(shortKernelName("<lambda>"), "<lambda>");
  EXPECT_EQ(shortKernelName(""), "");
}

}  // namespace
}  // namespace rlscope::trace
