// Reads the events of one traceEvents array that scanKinetoLayout split into chunks of whole
// events. Each chunk fits in the CPU caches, so simdjson's stage 1 and the walk over its
// structural index stay in cache (one document of a few hundred MiB sends both through memory,
// and page-faults a structural index larger than itself). With several chunks, a second thread
// parses the next ones while the caller's thread consumes: parsing is most of the work, and the
// events still reach the consumer in document order.
#pragma once

#include <array>
#include <cstddef>
#include <exception>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kineto_event.h"
#include "kineto_layout.h"

namespace rlscope::import::kineto {

class ChunkReader {
 public:
  // Called on the caller's thread with each chunk's events, in document order; `firstIndex` is
  // the index of the first one in the array. The events' views point into `input` and into a
  // parser's buffers, valid until the call returns.
  using Consumer = std::function<void(std::span<const RawEvent> events, std::size_t firstIndex)>;

  // Reads `chunks` of `input` (the whole document). Events before a parse error are consumed,
  // then the error is thrown as a TraceError; so is an exception of the consumer, after the
  // parsing thread has stopped.
  void read(std::string_view input, const std::vector<KinetoLayout::Chunk>& chunks,
            const Consumer& consume);

 private:
  // One chunk of events parsed from a padded copy of its text. The events' views point into
  // `text` and into the parser's string buffer.
  struct ParsedChunk {
    std::string text;
    od::parser parser;
    std::vector<RawEvent> events;  // the first `count` are this chunk's; reused
    std::size_t count = 0;
    std::exception_ptr error;  // parsing stopped after `count` events
  };

  // Runs on the parsing thread: touches only `slot` and the input.
  static void parse(std::string_view input, const KinetoLayout::Chunk& c, ParsedChunk& slot,
                    std::size_t index);

  static constexpr std::size_t kSlots = 3;  // chunks parsed ahead, plus the one consumed
  std::array<ParsedChunk, kSlots> slots_;
};

}  // namespace rlscope::import::kineto
