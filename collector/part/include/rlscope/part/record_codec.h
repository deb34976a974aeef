// Encoding and decoding of part records (format.h). Header-only and allocation-free: the
// collector encodes on its hot path straight into a thread's buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>

#include "rlscope/part/format.h"

namespace rlscope::part {

// Bytes a record of payload P with these strings takes.
template <class P>
constexpr std::size_t encodedSize(std::initializer_list<std::string_view> strings = {}) {
  std::size_t n = sizeof(RecordHeader) + sizeof(P);
  for (auto s : strings) n += sizeof(std::uint32_t) + s.size();
  return n;
}

// Writes the record at `out`, which has room for encodedSize<P>(strings) bytes; returns the end.
template <class P>
inline std::byte* encodeRecord(std::byte* out, RecordType type, const P& payload,
                               std::initializer_list<std::string_view> strings = {}) {
  static_assert(kIsPayload<P>);
  RecordHeader h{static_cast<std::uint16_t>(type), 0,
                 static_cast<std::uint32_t>(encodedSize<P>(strings))};
  std::memcpy(out, &h, sizeof h);
  out += sizeof h;
  std::memcpy(out, &payload, sizeof payload);
  out += sizeof payload;
  for (auto s : strings) {
    auto len = static_cast<std::uint32_t>(s.size());
    std::memcpy(out, &len, sizeof len);
    out += sizeof len;
    if (len) std::memcpy(out, s.data(), len);
    out += len;
  }
  return out;
}

// One record as read back: its type and the bytes after the header.
struct RecordView {
  RecordType type;
  std::span<const std::byte> body;

  // The fixed payload and up to N strings after it; nullopt when the record is too short or a
  // string runs past its end (a corrupt record, never read out of bounds).
  template <class P>
  std::optional<P> payload() const {
    static_assert(kIsPayload<P>);
    if (body.size() < sizeof(P)) return std::nullopt;
    P p;
    std::memcpy(&p, body.data(), sizeof p);
    return p;
  }

  // The i-th string after payload P ("" when absent).
  template <class P>
  std::optional<std::string_view> string(std::size_t index) const {
    std::size_t at = sizeof(P);
    for (std::size_t i = 0;; ++i) {
      if (at == body.size()) return std::string_view{};  // fewer strings than asked: empty
      if (body.size() - at < sizeof(std::uint32_t)) return std::nullopt;
      std::uint32_t len;
      std::memcpy(&len, body.data() + at, sizeof len);
      at += sizeof len;
      if (body.size() - at < len) return std::nullopt;
      if (i == index) return std::string_view(reinterpret_cast<const char*>(body.data() + at), len);
      at += len;
    }
  }
};

}  // namespace rlscope::part
