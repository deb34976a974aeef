#include "rlscope/breakdown/breakdown_output.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "rlscope/document/analysis_json.h"
#include "rlscope/trace/csv_field.h"
#include "rlscope/trace/micros_text.h"

namespace rlscope::analysis {

namespace {

double us(trace::TimeNs ns) {
  return static_cast<double>(ns) / 1e3;
}

std::string joined(const std::vector<std::string>& set, const char* separator) {
  std::string out;
  for (const auto& s : set) out += (out.empty() ? "" : separator) + s;
  return out;
}

std::string ms(trace::TimeNs ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns) / 1e6);
  return buf;
}

std::string percent(trace::TimeNs part, trace::TimeNs whole) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole ? 100.0 * part / whole : 0.0);
  return buf;
}

// " (rank 1 of 2)" for a process with a rank, with its host where several took part.
std::string rankSuffix(const Breakdown& b, std::int64_t pid) {
  auto it = b.identities.find(pid);
  if (it == b.identities.end()) return {};
  auto label = trace::rankLabel(it->second, b.severalHosts);
  return label.empty() ? label : " (" + label + ")";
}

}  // namespace

nlohmann::json toJson(const Breakdown& b) {
  namespace op = json_keys::operation;
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& o : b.operations) {
    nlohmann::json categories = nlohmann::json::array();
    for (const auto& c : o.categories)
      categories.push_back(
          {{json_keys::category::kSet, c.set}, {json_keys::category::kTimeUs, us(c.time)}});
    ops.push_back({{op::kName, o.name},
                   {op::kProcess, o.process},
                   {op::kPhase, o.phase},
                   {op::kInstances, o.instances},
                   {op::kTimeUs, us(o.time)},
                   {op::kResources, resourcesToJson(o.cpu, o.gpu, o.cpuGpu)},
                   {op::kWaitingUs, us(o.waiting)},
                   {op::kGpuBoundUs, us(o.gpu + o.cpuGpu)},
                   {op::kLaunchedGpuUs, us(o.launchedGpu)},
                   {op::kLaunchedGpuActivities, o.launchedGpuActivities},
                   {op::kGpuWaitUs, us(o.gpuWait)},
                   {op::kPythonEvents, o.pythonEvents},
                   {op::kTransitions,
                    {{"Python->Backend", o.transitions.pythonToBackend},
                     {"Python->Simulator", o.transitions.pythonToSimulator},
                     {"Backend->CUDA API", o.transitions.toCudaApi}}},
                   {op::kCategories, categories}});
    if (b.view == View::kThread) ops.back()[op::kThread] = o.thread;
    if (auto it = b.identities.find(o.process); it != b.identities.end()) {
      const auto& id = it->second;
      ops.back()[op::kRank] = id.rank ? nlohmann::json(*id.rank) : nlohmann::json(nullptr);
      ops.back()[op::kHost] = id.host.empty() ? nlohmann::json(nullptr) : nlohmann::json(id.host);
    }
  }
  nlohmann::json doc = {{json_keys::kSchema, json_keys::kAnalysisSchema},
                        {json_keys::kView, viewName(b.view)},
                        {json_keys::kCorrected, b.correction.has_value()},
                        {json_keys::kTotalUs, us(b.totalNs)},
                        {json_keys::kOperations, ops}};
  if (b.correction) doc[json_keys::kCorrection] = correctionToJson(*b.correction);
  return doc;
}

nlohmann::json resourcesToJson(trace::TimeNs cpu, trace::TimeNs gpu, trace::TimeNs cpuGpu) {
  namespace resource = json_keys::resource;
  return {{resource::kCpu, us(cpu)}, {resource::kGpu, us(gpu)}, {resource::kCpuGpu, us(cpuGpu)}};
}

nlohmann::json correctionToJson(const Correction& c) {
  namespace key = json_keys::correction;
  nlohmann::json removed = nlohmann::json::object(), breakdown = nlohmann::json::object(),
                 events = nlohmann::json::object(), perEvent = nlohmann::json::object();
  for (const auto& [name, s] : c.sources) {
    removed[name] = s.removedNs / 1e3;
    breakdown[name] = us(s.breakdownNs);
    events[name] = s.events;
    perEvent[name] = s.costNs;
  }
  nlohmann::json j = {{key::kCalibration, c.calibrationOrigin},
                      {key::kUncorrectedTotalUs, c.uncorrectedTotalNs / 1e3},
                      {key::kCorrectedTotalUs, c.correctedTotalNs / 1e3},
                      {key::kRemovedUs, removed},
                      {key::kBreakdownRemovedUs, breakdown},
                      {key::kEvents, events},
                      {key::kCostPerEventNs, perEvent},
                      {key::kNotes, c.notes}};
  if (c.uninstrumentedNs > 0) {
    j[key::kUninstrumentedTotalUs] = c.uninstrumentedNs / 1e3;
    j[key::kUninstrumentedNoisePct] = c.uninstrumentedNoisePct;
  }
  if (c.biasPct) j[key::kBiasPct] = *c.biasPct;
  if (c.biasUncertaintyPct)  // null: a single repetition cannot say
    j[key::kBiasUncertaintyPct] = std::isfinite(*c.biasUncertaintyPct)
                                      ? nlohmann::json(*c.biasUncertaintyPct)
                                      : nlohmann::json(nullptr);
  if (c.verdict) j[key::kBiasVerdict] = verdictName(*c.verdict);
  return j;
}

std::string biasLine(const Correction& c) {
  if (!c.biasPct) return {};
  char line[320];
  double u = c.biasUncertaintyPct.value_or(std::numeric_limits<double>::infinity());
  if (!std::isfinite(u)) {
    std::snprintf(line, sizeof line,
                  "bias %+.1f %% (uncertainty unknown: calibrate with --repetitions 3 or more to "
                  "tell whether it is within ±%.0f %%)",
                  *c.biasPct, kBiasTargetPct);
  } else if (c.verdict == Correction::Verdict::kTooNoisy) {
    std::snprintf(line, sizeof line,
                  "bias %+.1f %% ± %.1f %%: the machine was too noisy to tell whether the "
                  "correction is within ±%.0f %% (one run of the command varies by %.1f %%; "
                  "calibrate and profile on a quieter machine, or with more --repetitions)",
                  *c.biasPct, u, kBiasTargetPct, c.uninstrumentedNoisePct);
  } else {
    std::snprintf(line, sizeof line, "bias %+.1f %% ± %.1f %% (%s ±%.0f %%)", *c.biasPct, u,
                  c.verdict == Correction::Verdict::kWithinTarget ? "within" : "outside",
                  kBiasTargetPct);
  }
  return line;
}

static void writeCorrection(const Correction& c, std::ostream& out) {
  char line[256];
  out << "\noverhead correction (calibration: " << c.calibrationOrigin << ")\n";
  std::snprintf(line, sizeof line, "  %-24s %12s %14s %14s %14s\n", "source", "events",
                "ns per event", "removed ms", "breakdown ms");
  out << line;
  for (const auto& [name, s] : c.sources) {
    if (name == cost::kPythonInterpreter)  // priced per ns of Python time, not per event
      std::snprintf(line, sizeof line, "  %-24s %9.0f ms %12.1f %% %14.3f %14s\n", name.c_str(),
                    static_cast<double>(s.events) / 1e6, 100 * s.costNs, s.removedNs / 1e6,
                    ms(s.breakdownNs).c_str());
    else
      std::snprintf(line, sizeof line, "  %-24s %12lld %14.1f %14.3f %14s\n", name.c_str(),
                    static_cast<long long>(s.events), s.costNs, s.removedNs / 1e6,
                    ms(s.breakdownNs).c_str());
    out << line;
  }
  std::snprintf(line, sizeof line, "  run time: %.3f ms as profiled, %.3f ms corrected",
                c.uncorrectedTotalNs / 1e6, c.correctedTotalNs / 1e6);
  out << line;
  if (c.biasPct) {
    std::snprintf(line, sizeof line, ", %.3f ms uninstrumented: ", c.uninstrumentedNs / 1e6);
    out << line << biasLine(c);
  }
  out << "\n";
  for (const auto& n : c.notes) out << "  note: " << n << "\n";
}

// Per operation, GPU time it launched and its language transitions; only operations with any.
static void writeLaunchesAndTransitions(const Breakdown& b, std::ostream& out) {
  bool header = false;
  for (const auto& o : b.operations) {
    const auto& t = o.transitions;
    if (o.launchedGpuActivities == 0 && t.pythonToBackend + t.pythonToSimulator + t.toCudaApi == 0)
      continue;
    char line[256];
    if (!header) {
      std::snprintf(line, sizeof line, "\n  %-8s %-28s %-12s %14s %16s %18s %14s\n", "process",
                    "operation", "phase", "GPU launched ms", "Python->Backend", "Python->Simulator",
                    "-> CUDA API");
      out << line;
      header = true;
    }
    std::snprintf(line, sizeof line, "  %-8lld %-28.28s %-12.12s %14s %16llu %18llu %14llu\n",
                  static_cast<long long>(o.process), o.name.c_str(), o.phase.c_str(),
                  ms(o.launchedGpu).c_str(), static_cast<unsigned long long>(t.pythonToBackend),
                  static_cast<unsigned long long>(t.pythonToSimulator),
                  static_cast<unsigned long long>(t.toCudaApi));
    out << line;
  }
  if (header)
    out << "\nGPU launched: kernels, copies and memsets launched from inside the operation, "
           "wherever they ran.\nTransitions: calls into the backend, the simulator and the CUDA "
           "API made inside it.\n";
}

void writeTable(const Breakdown& b, std::ostream& out) {
  std::pair<std::int64_t, std::int64_t> group{-1, -1};
  for (const auto& o : b.operations) {
    if (std::pair(o.process, o.thread) != group) {
      group = {o.process, o.thread};
      if (b.view == View::kRun)
        out << "\nthe whole run (every process)\n";
      else if (b.view == View::kThread)
        out << "\nprocess " << o.process << rankSuffix(b, o.process) << " thread " << o.thread
            << (o.thread ? "" : " (GPU work no thread's API call launched)") << "\n";
      else
        out << "\nprocess " << o.process << rankSuffix(b, o.process) << "\n";
      char head[160];
      std::snprintf(head, sizeof head, "  %-28s %-12s %10s %9s %9s %9s %9s  %s\n", "operation",
                    "phase", "time ms", "CPU", "GPU", "CPU+GPU", "waiting", "top category sets");
      out << head;
    }
    std::string top;
    for (std::size_t i = 0; i < o.categories.size() && i < 3; ++i)
      top +=
          (i ? ", " : "") +
          (o.categories[i].set.empty() ? std::string("(idle)") : joined(o.categories[i].set, "+")) +
          " " + percent(o.categories[i].time, o.time);
    char line[512];
    std::snprintf(line, sizeof line, "  %-28.28s %-12.12s %10s %9s %9s %9s %9s  %s\n",
                  o.name.c_str(), o.phase.c_str(), ms(o.time).c_str(),
                  percent(o.cpu, o.time).c_str(), percent(o.gpu, o.time).c_str(),
                  percent(o.cpuGpu, o.time).c_str(), percent(o.waiting, o.time).c_str(),
                  top.c_str());
    out << line;
  }
  out << "\nCPU / GPU / CPU+GPU: share of each operation's time with only CPU categories, only "
         "GPU\n"
         "ones, or both active (GPU-bound = GPU + CPU+GPU); waiting: blocked in a sleep, lock, "
         "pipe,\nsocket or select with nothing else running (not CPU time).\n";
  writeLaunchesAndTransitions(b, out);
  if (b.correction) {
    out << "The profiler's overhead is removed from these times.\n";
    writeCorrection(*b.correction, out);
  } else if (b.sourceFormat == "rlscope-prof") {
    out << "Times are as recorded, the profiler's overhead included (rlscope calibrate, then\n"
           "--calibration, removes it).\n";
  } else {
    out << "Times are as " << b.sourceFormat
        << " recorded them, its profiler's overhead included: only runs\n"
           "of rlscope-prof can be calibrated and corrected.\n";
  }
}

void writeCsv(const Breakdown& b, std::ostream& out) {
  bool threads = b.view == View::kThread;
  out << (threads ? "process,thread," : "process,") << "operation,phase,set,time_us\n";
  for (const auto& o : b.operations)
    for (const auto& c : o.categories) {
      out << o.process << ',';
      if (threads) out << o.thread << ',';
      out << trace::csvField(o.name) << ',' << trace::csvField(o.phase) << ','
          << trace::csvField(joined(c.set, "+")) << ',' << trace::microsText(c.time) << '\n';
    }
}

}  // namespace rlscope::analysis
