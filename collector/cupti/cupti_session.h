// CUPTI in one process: the callback subscription (CUDA contexts and cudaDeviceReset) and the
// activity records, started once by InitializeInjection.
#pragma once

#include <cstdint>
#include <string>

namespace rlscope::cupti {

// Subscribes to CUPTI callbacks and turns on activity records for the feature bits
// (part::FeatureBits). Empty on success; otherwise why CUPTI is unusable here (no driver or GPU,
// another profiler subscribed, insufficient privileges, version skew), with nothing left on.
std::string startCupti(std::uint32_t features);

// The collector's CudaHooks (collector.h), valid once startCupti succeeded.
void flushActivity();
void drainActivity();
void forgetCuptiInForkChild();
void pushOperation(std::uint64_t operationId);
void popOperation();
// At process exit, while CUDA is still usable: the last CUPTI flush; afterwards only decoding.
void finalFlush();

}  // namespace rlscope::cupti
