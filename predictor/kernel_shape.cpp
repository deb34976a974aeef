#include "rlscope/predictor/kernel_shape.h"

#include <array>
#include <charconv>
#include <stdexcept>
#include <string>

namespace rlscope::predictor {
namespace {

// Up to N integers separated by ',' or 'x'; `minimum` of them, each in [floor, ceiling].
template <std::size_t N>
std::array<std::int64_t, N> parseNumbers(std::string_view text, std::size_t minimum,
                                         std::int64_t floor, std::int64_t ceiling,
                                         std::string_view what, const char* form) {
  std::array<std::int64_t, N> out{};
  std::size_t count = 0;
  const char* p = text.data();
  const char* end = p + text.size();
  auto bad = [&]() {
    return std::runtime_error(std::string(what) + " '" + std::string(text) + "' is not " + form);
  };
  while (p < end) {
    std::int64_t v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || v < floor || v > ceiling || count == N) throw bad();
    out[count++] = v;
    p = next;
    if (p < end && (*p == ',' || *p == 'x') && p + 1 < end)
      ++p;
    else if (p < end)
      throw bad();
  }
  if (count < minimum) throw bad();
  return out;
}

}  // namespace

int elementBytes(Precision precision) {
  return precision == Precision::kFp16 || precision == Precision::kBf16 ? 2 : 4;
}

Work gemmWork(const GemmShape& g, Precision precision) {
  double b = static_cast<double>(g.batch), m = static_cast<double>(g.m),
         n = static_cast<double>(g.n), k = static_cast<double>(g.k);
  return {2 * b * m * n * k, elementBytes(precision) * b * (m * k + k * n + m * n)};
}

Work convWork(const ConvShape& c, Precision precision) {
  std::int64_t outH = (c.h + 2 * c.pad - c.r) / c.stride + 1;
  std::int64_t outW = (c.w + 2 * c.pad - c.s) / c.stride + 1;
  if (c.h + 2 * c.pad < c.r || c.w + 2 * c.pad < c.s || outH <= 0 || outW <= 0)
    throw std::runtime_error("the convolution's filter is larger than its padded input");
  double n = static_cast<double>(c.n), ch = static_cast<double>(c.c), k = static_cast<double>(c.k),
         rs = static_cast<double>(c.r * c.s), out = static_cast<double>(outH * outW),
         in = static_cast<double>(c.h * c.w);
  return {2 * n * k * out * ch * rs,
          elementBytes(precision) * (n * ch * in + k * ch * rs + n * k * out)};
}

GemmShape parseGemm(std::string_view text, std::string_view what) {
  auto v = parseNumbers<4>(text, 4, 1, std::int64_t{1} << 40, what, "B,M,N,K of positive numbers");
  return {v[0], v[1], v[2], v[3]};
}

ConvShape parseConv(std::string_view text, std::string_view what) {
  auto v = parseNumbers<9>(text, 9, 0, std::int64_t{1} << 40, what,
                           "N,C,K,H,W,R,S,STRIDE,PAD of numbers");
  for (std::size_t i = 0; i < 8; ++i)
    if (v[i] <= 0)
      throw std::runtime_error(std::string(what) + " '" + std::string(text) +
                               "': N..STRIDE must be positive");
  return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]};
}

std::int64_t parseGrid(std::string_view text, std::string_view what) {
  auto v =
      parseNumbers<3>(text, 1, 1, std::int64_t{1} << 31, what, "G or X,Y,Z of positive numbers");
  std::int64_t blocks = 1;
  for (auto d : v)
    if (d > 0) blocks *= d;
  return blocks;
}

}  // namespace rlscope::predictor
