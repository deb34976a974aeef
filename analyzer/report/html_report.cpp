#include "rlscope/report/html_report.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "html_chart.h"
#include "report_sections.h"
#include "report_text.h"
#include "rlscope/report/analysis_document.h"

namespace rlscope::report {

namespace {

constexpr const char* kStyle = R"css(
:root { --fg:#1f2328; --muted:#59636e; --line:#d8dee4; --bg:#f6f8fa; --card:#fff; --accent:#8057b0; }
* { box-sizing:border-box; }
body { margin:0; background:var(--bg); color:var(--fg);
  font:14px/1.5 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif; }
main { max-width:1120px; margin:0 auto; padding:24px 20px 40px; }
header h1 { margin:0 0 4px; font-size:26px; }
header .sub { color:var(--muted); margin:0; }
code { font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; background:#eef1f4;
  padding:1px 5px; border-radius:4px; word-break:break-all; }
.badge { display:inline-block; padding:1px 9px; border-radius:10px; font-size:12px; font-weight:600; }
.badge.corrected { background:#dafbe1; color:#116329; }
.badge.uncorrected { background:#fff1c2; color:#7d4e00; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px;
  padding:16px 20px; margin-top:18px; }
section h2 { margin:0 0 10px; font-size:18px; }
section h3 { margin:18px 0 6px; font-size:15px; }
.na { color:var(--muted); font-style:italic; margin:4px 0; }
.note { color:var(--muted); font-size:12px; margin:6px 0 0; }
table { border-collapse:collapse; width:100%; margin-top:8px; font-variant-numeric:tabular-nums; }
th, td { padding:5px 8px; border-bottom:1px solid var(--line); text-align:left; vertical-align:top; }
th { font-size:12px; color:var(--muted); font-weight:600; background:#fafbfc; }
td.num, th.num { text-align:right; white-space:nowrap; }
tbody tr:nth-child(even) { background:#fbfcfd; }
tfoot td { font-weight:600; border-top:2px solid var(--line); }
td.name { word-break:break-word; }
td.kernel { font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; word-break:break-all; }
svg.defs { position:absolute; width:0; height:0; }
svg.bars, svg.split, svg.pairs { width:100%; height:auto; display:block; margin-top:6px; }
svg .label { font-size:12px; fill:var(--fg); }
svg .value { font-size:12px; fill:var(--muted); }
svg .tick { font-size:10px; fill:var(--muted); }
svg .grid { stroke:#eaeef2; stroke-width:1; }
.legend { display:flex; flex-direction:column; gap:4px; margin:4px 0 8px; font-size:12px; }
.legend-group { display:flex; flex-wrap:wrap; gap:4px 14px; align-items:center; }
.legend .resource { font-weight:600; min-width:92px; }
.legend .item, .legend .resource { display:inline-flex; align-items:center; gap:5px; }
.swatch { flex:none; }
dl.stats { display:grid; grid-template-columns:max-content auto; gap:2px 16px; margin:8px 0 0; }
dl.stats dt { color:var(--muted); }
dl.stats dd { margin:0; font-variant-numeric:tabular-nums; }
.verdict { font-size:16px; font-weight:600; margin:4px 0 10px; padding:8px 12px;
  border-left:4px solid var(--accent); border-radius:4px; background:#f3eefa; }
.verdict.faster { background:#dafbe1; border-color:#1a7f37; }
.verdict.slower { background:#ffebe9; border-color:#cf222e; }
.verdict.cpu-bound { background:#fff1c2; border-color:#bf8700; }
footer { color:var(--muted); font-size:12px; margin-top:18px; text-align:center; }
)css";

// A table whose cells are already HTML (escaped where they hold input text).
struct HtmlTable {
  std::vector<std::string> headers;
  std::vector<std::string> classes;  // per column: "num" (right-aligned), "name", "kernel" or ""
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> footer;

  std::string render() const {
    std::ostringstream out;
    out << "<table><thead><tr>";
    for (std::size_t i = 0; i < headers.size(); ++i)
      out << "<th" << cls(i) << ">" << headers[i] << "</th>";
    out << "</tr></thead><tbody>";
    for (const auto& row : rows) out << renderRow(row);
    out << "</tbody>";
    if (!footer.empty()) out << "<tfoot>" << renderRow(footer) << "</tfoot>";
    out << "</table>";
    return out.str();
  }

 private:
  std::string cls(std::size_t i) const {
    return i < classes.size() && !classes[i].empty() ? " class=\"" + classes[i] + "\"" : "";
  }
  std::string renderRow(const std::vector<std::string>& row) const {
    std::string out = "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) out += "<td" + cls(i) + ">" + row[i] + "</td>";
    return out + "</tr>";
  }
};

std::string esc(const std::string& s) {
  return htmlEscape(s);
}

std::string notAvailable(const std::string& why) {
  return "<p class=\"na\">" + esc(std::string(kNotAvailable) + ": " + why) + "</p>";
}

std::string section(const std::string& id, const std::string& title, const std::string& body) {
  return "<section id=\"" + id + "\"><h2>" + esc(title) + "</h2>" + body + "</section>";
}

std::string header(const Analysis& a) {
  std::ostringstream out;
  out << "<header><h1>rlscope report</h1><p class=\"sub\">";
  out << (a.trace.empty() ? "trace " + esc(kNotAvailable) : "<code>" + esc(a.trace) + "</code>");
  out << " · <span class=\"badge "
      << (a.corrected ? "corrected\">overhead corrected" : "uncorrected\">uncorrected")
      << "</span>";
  if (a.correction && a.correction->biasPct) out << " · bias " << esc(biasText(*a.correction));
  out << " · wall time "
      << esc(a.totalUs ? formatDuration(*a.totalUs) : std::string(kNotAvailable));
  auto processes = processesOf(a);
  out << " · " << processes.size() << (processes.size() == 1 ? " process" : " processes") << ", "
      << a.operations.size() << " operation rows</p></header>";
  return out.str();
}

std::string operationTable(const Analysis& a, std::int64_t process) {
  auto ops = operationsOf(a, process);
  OperationColumns columns = operationColumns(a);
  double processUs = processTimeUs(a, process);
  HtmlTable t;
  t.headers = {"Operation"};
  t.classes = {"name"};
  auto add = [&](const char* h, const char* cssClass) {
    t.headers.push_back(h);
    t.classes.push_back(cssClass);
  };
  if (columns.phase) add("Phase", "");
  if (columns.instances) add("Instances", "num");
  add("Time", "num");
  add("% of process", "num pct");
  for (const char* h : {"CPU only", "CPU+GPU", "GPU only", "Waiting", "GPU-bound", "GPU-bound %"})
    add(h, "num");
  if (columns.launchedGpu) add("Launched GPU", "num");

  for (const Operation* op : ops) {
    std::vector<std::string> row = {esc(op->name)};
    if (columns.phase) row.push_back(esc(op->phase));
    if (columns.instances) row.push_back(op->instances ? std::to_string(*op->instances) : "n/a");
    row.push_back(esc(formatDuration(op->timeUs)));
    row.push_back(formatPercent(op->timeUs, processUs));
    for (double us : {op->cpuUs, op->cpuGpuUs, op->gpuUs, op->waitingUs, op->gpuBoundUs})
      row.push_back(esc(formatDuration(us)));
    row.push_back(formatPercent(op->gpuBoundUs, op->timeUs));
    if (columns.launchedGpu) row.push_back(esc(formatDuration(op->launchedGpuUs)));
    t.rows.push_back(std::move(row));
  }
  Operation sum = totalOf(ops);
  t.footer = {"All operations"};
  if (columns.phase) t.footer.push_back("");
  if (columns.instances) t.footer.push_back("");
  t.footer.push_back(esc(formatDuration(sum.timeUs)));
  t.footer.push_back(formatPercent(sum.timeUs, processUs));
  for (double us : {sum.cpuUs, sum.cpuGpuUs, sum.gpuUs, sum.waitingUs, sum.gpuBoundUs})
    t.footer.push_back(esc(formatDuration(us)));
  t.footer.push_back(formatPercent(sum.gpuBoundUs, sum.timeUs));
  if (columns.launchedGpu) t.footer.push_back("");
  return t.render();
}

std::string operationsSection(const Analysis& a, const SetPalette& palette) {
  if (a.operations.empty())
    return section("operations", "Time per operation",
                   notAvailable("the analysis has no operations"));
  double scaleUs = 0;
  for (const auto& op : a.operations) scaleUs = std::max(scaleUs, op.timeUs);
  auto processes = processesOf(a);
  std::ostringstream body;
  body << renderLegend(palette);
  for (std::int64_t p : processes) {
    if (processes.size() > 1)
      body << "<h3>Process " << p << " · " << esc(formatDuration(processTimeUs(a, p)))
           << " traced</h3>";
    body << renderOperationBars(a, p, palette, scaleUs) << operationTable(a, p);
  }
  body << "<p class=\"note\">" << esc(kPercentNote) << " " << esc(kGpuBoundNote) << "</p>";
  return section("operations", "Time per operation", body.str());
}

// The verdict's tone: red when the target is slower (also for a CPU-bound run: its waits on
// the GPU grow), amber when the run is CPU-bound and no GPU can help much, else green.
std::string verdictClass(const PredictionSection& p) {
  if (p.speedup.value_or(1) < 1) return "slower";
  return p.cpuBound ? "cpu-bound" : "faster";
}

// "origin (A100-SXM4-40GB)", the chart's legend.
std::string seriesName(const std::string& what, const std::string& gpu) {
  return gpu.empty() ? what : what + " (" + gpu + ")";
}

std::string predictedOperations(const PredictionSection& p) {
  auto top = topPredictedOperations(p);
  std::vector<BarPair> bars;
  HtmlTable t;
  t.headers = {"Operation", "Origin", "Predicted", "Change", "GPU x"};
  t.classes = {"name", "num", "num", "num", "num"};
  for (const PredictedOperation* op : top) {
    std::string change = formatChange(op->originUs, op->predictedUs);
    bars.push_back({predictedOperationTitle(p, *op), op->originUs, op->predictedUs, change});
    t.rows.push_back({esc(predictedOperationTitle(p, *op)), esc(formatDuration(op->originUs)),
                      esc(predictedWithError(op->predictedUs, op->expectedErrorUs)), esc(change),
                      esc(formatFactor(op->gpuScale))});
  }
  std::ostringstream out;
  out << "<h3>Operations</h3>"
      << renderBarPairs(bars, seriesName("origin", p.origin), seriesName("predicted", p.target))
      << t.render();
  if (top.size() < p.operations.size())
    out << "<p class=\"note\">The " << top.size() << " longest of " << p.operations.size()
        << " operations.</p>";
  out << "<p class=\"note\">" << esc(kPredictionNote) << "</p>";
  return out.str();
}

std::string launchesCell(const PredictedKernel& k) {
  std::string out = formatCount(k.launches);
  if (k.cannotPredict && *k.cannotPredict > 0)
    out += " (" + formatCount(*k.cannotPredict) + " not predicted)";
  return out;
}

std::string predictedKernels(const PredictionSection& p) {
  auto top = topPredictedKernels(p);
  HtmlTable t;
  t.headers = {"Kernel", "Launches", "Origin", "Predicted", "Change", "Method", "Gamma"};
  t.classes = {"kernel", "num", "num", "num", "num", "", "num"};
  for (const PredictedKernel* k : top)
    t.rows.push_back(
        {esc(k->name), esc(launchesCell(*k)), esc(formatDuration(k->originUs)),
         esc(predictedWithErrorFraction(k->predictedUs, k->expectedError)),
         esc(k->originUs && k->predictedUs ? formatChange(*k->originUs, *k->predictedUs) : "n/a"),
         esc(k->method.empty() ? "n/a" : k->method), esc(formatGamma(k->gamma))});
  std::ostringstream out;
  out << "<h3>Top kernels by origin time</h3>" << t.render();
  if (top.size() < p.kernels.size())
    out << "<p class=\"note\">The " << top.size() << " longest of " << p.kernels.size()
        << " kernel names.</p>";
  return out.str();
}

std::string predictionSection(const Analysis& a) {
  if (!a.prediction) return {};
  const PredictionSection& p = *a.prediction;
  std::string title = predictionTitle(p);
  std::string missing = predictionMissingReason(p);
  if (!missing.empty()) return section("prediction", title, notAvailable(missing));
  std::ostringstream body;
  if (!p.verdict.empty())
    body << "<p class=\"verdict " << verdictClass(p) << "\">" << esc(p.verdict) << "</p>";
  body << "<dl class=\"stats\">";
  for (const auto& item : predictionItems(p))
    body << "<dt>" << esc(item.label) << "</dt><dd>" << esc(item.value) << "</dd>";
  body << "</dl>";
  if (!p.operations.empty()) body << predictedOperations(p);
  if (!p.kernels.empty()) body << predictedKernels(p);
  for (const auto& note : p.notes) body << "<p class=\"note\">Note: " << esc(note) << "</p>";
  body << "<p class=\"note\">" << esc(kPredictorPointer) << "</p>";
  return section("prediction", title, body.str());
}

std::string kernelsSection(const Analysis& a) {
  std::string missing = gpuMissingReason(a);
  if (!missing.empty()) return section("kernels", "GPU kernels", notAvailable(missing));
  const GpuSection& gpu = *a.gpu;
  std::ostringstream body;
  if (!gpu.classes.empty()) {
    std::vector<BarPart> parts;
    for (const auto& [name, us] : gpu.classes) parts.push_back({name, us, kernelClassColour(name)});
    body << "<h3>Kernel time by class</h3>" << renderProportionBar(parts);
  }
  if (gpu.kernels.empty()) {
    body << notAvailable("the analysis lists no kernels");
  } else {
    auto top = topKernels(gpu);
    double all = kernelTimeUs(gpu);
    HtmlTable t;
    t.headers = {"Kernel", "Class", "Count", "Total", "% of kernel time",
                 "Mean",   "Min",   "Max",   "Std"};
    t.classes = {"kernel", "", "num", "num", "num", "num", "num", "num", "num"};
    for (const Kernel* k : top)
      t.rows.push_back({esc(k->name), esc(k->kernelClass.empty() ? "n/a" : k->kernelClass),
                        formatCount(k->count), esc(formatDuration(k->totalUs)),
                        k->totalUs ? formatPercent(*k->totalUs, all) : "n/a",
                        esc(formatDuration(k->meanUs)), esc(formatDuration(k->minUs)),
                        esc(formatDuration(k->maxUs)), esc(formatDuration(k->stdUs))});
    body << "<h3>Top kernels by total time</h3>" << t.render();
    if (top.size() < gpu.kernels.size())
      body << "<p class=\"note\">The " << top.size() << " longest of " << gpu.kernels.size()
           << " kernel names.</p>";
  }
  return section("kernels", "GPU kernels", body.str());
}

std::string idleSection(const Analysis& a) {
  std::string missing = gpuMissingReason(a);
  if (missing.empty() && !a.gpu->idle) missing = "the analysis has no GPU idle breakdown";
  if (!missing.empty()) return section("idle", "GPU idle time", notAvailable(missing));
  const GpuIdle& idle = *a.gpu->idle;
  std::ostringstream body;
  if (idle.busyUs && idle.idleUs)
    body << renderProportionBar(
        {{"busy", *idle.busyUs, "#2f8f5b"}, {"idle", *idle.idleUs, "#c8ccd1"}});
  body << "<dl class=\"stats\">";
  for (const auto& item : idleItems(idle))
    body << "<dt>" << esc(item.label) << "</dt><dd>" << esc(item.value) << "</dd>";
  body << "</dl>";
  if (idle.hostWaitUs || idle.kernelWaitUs || idle.otherUs) {
    body << "<h3>Stream idle time by cause</h3>"
         << renderProportionBar({{"host wait", idle.hostWaitUs.value_or(0), "#e15759"},
                                 {"kernel wait", idle.kernelWaitUs.value_or(0), "#f28e2b"},
                                 {"other", idle.otherUs.value_or(0), "#bab0ac"}});
    body << "<p class=\"note\">" << esc(kIdleNote) << "</p>";
  }
  return section("idle", "GPU idle time", body.str());
}

std::string launchSection(const Analysis& a) {
  std::string missing = gpuMissingReason(a);
  if (missing.empty() && !a.gpu->launch) missing = "the analysis has no launch statistics";
  if (!missing.empty()) return section("launch", "Kernel launches", notAvailable(missing));
  std::ostringstream body;
  body << "<dl class=\"stats\">";
  for (const auto& item : launchItems(*a.gpu->launch))
    body << "<dt>" << esc(item.label) << "</dt><dd>" << esc(item.value) << "</dd>";
  body << "</dl><p class=\"note\">" << esc(kLaunchNote) << "</p>";
  return section("launch", "Kernel launches", body.str());
}

std::string transitionsSection(const Analysis& a) {
  auto names = transitionNames(a);
  if (names.empty())
    return section("transitions", "Language transitions",
                   notAvailable("the analysis has no transition counts"));
  HtmlTable t;
  t.headers = {"Operation"};
  t.classes = {"name"};
  for (const auto& n : names) {
    t.headers.push_back(esc(n));
    t.classes.push_back("num");
  }
  for (const auto& op : a.operations) {
    if (op.transitions.empty()) continue;
    std::vector<std::string> row = {esc(operationTitle(a, op))};
    for (const auto& n : names) {
      auto it = op.transitions.find(n);
      row.push_back(it == op.transitions.end() ? "n/a" : formatCount(it->second));
    }
    t.rows.push_back(std::move(row));
  }
  return section("transitions", "Language transitions", t.render());
}

std::string correctionSection(const Analysis& a) {
  if (!a.correction)
    return section("correction", "Overhead correction",
                   notAvailable(a.corrected ? "the analysis is marked corrected but has no "
                                              "correction details"
                                            : "the analysis is uncorrected: the times above "
                                              "include the profiler's own overhead"));
  const Correction& c = *a.correction;
  std::ostringstream body;
  body << "<dl class=\"stats\">";
  for (const auto& item : correctionItems(c))
    body << "<dt>" << esc(item.label) << "</dt><dd>" << esc(item.value) << "</dd>";
  body << "</dl>";
  if (c.removedUs.empty()) {
    body << notAvailable("the analysis lists no overhead removed per source");
  } else {
    HtmlTable t;
    t.headers = {"Overhead source", "Removed", "% of uncorrected total"};
    t.classes = {"", "num", "num"};
    double removed = 0;
    for (const auto& [source, us] : c.removedUs) {
      t.rows.push_back({esc(overheadSourceName(source)), esc(formatDuration(us)),
                        formatPercent(us, c.uncorrectedTotalUs.value_or(0))});
      removed += us;
    }
    t.footer = {"All sources", esc(formatDuration(removed)),
                formatPercent(removed, c.uncorrectedTotalUs.value_or(0))};
    body << "<h3>Overhead removed per source</h3>" << t.render();
  }
  body << "<p class=\"note\">" << esc(kBiasNote) << "</p>";
  return section("correction", "Overhead correction", body.str());
}

// `--by rank`: a bar per rank (its time outside collectives, waiting in them for the last rank,
// transferring), the ranks' table, and what each straggler did while the others waited.
std::string ranksSection(const Analysis& a) {
  if (!a.ranks) return {};
  const RanksSection& r = *a.ranks;
  std::ostringstream body;
  for (const auto& note : r.notes) body << "<p class=\"note\">" << esc(note) << "</p>";
  if (r.ranks.empty()) return section("ranks", "Ranks", body.str());
  if (r.matched > 0) {
    body << "<p>" << static_cast<long long>(r.matched) << " collectives matched across "
         << r.ranks.size() << " ranks, from " << esc(r.source) << ".</p>";
  }
  HtmlTable t;
  t.headers = rankHeaders();
  t.classes = {"num", "name", "num", "num", "num", "num", "num", "num", "num", "name"};
  for (const auto& row : r.ranks) {
    body << "<h3>" << esc(rankTitle(row)) << " · " << esc(formatDuration(row.timeUs)) << "</h3>"
         << renderProportionBar(
                {{"outside collectives", std::max(0.0, row.timeUs - row.collectivesUs), "#4e79a7"},
                 {"waiting for the last rank", row.waitingForOthersUs, "#e15759"},
                 {"transfer", row.transferringUs, "#59a14f"}});
    std::vector<std::string> cells;
    for (const auto& c : rankCells(row)) cells.push_back(esc(c));
    t.rows.push_back(std::move(cells));
  }
  body << t.render() << "<p class=\"note\">" << esc(kRanksNote) << "</p>";
  return section("ranks", "Ranks", body.str());
}

}  // namespace

std::string renderHtml(const nlohmann::json& document) {
  Analysis a = parseAnalysis(document);
  SetPalette palette(a);
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      << "<title>rlscope report" << (a.trace.empty() ? "" : " · " + esc(a.trace))
      << "</title><style>" << kStyle << "</style></head><body>" << palette.patternDefs() << "<main>"
      << header(a) << predictionSection(a) << ranksSection(a) << operationsSection(a, palette)
      << kernelsSection(a) << idleSection(a) << launchSection(a) << transitionsSection(a)
      << correctionSection(a) << "<footer>rlscope · " << kAnalysisSchema
      << "</footer></main></body></html>\n";
  return out.str();
}

}  // namespace rlscope::report
