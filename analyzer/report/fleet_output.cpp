// The combined analysis of many traces as JSON (rlscope.fleet/1), a table and CSV.

#include <cstdio>
#include <set>

#include "report_text.h"
#include "rlscope/report/fleet.h"
#include "rlscope/trace/csv_field.h"

namespace rlscope::report {

namespace {

using nlohmann::json;

template <class T>
json optionalJson(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json textOrNull(const std::string& text) {
  return text.empty() ? json(nullptr) : json(text);
}

// The process's time against the median process's: "+12.3%".
std::optional<double> vsMedianPct(double us, double medianUs) {
  if (medianUs <= 0) return std::nullopt;
  return 100.0 * (us - medianUs) / medianUs;
}

std::string signedPct(const std::optional<double>& pct) {
  return pct ? formatPct(*pct, /*withSign=*/true) : "n/a";
}

// A share of a process's time; 0.0% of nothing (a process whose operations took no time).
std::string pctOf(double part, double whole) {
  return formatPct(whole > 0 ? 100.0 * part / whole : 0.0);
}

std::string ms(const std::optional<double>& us) {
  if (!us) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", *us / 1000.0);
  return text;
}

void writeSummaryLine(const Fleet& fleet, std::ostream& out) {
  std::set<std::int64_t> ranks;
  for (const auto& p : fleet.processes)
    if (p.rank) ranks.insert(*p.rank);
  out << "fleet: " << fleet.traces.size() << (fleet.traces.size() == 1 ? " trace" : " traces");
  if (!fleet.hosts.empty())
    out << " from " << fleet.hosts.size() << (fleet.hosts.size() == 1 ? " host" : " hosts");
  out << ", " << fleet.processes.size()
      << (fleet.processes.size() == 1 ? " process" : " processes");
  if (!ranks.empty())
    out << " (" << ranks.size() << (ranks.size() == 1 ? " rank: " : " ranks: ") << *ranks.begin()
        << "–" << *ranks.rbegin() << ")";
  out << "; median process time " << ms(fleet.medianProcessUs) << " ms\n";
  if (!fleet.failed) return;
  out << "could not analyse " << fleet.failed << (fleet.failed == 1 ? " trace" : " traces")
      << ":\n";
  for (const auto& t : fleet.traces)
    if (!t.error.empty()) out << "  " << t.trace << ": " << t.error << '\n';
}

void writeProcesses(const Fleet& fleet, std::ostream& out) {
  bool collectives = false;
  for (const auto& p : fleet.processes) collectives = collectives || p.collectivesUs.has_value();
  char line[512];
  out << "\nprocesses (each one's traced time, against the median process)\n";
  std::snprintf(line, sizeof line, "  %-22s %-14s %11s %9s %6s %6s %8s %8s", "process", "host",
                "time ms", "vs median", "CPU", "GPU", "CPU+GPU", "waiting");
  out << line;
  if (collectives) out << "  collectives ms  waiting ms";
  out << "  trace\n";
  for (const auto& p : fleet.processes) {
    std::snprintf(line, sizeof line, "  %-22.22s %-14.14s %11s %9s %6s %6s %8s %8s",
                  processLabel(p).c_str(), p.host.c_str(), ms(p.timeUs).c_str(),
                  signedPct(vsMedianPct(p.timeUs, fleet.medianProcessUs)).c_str(),
                  pctOf(p.cpuUs, p.timeUs).c_str(), pctOf(p.gpuUs, p.timeUs).c_str(),
                  pctOf(p.cpuGpuUs, p.timeUs).c_str(), pctOf(p.waitingUs, p.timeUs).c_str());
    out << line;
    if (collectives) {
      std::snprintf(line, sizeof line, "  %14s %11s", ms(p.collectivesUs).c_str(),
                    ms(p.waitingForOthersUs).c_str());
      out << line;
    }
    out << "  " << p.trace << '\n';
  }
}

void writeOperations(const Fleet& fleet, std::ostream& out, std::size_t top) {
  char line[512];
  out << "\noperations across the processes (";
  if (fleet.operations.size() > top)
    out << "the " << top << " longest in total of " << fleet.operations.size() << "; ";
  out << "per process: fastest, median, slowest)\n";
  std::snprintf(line, sizeof line, "  %-32s %9s %11s %10s %10s %10s %8s  %s\n", "operation",
                "processes", "total ms", "min ms", "median ms", "max ms", "max/med", "slowest");
  out << line;
  std::size_t shown = 0;
  for (const auto& o : fleet.operations) {
    if (shown++ == top) break;
    char ratio[32] = "n/a";
    if (o.medianUs > 0) std::snprintf(ratio, sizeof ratio, "%.2f×", o.maxUs / o.medianUs);
    std::snprintf(line, sizeof line, "  %-32.32s %9zu %11s %10s %10s %10s %8s  %s\n",
                  o.name.c_str(), o.processes, ms(o.totalUs).c_str(), ms(o.minUs).c_str(),
                  ms(o.medianUs).c_str(), ms(o.maxUs).c_str(), ratio,
                  processLabel(fleet.processes[o.slowest]).c_str());
    out << line;
  }
}

json processJson(const Fleet& fleet, const FleetProcess& p) {
  return {{"trace", p.trace},
          {"process", p.process},
          {"host", textOrNull(p.host)},
          {"rank", optionalJson(p.rank)},
          {"time_us", p.timeUs},
          {"vs_median_pct", optionalJson(vsMedianPct(p.timeUs, fleet.medianProcessUs))},
          {"resources", {{"CPU", p.cpuUs}, {"GPU", p.gpuUs}, {"CPU+GPU", p.cpuGpuUs}}},
          {"waiting_us", p.waitingUs},
          {"collectives_us", optionalJson(p.collectivesUs)},
          {"waiting_for_others_us", optionalJson(p.waitingForOthersUs)}};
}

}  // namespace

json fleetToJson(const Fleet& fleet) {
  json traces = json::array(), processes = json::array(), operations = json::array();
  for (const auto& t : fleet.traces) {
    traces.push_back({{"trace", t.trace},
                      {"error", textOrNull(t.error)},
                      {"total_us", optionalJson(t.totalUs)},
                      {"processes", t.processes},
                      {"gpu_busy_us", optionalJson(t.gpuBusyUs)}});
  }
  for (const auto& p : fleet.processes) processes.push_back(processJson(fleet, p));
  for (const auto& o : fleet.operations) {
    const FleetProcess& slowest = fleet.processes[o.slowest];
    operations.push_back({{"name", o.name},
                          {"total_us", o.totalUs},
                          {"processes", o.processes},
                          {"min_us", o.minUs},
                          {"median_us", o.medianUs},
                          {"max_us", o.maxUs},
                          {"slowest",
                           {{"trace", slowest.trace},
                            {"process", slowest.process},
                            {"rank", optionalJson(slowest.rank)}}}});
  }
  return {{"schema", kFleetSchema},
          {"traces", traces},
          {"failed", fleet.failed},
          {"hosts", fleet.hosts},
          {"median_process_us", fleet.medianProcessUs},
          {"processes", processes},
          {"operations", operations}};
}

void writeFleetTable(const Fleet& fleet, std::ostream& out, std::size_t topOperations) {
  writeSummaryLine(fleet, out);
  if (fleet.processes.empty()) return;
  writeProcesses(fleet, out);
  writeOperations(fleet, out, topOperations);
}

void writeFleetCsv(const Fleet& fleet, std::ostream& out) {
  out << "trace,host,rank,process,operation,time_us\n";
  for (const auto& o : fleet.operations) {
    for (const auto& [index, us] : o.times) {
      const FleetProcess& p = fleet.processes[index];
      char time[32];
      std::snprintf(time, sizeof time, "%.3f", us);
      out << trace::csvField(p.trace) << ',' << trace::csvField(p.host) << ','
          << (p.rank ? std::to_string(*p.rank) : "") << ',' << p.process << ','
          << trace::csvField(o.name) << ',' << time << '\n';
    }
  }
}

}  // namespace rlscope::report
