#include "rlscope/report/markdown_report.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "report_sections.h"
#include "report_text.h"
#include "rlscope/report/analysis_document.h"

namespace rlscope::report {

namespace {

using Row = std::vector<std::string>;

std::string md(const std::string& s) {
  return markdownEscape(s);
}

// `right` marks right-aligned (numeric) columns; cells are already escaped.
std::string table(const Row& headers, const std::vector<bool>& right,
                  const std::vector<Row>& rows) {
  std::ostringstream out;
  auto line = [&](const Row& cells) {
    out << "|";
    for (const auto& c : cells) out << " " << c << " |";
    out << "\n";
  };
  line(headers);
  out << "|";
  for (std::size_t i = 0; i < headers.size(); ++i)
    out << (i < right.size() && right[i] ? " ---: |" : " --- |");
  out << "\n";
  for (const auto& r : rows) line(r);
  return out.str() + "\n";
}

std::string notAvailable(const std::string& why) {
  return "_" + md(std::string(kNotAvailable) + ": " + why) + "_\n\n";
}

std::string itemTable(const std::vector<Item>& items) {
  std::vector<Row> rows;
  for (const auto& i : items) rows.push_back({md(i.label), md(i.value)});
  return table({"Metric", "Value"}, {false, true}, rows);
}

std::string header(const Analysis& a) {
  std::ostringstream out;
  out << "## rlscope report\n\n";
  out << "Trace " << (a.trace.empty() ? std::string(kNotAvailable) : "**" + md(a.trace) + "**")
      << " · " << (a.corrected ? "**overhead corrected**" : "**uncorrected**");
  if (a.correction && a.correction->biasPct) out << " (bias " << biasText(*a.correction) << ")";
  out << " · wall time " << (a.totalUs ? formatDuration(*a.totalUs) : std::string(kNotAvailable));
  auto processes = processesOf(a);
  out << " · " << processes.size() << (processes.size() == 1 ? " process" : " processes") << "\n\n";
  return out.str();
}

std::string operationTable(const Analysis& a, std::int64_t process) {
  OperationColumns columns = operationColumns(a);
  double processUs = processTimeUs(a, process);
  Row headers = {"Operation"};
  std::vector<bool> right = {false};
  auto add = [&](const char* h, bool numeric) {
    headers.push_back(h);
    right.push_back(numeric);
  };
  if (columns.phase) add("Phase", false);
  if (columns.instances) add("Instances", true);
  for (const char* h : {"Time", "%", "CPU", "CPU+GPU", "GPU", "Waiting", "GPU-bound %"})
    add(h, true);
  if (columns.launchedGpu) add("Launched GPU", true);
  // Time, %, CPU, CPU+GPU, GPU, Waiting, GPU-bound %: the cells an operation and the total share.
  auto times = [&](const Operation& o) {
    return Row{formatDuration(o.timeUs),
               formatPercent(o.timeUs, processUs),
               formatDuration(o.cpuUs),
               formatDuration(o.cpuGpuUs),
               formatDuration(o.gpuUs),
               formatDuration(o.waitingUs),
               formatPercent(o.gpuBoundUs, o.timeUs)};
  };
  std::vector<Row> rows;
  auto ops = operationsOf(a, process);
  for (const Operation* op : ops) {
    Row r = {md(op->name)};
    if (columns.phase) r.push_back(md(op->phase));
    if (columns.instances) r.push_back(op->instances ? std::to_string(*op->instances) : "n/a");
    for (auto& cell : times(*op)) r.push_back(std::move(cell));
    if (columns.launchedGpu) r.push_back(formatDuration(op->launchedGpuUs));
    rows.push_back(std::move(r));
  }
  Row total = {"**All operations**"};
  if (columns.phase) total.push_back("");
  if (columns.instances) total.push_back("");
  for (const auto& cell : times(totalOf(ops))) total.push_back("**" + cell + "**");
  if (columns.launchedGpu) total.push_back("");
  rows.push_back(std::move(total));
  return table(headers, right, rows);
}

// What the HTML bars draw, as numbers: each operation's time per category set (Python, Backend,
// Simulator, Backend+GPU kernel, ...), only the sets this process ran in.
std::string categoryTable(const Analysis& a, std::int64_t process) {
  auto ops = operationsOf(a, process);
  std::vector<std::vector<std::string>> sets;
  for (const auto& set : categorySetsOf(a))
    for (const Operation* op : ops)
      if (std::any_of(op->categories.begin(), op->categories.end(),
                      [&](const CategorySetTime& c) { return c.set == set && c.timeUs > 0; })) {
        sets.push_back(set);
        break;
      }
  if (sets.empty()) return {};
  Row headers = {"Operation"};
  std::vector<bool> right = {false};
  for (const auto& set : sets) {
    headers.push_back(md(setLabel(set)));
    right.push_back(true);
  }
  std::vector<Row> rows;
  for (const Operation* op : ops) {
    Row r = {md(op->name)};
    for (const auto& set : sets) {
      double us = 0;
      for (const auto& c : op->categories)
        if (c.set == set) us += c.timeUs;
      r.push_back(us > 0 ? formatDuration(us) : "");
    }
    rows.push_back(std::move(r));
  }
  return table(headers, right, rows);
}

std::string operationsSection(const Analysis& a) {
  std::ostringstream out;
  out << "### Time per operation\n\n";
  if (a.operations.empty()) return out.str() + notAvailable("the analysis has no operations");
  auto processes = processesOf(a);
  for (std::int64_t p : processes) {
    if (processes.size() > 1)
      out << "#### Process " << p << " · " << formatDuration(processTimeUs(a, p)) << " traced\n\n";
    out << operationTable(a, p) << categoryTable(a, p);
  }
  out << md(kPercentNote) << " " << md(kGpuBoundNote) << "\n\n";
  return out.str();
}

std::string predictedOperations(const PredictionSection& p) {
  auto top = topPredictedOperations(p);
  std::vector<Row> rows;
  for (const PredictedOperation* op : top)
    rows.push_back({md(predictedOperationTitle(p, *op)), formatDuration(op->originUs),
                    predictedWithError(op->predictedUs, op->expectedErrorUs),
                    formatChange(op->originUs, op->predictedUs), formatFactor(op->gpuScale)});
  std::string out = table({"Operation", "Origin", "Predicted", "Change", "GPU x"},
                          {false, true, true, true, true}, rows);
  if (top.size() < p.operations.size())
    out += "The " + std::to_string(top.size()) + " longest of " +
           std::to_string(p.operations.size()) + " operations.\n\n";
  return out + md(kPredictionNote) + "\n\n";
}

std::string predictedKernels(const PredictionSection& p) {
  auto top = topPredictedKernels(p);
  std::vector<Row> rows;
  for (const PredictedKernel* k : top) {
    std::string launches = formatCount(k->launches);
    if (k->cannotPredict && *k->cannotPredict > 0)
      launches += " (" + formatCount(*k->cannotPredict) + " not predicted)";
    rows.push_back(
        {md(k->name), launches, formatDuration(k->originUs),
         predictedWithErrorFraction(k->predictedUs, k->expectedError),
         k->originUs && k->predictedUs ? formatChange(*k->originUs, *k->predictedUs) : "n/a",
         md(k->method.empty() ? "n/a" : k->method), formatGamma(k->gamma)});
  }
  std::string out =
      table({"Kernel", "Launches", "Origin", "Predicted", "Change", "Method", "Gamma"},
            {false, true, true, true, true, false, true}, rows);
  if (top.size() < p.kernels.size())
    out += "The " + std::to_string(top.size()) + " longest of " + std::to_string(p.kernels.size()) +
           " kernel names.\n\n";
  return out;
}

// Only when the document has a prediction (`--target`): no "not available" for the common case.
std::string predictionSection(const Analysis& a) {
  if (!a.prediction) return {};
  const PredictionSection& p = *a.prediction;
  std::string out = "### " + md(predictionTitle(p)) + "\n\n";
  std::string missing = predictionMissingReason(p);
  if (!missing.empty()) return out + notAvailable(missing);
  if (!p.verdict.empty()) out += "> **" + md(p.verdict) + "**\n\n";
  out += itemTable(predictionItems(p));
  if (!p.operations.empty()) out += predictedOperations(p);
  if (!p.kernels.empty()) out += predictedKernels(p);
  for (const auto& note : p.notes) out += "Note: " + md(note) + "\n\n";
  return out + md(kPredictorPointer) + "\n\n";
}

std::string kernelsSection(const Analysis& a) {
  std::ostringstream out;
  out << "### GPU kernels\n\n";
  std::string missing = gpuMissingReason(a);
  if (!missing.empty()) return out.str() + notAvailable(missing);
  const GpuSection& gpu = *a.gpu;
  if (!gpu.classes.empty()) {
    double all = 0;
    for (const auto& [name, us] : gpu.classes) all += us;
    std::vector<Row> rows;
    for (const auto& [name, us] : gpu.classes)
      rows.push_back({md(name), formatDuration(us), formatPercent(us, all)});
    out << table({"Class", "Time", "%"}, {false, true, true}, rows);
  }
  if (gpu.kernels.empty()) return out.str() + notAvailable("the analysis lists no kernels");
  double all = kernelTimeUs(gpu);
  std::vector<Row> rows;
  auto top = topKernels(gpu);
  for (const Kernel* k : top)
    rows.push_back({md(k->name), md(k->kernelClass.empty() ? "n/a" : k->kernelClass),
                    formatCount(k->count), formatDuration(k->totalUs),
                    k->totalUs ? formatPercent(*k->totalUs, all) : "n/a", formatDuration(k->meanUs),
                    formatDuration(k->maxUs)});
  out << table({"Kernel", "Class", "Count", "Total", "%", "Mean", "Max"},
               {false, false, true, true, true, true, true}, rows);
  if (top.size() < gpu.kernels.size())
    out << "The " << top.size() << " longest of " << gpu.kernels.size() << " kernel names.\n\n";
  return out.str();
}

std::string idleSection(const Analysis& a) {
  std::string out = "### GPU idle time\n\n";
  std::string missing = gpuMissingReason(a);
  if (missing.empty() && !a.gpu->idle) missing = "the analysis has no GPU idle breakdown";
  if (!missing.empty()) return out + notAvailable(missing);
  return out + itemTable(idleItems(*a.gpu->idle)) + md(kIdleNote) + "\n\n";
}

std::string launchSection(const Analysis& a) {
  std::string out = "### Kernel launches\n\n";
  std::string missing = gpuMissingReason(a);
  if (missing.empty() && !a.gpu->launch) missing = "the analysis has no launch statistics";
  if (!missing.empty()) return out + notAvailable(missing);
  return out + itemTable(launchItems(*a.gpu->launch)) + md(kLaunchNote) + "\n\n";
}

std::string transitionsSection(const Analysis& a) {
  std::string out = "### Language transitions\n\n";
  auto names = transitionNames(a);
  if (names.empty()) return out + notAvailable("the analysis has no transition counts");
  Row headers = {"Operation"};
  std::vector<bool> right = {false};
  for (const auto& n : names) {
    headers.push_back(md(n));
    right.push_back(true);
  }
  std::vector<Row> rows;
  for (const auto& op : a.operations) {
    if (op.transitions.empty()) continue;
    Row r = {md(operationTitle(a, op))};
    for (const auto& n : names) {
      auto it = op.transitions.find(n);
      r.push_back(it == op.transitions.end() ? "n/a" : formatCount(it->second));
    }
    rows.push_back(std::move(r));
  }
  return out + table(headers, right, rows);
}

std::string correctionSection(const Analysis& a) {
  std::string out = "### Overhead correction\n\n";
  if (!a.correction)
    return out + notAvailable(a.corrected
                                  ? "the analysis is marked corrected but has no correction details"
                                  : "the analysis is uncorrected: the times above include the "
                                    "profiler's own overhead");
  const Correction& c = *a.correction;
  out += itemTable(correctionItems(c));
  if (c.removedUs.empty()) {
    out += notAvailable("the analysis lists no overhead removed per source");
  } else {
    std::vector<Row> rows;
    for (const auto& [source, us] : c.removedUs)
      rows.push_back({md(overheadSourceName(source)), formatDuration(us),
                      formatPercent(us, c.uncorrectedTotalUs.value_or(0))});
    out +=
        table({"Overhead source", "Removed", "% of uncorrected total"}, {false, true, true}, rows);
  }
  return out + md(kBiasNote) + "\n\n";
}

std::string ranksSection(const Analysis& a) {
  if (!a.ranks) return {};
  std::ostringstream out;
  out << "### Ranks\n\n";
  for (const auto& note : a.ranks->notes) out << md(note) << "\n\n";
  if (a.ranks->matched > 0) {
    out << static_cast<long long>(a.ranks->matched) << " collectives matched across "
        << a.ranks->ranks.size() << " ranks, from " << md(a.ranks->source) << ".\n\n";
  }
  if (a.ranks->ranks.empty()) return out.str();
  std::vector<Row> rows;
  for (const auto& r : a.ranks->ranks) {
    Row row;
    for (const auto& c : rankCells(r)) row.push_back(md(c));
    rows.push_back(std::move(row));
  }
  Row headers;
  for (const auto& h : rankHeaders()) headers.push_back(md(h));
  out << table(headers, {true, false, true, true, true, true, true, true, true, false}, rows)
      << md(kRanksNote) << "\n\n";
  return out.str();
}

}  // namespace

std::string renderMarkdown(const nlohmann::json& document) {
  Analysis a = parseAnalysis(document);
  return header(a) + predictionSection(a) + ranksSection(a) + operationsSection(a) +
         kernelsSection(a) + idleSection(a) + launchSection(a) + transitionsSection(a) +
         correctionSection(a);
}

}  // namespace rlscope::report
