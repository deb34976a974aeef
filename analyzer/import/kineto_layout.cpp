#include "kineto_layout.h"

#include <cstdint>

#include "rlscope/import/input_file.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace rlscope::import {

namespace {

// Deeper documents are left to the parser, whose depth limit then words the error.
constexpr int kMaxDepth = 64;

bool isBlank(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

struct Masks {
  std::uint64_t quote = 0, backslash = 0, bracket = 0, comma = 0;
};

// Bit i set where byte b[i] is a quote, a backslash, a bracket, a comma.
Masks classify(const char* b) {
  Masks m;
#if defined(__SSE2__)
  for (int k = 0; k < 4; ++k) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16 * k));
    // '{' | 0x20 == '[' | 0x20 and '}' | 0x20 == ']' | 0x20; no other byte folds onto them.
    __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
    __m128i brackets = _mm_or_si128(_mm_cmpeq_epi8(folded, _mm_set1_epi8('{')),
                                    _mm_cmpeq_epi8(folded, _mm_set1_epi8('}')));
    auto bits = [k](__m128i x) {
      return static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(x))) << (16 * k);
    };
    m.quote |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
    m.backslash |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
    m.bracket |= bits(brackets);
    m.comma |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(',')));
  }
#else
  for (int i = 0; i < 64; ++i) {
    std::uint64_t bit = std::uint64_t{1} << i;
    char c = b[i];
    if (c == '"') m.quote |= bit;
    if (c == '\\') m.backslash |= bit;
    if (c == '{' || c == '}' || c == '[' || c == ']') m.bracket |= bit;
    if (c == ',') m.comma |= bit;
  }
#endif
  return m;
}

// Bit i of the result: the parity of bits 0..i of x.
std::uint64_t prefixXor(std::uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

// One bracket outside strings: the nesting it opens or closes. False when it closes what is
// not open or nesting goes deeper than kMaxDepth.
bool bracket(char c, std::uint64_t& arrays, int& depth) {
  switch (c) {
    case '{':
    case '[':
      if (depth == kMaxDepth) return false;
      arrays = (arrays << 1) | (c == '[' ? 1u : 0u);
      ++depth;
      return true;
    case '}':
    case ']':
      if (depth == 0 || (arrays & 1) != (c == ']' ? 1u : 0u)) return false;
      arrays >>= 1;
      --depth;
      return true;
    default:
      return true;
  }
}

// Lexical scan only: what lies between the brackets is checked by the parser later, chunk by
// chunk. It needs to be exact about strings (a bracket or comma inside one is text) and about
// bracket nesting, which is what decides where an element ends.
class Scanner {
 public:
  explicit Scanner(std::string_view json)
      : begin_(json.data()), p_(json.data()), end_(json.data() + json.size()) {}

  std::size_t pos() const { return static_cast<std::size_t>(p_ - begin_); }
  bool atEnd() const { return p_ >= end_; }
  bool at(char c) const { return p_ < end_ && *p_ == c; }
  void advance() { ++p_; }
  void blanks() {
    while (p_ < end_ && isBlank(*p_)) ++p_;
  }

  // At '"': moves past the closing quote; false when the string does not end.
  bool string() {
    const char* p = p_ + 1;
    for (;;) {
#if defined(__SSE2__)
      // 16 bytes at a time up to the next quote or backslash: most of a trace is strings. The
      // input's padding covers the bytes read past its end.
      while (p < end_) {
        __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        int hits = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                                  _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
        if (hits) {
          p += __builtin_ctz(static_cast<unsigned>(hits));
          break;
        }
        p += 16;
      }
#else
      while (p < end_ && *p != '"' && *p != '\\') ++p;
#endif
      if (p >= end_) return false;
      if (*p == '"') {
        p_ = p + 1;
        return true;
      }
      p += 2;  // a backslash and the byte it escapes
    }
  }

  // At '{' or '[': moves past the matching bracket.
  bool nested() {
    std::uint64_t arrays = 0;  // one bit per open level: 1 for '[', 0 for '{'
    int depth = 0;
    while (p_ < end_) {
      char c = *p_;
      if (c == '"') {
        if (!string()) return false;
        continue;
      }
      ++p_;
      if (!bracket(c, arrays, depth)) return false;
      if (depth == 0) return true;
    }
    return false;
  }

  // At the '[' of an events array: moves past its ']' and records its element boundaries (a
  // chunk closes at the first top-level comma after chunkBytes). Reads 64 bytes at a time and
  // looks only at the brackets and commas outside strings: this scans the whole input.
  bool eventsArray(std::vector<KinetoLayout::Chunk>& chunks, std::size_t chunkBytes) {
    std::uint64_t arrays = 0;
    int depth = 0;
    std::size_t chunkBegin = pos() + 1;
    std::uint64_t escapedCarry = 0;   // 1: the next block's first byte is escaped
    std::uint64_t inStringCarry = 0;  // all ones: the next block starts inside a string
    for (const char* b = p_; b < end_; b += 64) {
      auto left = static_cast<std::size_t>(end_ - b);
      std::uint64_t valid = left >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << left) - 1;
      Masks m = classify(b);
      // Backslashes are rare in traces: walk them one by one.
      std::uint64_t escaped = escapedCarry;
      escapedCarry = 0;
      for (std::uint64_t bits = m.backslash & valid; bits; bits &= bits - 1) {
        int i = __builtin_ctzll(bits);
        if ((escaped >> i) & 1) continue;  // an escaped backslash escapes nothing
        if (i == 63) {
          escapedCarry = 1;
        } else {
          escaped |= std::uint64_t{1} << (i + 1);
        }
      }
      // Bit i of inString: an odd number of quotes up to byte i.
      std::uint64_t inString = prefixXor(m.quote & ~escaped & valid) ^ inStringCarry;
      inStringCarry = (inString >> 63) ? ~std::uint64_t{0} : 0;
      std::uint64_t wanted = m.bracket;
      auto blockEnd = static_cast<std::size_t>(b - begin_) + 64;
      if (blockEnd - chunkBegin > chunkBytes) wanted |= m.comma;
      for (std::uint64_t bits = wanted & ~inString & valid; bits; bits &= bits - 1) {
        int i = __builtin_ctzll(bits);
        char c = b[i];
        std::size_t at = static_cast<std::size_t>(b - begin_) + static_cast<std::size_t>(i);
        if (c == ',') {
          if (depth == 1 && at - chunkBegin >= chunkBytes) {
            chunks.push_back({chunkBegin, at});
            chunkBegin = at + 1;
          }
          continue;
        }
        if (!bracket(c, arrays, depth)) return false;
        if (depth == 0) {
          chunks.push_back({chunkBegin, at});
          p_ = begin_ + at + 1;
          return true;
        }
      }
    }
    return false;
  }

  // Any value; a scalar runs to the next delimiter (the parser checks its spelling).
  bool value() {
    if (p_ >= end_) return false;
    if (*p_ == '"') return string();
    if (*p_ == '{' || *p_ == '[') return nested();
    const char* start = p_;
    while (p_ < end_ && !isBlank(*p_) && *p_ != ',' && *p_ != '}' && *p_ != ']') ++p_;
    return p_ > start;
  }

 private:
  const char* begin_;
  const char* p_;
  const char* end_;
};

}  // namespace

std::optional<KinetoLayout> scanKinetoLayout(std::string_view json, std::size_t chunkBytes) {
  Scanner s(json);
  KinetoLayout layout;
  std::vector<KinetoLayout::Chunk> removed;  // the interiors of the events arrays
  auto eventsArray = [&] {
    std::size_t open = s.pos();
    layout.arrays.emplace_back();
    if (!s.eventsArray(layout.arrays.back(), chunkBytes)) return false;
    removed.push_back({open + 1, s.pos() - 1});
    return true;
  };
  s.blanks();
  if (s.at('[')) {
    if (!eventsArray()) return std::nullopt;
  } else if (s.at('{')) {
    s.advance();
    s.blanks();
    if (s.at('}')) {
      s.advance();
    } else {
      for (;;) {
        if (!s.at('"')) return std::nullopt;
        std::size_t keyBegin = s.pos() + 1;
        if (!s.string()) return std::nullopt;
        auto key = json.substr(keyBegin, s.pos() - 1 - keyBegin);
        // What an escaped key means is the parser's business.
        if (key.find('\\') != std::string_view::npos) return std::nullopt;
        s.blanks();
        if (!s.at(':')) return std::nullopt;
        s.advance();
        s.blanks();
        if (key == "traceEvents") {
          if (!s.at('[') || !eventsArray()) return std::nullopt;
        } else if (!s.value()) {
          return std::nullopt;
        }
        s.blanks();
        if (s.at(',')) {
          s.advance();
          s.blanks();
          continue;
        }
        if (!s.at('}')) return std::nullopt;
        s.advance();
        break;
      }
    }
  } else {
    return std::nullopt;
  }
  s.blanks();
  if (!s.atEnd()) return std::nullopt;  // trailing content: the parser words the error

  std::size_t kept = json.size();
  for (const auto& r : removed) kept -= r.end - r.begin;
  layout.skeleton.reserve(kept + kJsonPadding);
  std::size_t from = 0;
  for (const auto& r : removed) {
    layout.skeleton.append(json.substr(from, r.begin - from));
    from = r.end;
  }
  layout.skeleton.append(json.substr(from));
  layout.skeletonSize = layout.skeleton.size();
  layout.skeleton.resize(layout.skeletonSize + kJsonPadding, ' ');
  return layout;
}

}  // namespace rlscope::import
