#include "breakdown_output.h"

#include <cstdio>
#include <string>

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

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

nlohmann::json toJson(const Breakdown& b) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& o : b.operations) {
    nlohmann::json categories = nlohmann::json::array();
    for (const auto& c : o.categories)
      categories.push_back({{"set", c.set}, {"time_us", us(c.time)}});
    ops.push_back(
        {{"name", o.name},
         {"process", o.process},
         {"phase", o.phase},
         {"instances", o.instances},
         {"time_us", us(o.time)},
         {"resources", {{"CPU", us(o.cpu)}, {"GPU", us(o.gpu)}, {"CPU+GPU", us(o.cpuGpu)}}},
         {"gpu_bound_us", us(o.gpu + o.cpuGpu)},
         {"categories", categories}});
  }
  return {{"schema", "rlscope.analysis/1"}, {"corrected", false}, {"operations", ops}};
}

void writeTable(const Breakdown& b, std::ostream& out) {
  std::int64_t process = -1;
  for (const auto& o : b.operations) {
    if (o.process != process) {
      process = o.process;
      out << "\nprocess " << process << "\n";
      char head[160];
      std::snprintf(head, sizeof head, "  %-28s %-12s %10s %9s %9s %9s  %s\n", "operation", "phase",
                    "time ms", "CPU", "GPU", "CPU+GPU", "top category sets");
      out << head;
    }
    std::string top;
    for (std::size_t i = 0; i < o.categories.size() && i < 3; ++i)
      top +=
          (i ? ", " : "") +
          (o.categories[i].set.empty() ? std::string("(idle)") : joined(o.categories[i].set, "+")) +
          " " + percent(o.categories[i].time, o.time);
    char line[512];
    std::snprintf(line, sizeof line, "  %-28.28s %-12.12s %10s %9s %9s %9s  %s\n", o.name.c_str(),
                  o.phase.c_str(), ms(o.time).c_str(), percent(o.cpu, o.time).c_str(),
                  percent(o.gpu, o.time).c_str(), percent(o.cpuGpu, o.time).c_str(), top.c_str());
    out << line;
  }
  out << "\nCPU / GPU / CPU+GPU: share of each operation's time with only CPU categories, only "
         "GPU\n"
         "ones, or both active (GPU-bound = GPU + CPU+GPU). Times are not corrected for the\n"
         "profiler's overhead.\n";
}

void writeCsv(const Breakdown& b, std::ostream& out) {
  out << "process,operation,phase,set,time_us\n";
  for (const auto& o : b.operations)
    for (const auto& c : o.categories)
      out << o.process << ',' << csvField(o.name) << ',' << csvField(o.phase) << ','
          << csvField(joined(c.set, "+")) << ',' << us(c.time) << '\n';
}

}  // namespace rlscope::analysis
