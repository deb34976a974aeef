#include "rlscope/report/fleet.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "rlscope/trace/median.h"

namespace rlscope::report {

namespace {

using trace::median;

// The processes of one analysis, with their rank's collectives when it was made `--by rank`.
std::vector<FleetProcess> processesOfAnalysis(const FleetInput& input, std::size_t index) {
  const Analysis& a = *input.analysis;
  std::vector<FleetProcess> out;
  for (std::int64_t pid : processesOf(a)) {
    FleetProcess p{.trace = input.trace, .traceIndex = index, .process = pid};
    for (const Operation* op : operationsOf(a, pid)) {
      if (p.host.empty()) p.host = op->host;
      if (!p.rank) p.rank = op->rank;
      p.timeUs += op->timeUs;
      p.cpuUs += op->cpuUs;
      p.cpuGpuUs += op->cpuGpuUs;
      p.gpuUs += op->gpuUs;
      p.waitingUs += op->waitingUs;
    }
    if (a.ranks) {
      for (const RankRow& r : a.ranks->ranks) {
        if (r.pid != pid) continue;
        p.collectivesUs = r.collectivesUs;
        p.waitingForOthersUs = r.waitingForOthersUs;
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

void sortProcesses(std::vector<FleetProcess>& processes) {
  std::stable_sort(processes.begin(), processes.end(), [](const auto& a, const auto& b) {
    // Ranked processes first, by rank; then by trace and process.
    return std::tuple(!a.rank.has_value(), a.rank.value_or(0), a.traceIndex, a.process) <
           std::tuple(!b.rank.has_value(), b.rank.value_or(0), b.traceIndex, b.process);
  });
}

std::vector<FleetOperation> operationsAcross(const std::vector<FleetInput>& inputs,
                                             const std::vector<FleetProcess>& processes) {
  std::map<std::pair<std::size_t, std::int64_t>, std::size_t> indexOf;
  for (std::size_t i = 0; i < processes.size(); ++i)
    indexOf[{processes[i].traceIndex, processes[i].process}] = i;
  // Operation -> its time per process (an operation may have several rows per process: phases).
  std::map<std::string, std::map<std::size_t, double>> times;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].analysis) continue;
    for (const Operation& op : inputs[i].analysis->operations)
      times[op.name][indexOf.at({i, op.process})] += op.timeUs;
  }
  std::vector<FleetOperation> out;
  for (const auto& [name, perProcess] : times) {
    FleetOperation o{.name = name, .processes = perProcess.size()};
    std::vector<double> values;
    o.minUs = perProcess.begin()->second;
    for (const auto& [process, us] : perProcess) {
      o.times.emplace_back(process, us);
      values.push_back(us);
      o.totalUs += us;
      o.minUs = std::min(o.minUs, us);
      if (us > o.maxUs || values.size() == 1) {
        o.maxUs = us;
        o.slowest = process;
      }
    }
    o.medianUs = median(std::move(values));
    out.push_back(std::move(o));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    bool aLast = a.name == kUnannotated, bLast = b.name == kUnannotated;
    if (aLast != bLast) return bLast;
    if (a.totalUs != b.totalUs) return a.totalUs > b.totalUs;
    return a.name < b.name;
  });
  return out;
}

}  // namespace

FleetInput fleetInputFromDocument(const nlohmann::json& document, const std::string& origin) {
  FleetInput in{.trace = origin};
  if (document.is_object()) {
    if (auto t = document.find("trace"); t != document.end() && t->is_string())
      in.trace = t->get<std::string>();
    if (auto e = document.find("error"); e != document.end() && e->is_string()) {
      in.error = e->get<std::string>();
      return in;
    }
    if (document.contains("traceEvents")) {
      in.error =
          "a Kineto (Chrome trace) file, not an analysis document: `rlscope import` it, then "
          "analyze the trace";
      return in;
    }
  }
  try {
    in.analysis = parseAnalysis(document);
  } catch (const std::runtime_error& e) {
    in.error = e.what();
  }
  return in;
}

Fleet combineAnalyses(const std::vector<FleetInput>& inputs) {
  Fleet fleet;
  std::set<std::string> hosts;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const FleetInput& input = inputs[i];
    FleetTrace t{.trace = input.trace, .error = input.error};
    if (input.analysis) {
      auto processes = processesOfAnalysis(input, i);
      t.totalUs = input.analysis->totalUs;
      t.processes = processes.size();
      if (input.analysis->gpu && input.analysis->gpu->idle)
        t.gpuBusyUs = input.analysis->gpu->idle->busyUs;
      for (auto& p : processes) {
        if (!p.host.empty()) hosts.insert(p.host);
        fleet.processes.push_back(std::move(p));
      }
    } else {
      ++fleet.failed;
    }
    fleet.traces.push_back(std::move(t));
  }
  sortProcesses(fleet.processes);
  fleet.operations = operationsAcross(inputs, fleet.processes);
  fleet.hosts.assign(hosts.begin(), hosts.end());
  std::vector<double> times;
  for (const auto& p : fleet.processes) times.push_back(p.timeUs);
  fleet.medianProcessUs = median(std::move(times));
  return fleet;
}

std::string processLabel(const FleetProcess& process) {
  if (process.rank) return "rank " + std::to_string(*process.rank);
  return "pid " + std::to_string(process.process) + " in " +
         std::filesystem::path(process.trace).filename().string();
}

}  // namespace rlscope::report
