// The CUDA runtime calls of a test program that runs on the fake GPU (fake_cupti.cpp): each one
// makes the records CUPTI makes for the real call (the API record, the kernel, copy, memset or
// synchronisation it caused, the external correlation of the operation open on the thread) and
// invokes the CUPTI callbacks the real call would. Timestamps come from the clock the profiler
// registered; GPU work "runs" for a few microseconds inside its call.
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  unsigned x, y, z;
} FakeDim3;

enum FakeCopyKind { kFakeHostToDevice = 1, kFakeDeviceToHost = 2 };

// cudaLaunchKernel of the kernel with this (mangled) name; the name must outlive the process's
// last CUPTI flush (a string literal), as CUPTI's own kernel names do.
void fakeCudaLaunchKernel(const char* name, FakeDim3 grid, FakeDim3 block, int registersPerThread,
                          unsigned stream);
// cudaMemcpyAsync on the stream, or cudaMemcpy (synchronous, stream 0) when async is 0.
void fakeCudaMemcpy(size_t bytes, enum FakeCopyKind kind, int async, unsigned stream);
void fakeCudaMemsetAsync(size_t bytes, unsigned stream);
void fakeCudaStreamSynchronize(unsigned stream);
void fakeCudaDeviceSynchronize(void);
// cudaGetDevice: a call the collector switches off in CUPTI, so it must never reach a trace.
void fakeCudaGetDevice(void);
// cudaDeviceReset: the runtime-API callback at entry, then the context's destruction.
void fakeCudaDeviceReset(void);

#ifdef __cplusplus
}
#endif
