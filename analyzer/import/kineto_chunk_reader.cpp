#include "kineto_chunk_reader.h"

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "rlscope/import/input_file.h"
#include "rlscope/trace/error.h"

namespace rlscope::import::kineto {

void ChunkReader::read(std::string_view input, const std::vector<KinetoLayout::Chunk>& chunks,
                       const Consumer& consume) {
  std::size_t index = 0;
  auto consumeSlot = [&](ParsedChunk& c) {
    consume(std::span<const RawEvent>(c.events.data(), c.count), index);
    index += c.count;
    if (c.error) std::rethrow_exception(c.error);
    // A chunk without an element lies between two commas: "[{...},]" split at its comma.
    if (c.count == 0 && chunks.size() > 1) {
      throw trace::TraceError(errorText(simdjson::TAPE_ERROR));
    }
  };
  if (chunks.size() == 1) {
    parse(input, chunks[0], slots_[0], 0);
    return consumeSlot(slots_[0]);
  }
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t parsed = 0, consumed = 0;
  bool stop = false;
  std::thread parser([&] {
    std::size_t parseIndex = 0;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      ParsedChunk& slot = slots_[i % kSlots];
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return stop || i - consumed < kSlots; });
        if (stop) return;
      }
      parse(input, chunks[i], slot, parseIndex);
      parseIndex += slot.count;
      {
        std::lock_guard lock(mutex);
        parsed = i + 1;
      }
      changed.notify_all();
      if (slot.error) return;
    }
  });
  // Stops and joins the parsing thread however this function ends.
  struct Join {
    std::thread& thread;
    std::mutex& mutex;
    std::condition_variable& changed;
    bool& stop;
    ~Join() {
      {
        std::lock_guard lock(mutex);
        stop = true;
      }
      changed.notify_all();
      thread.join();
    }
  } join{parser, mutex, changed, stop};
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    ParsedChunk& slot = slots_[i % kSlots];
    {
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] { return parsed > i; });
    }
    consumeSlot(slot);
    {
      std::lock_guard lock(mutex);
      consumed = i + 1;
    }
    changed.notify_all();
  }
}

void ChunkReader::parse(std::string_view input, const KinetoLayout::Chunk& c, ParsedChunk& slot,
                        std::size_t index) {
  slot.count = 0;
  slot.error = nullptr;
  try {
    std::size_t n = c.end - c.begin;
    if (slot.text.size() < n + 2 + kJsonPadding) slot.text.resize(n + 2 + kJsonPadding);
    slot.text[0] = '[';
    std::memcpy(slot.text.data() + 1, input.data() + c.begin, n);
    slot.text[n + 1] = ']';
    auto doc = need(slot.parser.iterate(slot.text.data(), n + 2, slot.text.size()), "traceEvents");
    for (auto element : need(doc.get_array(), "traceEvents")) {
      if (slot.count == slot.events.size()) slot.events.emplace_back();
      readElement(std::move(element), slot.events[slot.count],
                  Where("traceEvents", index + slot.count));
      ++slot.count;
    }
    const char* trailing = nullptr;
    if (!doc.current_location().get(trailing)) {
      throw trace::TraceError(errorText(simdjson::TRAILING_CONTENT));
    }
  } catch (...) {
    slot.error = std::current_exception();
  }
}

}  // namespace rlscope::import::kineto
