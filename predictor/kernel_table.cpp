#include "rlscope/predictor/kernel_table.h"

#include <algorithm>
#include <charconv>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace rlscope::predictor {
namespace {

enum class Column {
  kGrid,
  kBlock,
  kRegs,
  kSmemStatic,
  kSmemDynamic,
  kTimeUs,
  kDramBytes,
  kFlops,
  kTargetRegs,
  kName,
  kGemm,
  kConv,
  kOther
};

Column columnOf(std::string_view name) {
  static const std::pair<std::string_view, Column> kNames[] = {
      {"grid", Column::kGrid},
      {"block", Column::kBlock},
      {"regs", Column::kRegs},
      {"smem_static", Column::kSmemStatic},
      {"smem_dynamic", Column::kSmemDynamic},
      {"time_us", Column::kTimeUs},
      {"dram_bytes", Column::kDramBytes},
      {"flops", Column::kFlops},
      {"target_regs", Column::kTargetRegs},
      {"name", Column::kName},
      {"gemm", Column::kGemm},
      {"conv", Column::kConv},
  };
  for (const auto& [n, c] : kNames)
    if (n == name) return c;
  return Column::kOther;
}

// The fields of one CSV record on one line (RFC 4180 quoting; no line breaks inside fields).
// `fields` keeps its capacity from row to row.
void splitCsv(std::string_view line, std::vector<std::string>& fields) {
  fields.clear();
  std::string field;
  std::size_t i = 0;
  while (true) {
    field.clear();
    if (i < line.size() && line[i] == '"') {
      ++i;
      while (true) {
        if (i >= line.size()) throw std::runtime_error("a quoted field is not closed");
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += line[i++];
      }
      if (i < line.size() && line[i] != ',') throw std::runtime_error("text after a quoted field");
    } else {
      std::size_t comma = line.find(',', i);
      field.assign(line.substr(i, comma == std::string_view::npos ? line.npos : comma - i));
      i = comma == std::string_view::npos ? line.size() : comma;
    }
    fields.push_back(field);
    if (i >= line.size()) return;
    ++i;  // the comma
  }
}

template <typename T>
T number(std::string_view text, std::string_view column) {
  T v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0)
    throw std::runtime_error("column " + std::string(column) + ": '" + std::string(text) +
                             "' is not a non-negative number");
  return v;
}

}  // namespace

DescribedKernel describe(const KernelDescription& k) {
  if (k.grid.empty() || k.resources.blockSize <= 0 || k.timeUs <= 0)
    throw std::runtime_error("a kernel needs its grid, block and time_us");
  DescribedKernel d;
  d.traits = classifyKernel(k.name);
  Work work;
  if (!k.gemm.empty() || !k.conv.empty()) {
    if (!k.gemm.empty() && !k.conv.empty())
      throw std::runtime_error("a kernel is a GEMM or a convolution, not both");
    // A GEMM or convolution is a library's, re-tuned per GPU (NCCL names stay communication).
    if (d.traits.kind == KernelKind::kWaveScaled) d.traits.kind = KernelKind::kLibrary;
    if (k.gemm.empty()) {
      d.launch.conv = parseConv(k.conv, "conv");
      work = convWork(*d.launch.conv, d.traits.precision);
      d.traits.family = KernelFamily::kConv;
    } else {
      d.launch.gemm = parseGemm(k.gemm, "gemm");
      work = gemmWork(*d.launch.gemm, d.traits.precision);
      d.traits.family = KernelFamily::kGemm;
    }
  }
  d.launch.blocks = parseGrid(k.grid, "grid");
  d.launch.resources = k.resources;
  d.launch.timeNs = k.timeUs * 1e3;
  d.launch.flops = k.flops > 0 ? k.flops : work.flops;
  d.launch.dramBytes = k.dramBytes > 0 ? k.dramBytes : work.dramBytes;
  d.launch.targetRegistersPerThread = k.targetRegs;
  return d;
}

KernelTableStats predictKernelTable(std::istream& in, std::ostream& out,
                                    const KernelPredictor& predictor, const std::string& source) {
  KernelTableStats stats;
  std::string line;
  std::size_t lineNo = 0;
  auto fail = [&](const std::string& why) {
    throw std::runtime_error(source + " line " + std::to_string(lineNo) + ": " + why);
  };
  std::vector<Column> columns;
  std::vector<std::string> fields;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (columns.empty()) {
      try {
        splitCsv(line, fields);
      } catch (const std::exception& e) {
        fail(e.what());
      }
      for (const auto& f : fields) columns.push_back(columnOf(f));
      for (Column required : {Column::kGrid, Column::kBlock, Column::kTimeUs})
        if (std::find(columns.begin(), columns.end(), required) == columns.end())
          fail("the header needs the columns grid, block and time_us");
      out << line << ",predicted_us\n";
      continue;
    }
    if (line.empty()) continue;
    KernelDescription k;
    try {
      splitCsv(line, fields);
      if (fields.size() != columns.size())
        fail(std::to_string(fields.size()) + " fields where the header has " +
             std::to_string(columns.size()));
      for (std::size_t i = 0; i < fields.size(); ++i) {
        const std::string& f = fields[i];
        if (f.empty()) continue;
        switch (columns[i]) {
          case Column::kGrid:
            k.grid = f;
            break;
          case Column::kBlock:
            k.resources.blockSize = number<int>(f, "block");
            break;
          case Column::kRegs:
            k.resources.registersPerThread = number<int>(f, "regs");
            break;
          case Column::kSmemStatic:
            k.resources.staticSharedMemory = number<int>(f, "smem_static");
            break;
          case Column::kSmemDynamic:
            k.resources.dynamicSharedMemory = number<int>(f, "smem_dynamic");
            break;
          case Column::kTimeUs:
            k.timeUs = number<double>(f, "time_us");
            break;
          case Column::kDramBytes:
            k.dramBytes = number<double>(f, "dram_bytes");
            break;
          case Column::kFlops:
            k.flops = number<double>(f, "flops");
            break;
          case Column::kTargetRegs:
            k.targetRegs = number<int>(f, "target_regs");
            break;
          case Column::kName:
            k.name = f;
            break;
          case Column::kGemm:
            k.gemm = f;
            break;
          case Column::kConv:
            k.conv = f;
            break;
          case Column::kOther:
            break;
        }
      }
      DescribedKernel d = describe(k);
      KernelPrediction p = predictor.predict(d.launch, d.traits);
      if (p.method == Method::kCannotPredict) ++stats.cannotPredict;
      char buf[32];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, p.timeNs / 1e3);
      out << line << ',' << std::string_view(buf, static_cast<std::size_t>(end - buf)) << '\n';
      ++stats.kernels;
    } catch (const std::runtime_error& e) {
      std::string what = e.what();
      if (what.rfind(source + " line ", 0) == 0) throw;
      fail(what);
    }
  }
  if (columns.empty()) fail("no header row");
  return stats;
}

}  // namespace rlscope::predictor
