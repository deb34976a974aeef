// Where the events of a Kineto JSON document lie, found by a lexical scan (strings, escapes,
// brackets) much cheaper than parsing. The importer then parses the `traceEvents` arrays in
// chunks of whole events that fit in the CPU caches, instead of running simdjson's stage 1 over
// the whole document and walking a structural index several times larger than the caches.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rlscope::import {

struct KinetoLayout {
  // A run of whole elements of an events array: the text between two of its top-level commas
  // (or its brackets), excluding them.
  struct Chunk {
    std::size_t begin = 0, end = 0;
  };
  // The document with the interior of every events array removed ("traceEvents": [] in place of
  // the events), followed by kJsonPadding spare bytes: the importer parses it as before and
  // reads the events from `arrays`, in document order.
  std::string skeleton;
  std::size_t skeletonSize = 0;
  std::vector<std::vector<Chunk>> arrays;
};

// The layout of `json` (readable kJsonPadding bytes past its end), with chunks of about
// `chunkBytes`; nullopt when the text is not lexically well-formed JSON or has a shape the scan
// does not handle (escapes in top-level keys, a non-array traceEvents, deep nesting): the caller
// then parses the whole document in one piece, which also words the errors.
std::optional<KinetoLayout> scanKinetoLayout(std::string_view json, std::size_t chunkBytes);

}  // namespace rlscope::import
