// CUPTI's Activity API for one process (after Kineto's CuptiActivityApi): the record clock, the
// buffer callbacks, which record kinds are on, flushing, and decoding completed buffers on the
// collector's writer thread rather than on CUPTI's.
//
// Lock rule: no lock of ours is held while calling cuptiActivityFlushAll, because CUPTI calls the
// buffer-completed callback (which takes the buffers' lock) under its own internal lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "activity_buffers.h"
#include "activity_decoder.h"

namespace rlscope::cupti {

class CuptiActivityApi {
 public:
  static CuptiActivityApi& instance();

  // Makes CUPTI timestamp with the collector's clock, registers the buffer callbacks and turns on
  // the record kinds the feature bits ask for. Empty on success, otherwise why not (every kind
  // turned on before the failure is turned off again).
  std::string enable(std::uint32_t features);

  // Forces CUPTI to complete every buffer, partly filled ones too, records how many records CUPTI
  // dropped, and decodes everything into the part.
  void flush();
  // Decodes the buffers CUPTI has completed; about once a second also asks CUPTI (unforced) for
  // the buffers it has finished with, so GPU records reach the part during a long run.
  void drain();
  // At process exit while CUDA still works: flush() for the last time; later flushes only decode.
  void finalFlush();
  // In a fork child: CUPTI's state and the completed buffers are the parent's (which decodes
  // them); never call CUPTI or decode again.
  void abandon();

  bool enabled() const { return enabled_.load(std::memory_order_acquire); }
  ActivityDecoder& decoder() { return decoder_; }
  ActivityBuffers& buffers() { return buffers_; }

 private:
  CuptiActivityApi();
  void decodeCompleted();
  static void CUPTIAPI bufferRequested(std::uint8_t** buffer, std::size_t* size,
                                       std::size_t* maxNumRecords);
  static void CUPTIAPI bufferCompleted(CUcontext context, std::uint32_t streamId,
                                       std::uint8_t* buffer, std::size_t size,
                                       std::size_t validSize);

  ActivityBuffers buffers_;
  std::mutex decodeMutex_;  // one decoder user at a time: writer thread, exit, cudaDeviceReset
  ActivityDecoder decoder_;
  std::vector<std::byte> encoded_;
  std::vector<CUpti_ActivityKind> enabledKinds_;
  std::atomic<bool> enabled_{false};  // CUPTI may be called
  std::atomic<bool> abandoned_{false};
  std::atomic<std::int64_t> lastUnforcedFlushNs_{0};
};

}  // namespace rlscope::cupti
