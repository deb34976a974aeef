#include "rlscope/summary/trace_summary.h"

#include <cstdio>
#include <map>

#include "rlscope/trace/global_id.h"
#include "rlscope/trace/micros_text.h"
#include "rlscope/trace/schema.h"

namespace rlscope::summary {

namespace {

std::string formatDuration(trace::TimeNs ns) {
  char buf[64];
  double v = static_cast<double>(ns);
  if (ns >= 1'000'000'000) {
    std::snprintf(buf, sizeof buf, "%.3f s", v / 1e9);
  } else if (ns >= 1'000'000) {
    std::snprintf(buf, sizeof buf, "%.3f ms", v / 1e6);
  } else if (ns >= 1'000) {
    std::snprintf(buf, sizeof buf, "%.3f us", v / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
  }
  return buf;
}

std::string formatBytes(std::int64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / double(1ull << 30));
  return buf;
}

// "rank 1 of 4 on node7 (local 1, torchrun)"; the host only where several take part.
// rlscope merge's record (rlscope_meta.merged_traces): a line per input and how its clock was
// aligned. Untrusted text: anything not shaped as `rlscope merge` writes it is left out.
void printMergedTraces(const std::string& text, std::ostream& out) {
  if (text.empty()) return;
  auto merged = nlohmann::json::parse(text, nullptr, false);
  if (!merged.is_array()) return;
  for (const auto& t : merged) {
    if (!t.is_object()) continue;
    auto str = [&](const char* key) {
      auto it = t.find(key);
      return it != t.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    auto num = [&](const char* key) {
      auto it = t.find(key);
      return it != t.end() && it->is_number_integer() ? it->get<std::int64_t>() : std::int64_t{0};
    };
    out << "merged from  " << str("file");
    if (!str("host").empty()) out << " (" << str("host") << ")";
    std::string method = str("method");
    if (method == "reference") {
      out << ": the reference clock\n";
      continue;
    }
    out << ": "
        << trace::clockOffsetText(method, num("offset_ns"), num("collectives"),
                                  num("uncertainty_ns"));
    out << "\n";
  }
}

std::string rankText(const trace::ProcessIdentityRecord& id, bool withHost) {
  std::string text = trace::rankLabel(id, withHost);
  if (text.empty()) return id.launcher == "ray" ? "ray worker" : text;
  std::vector<std::string> details;
  if (id.localRank) details.push_back("local " + std::to_string(*id.localRank));
  if (!id.launcher.empty()) details.push_back(id.launcher);
  if (!id.backend.empty()) details.push_back(id.backend);
  for (std::size_t i = 0; i < details.size(); ++i) text += (i ? ", " : " (") + details[i];
  if (!details.empty()) text += ")";
  return text;
}

}  // namespace

TraceSummary summarize(trace::TraceReader& reader, const std::string& path) {
  namespace table = trace::table;
  TraceSummary s;
  s.path = path;
  s.schemaVersion = reader.schemaVersion();
  for (const auto& [k, v] : reader.meta()) s.meta.emplace_back(k, v);
  s.span = reader.timeSpan();

  std::map<std::int64_t, std::size_t> byPid;
  for (auto& p : reader.processes()) {
    byPid[p.globalPid] = s.processes.size();
    s.processes.push_back({std::move(p), {}});
  }
  for (auto& t : reader.threads()) {
    auto it = byPid.find(t.globalPid);
    if (it == byPid.end()) {
      trace::ProcessRecord p;
      p.globalPid = t.globalPid;
      p.pid = trace::pidOfGlobalId(t.globalPid);
      it = byPid.emplace(t.globalPid, s.processes.size()).first;
      s.processes.push_back({p, {}});
    }
    s.processes[it->second].threads.push_back(std::move(t));
  }
  auto identities = reader.processIdentities();
  s.hosts = trace::hostsOf(identities);
  for (auto& id : identities) {
    auto it = byPid.find(id.globalPid);
    if (it == byPid.end()) continue;
    if (id.rank) ++s.ranks;
    s.processes[it->second].identity = std::move(id);
  }
  s.gpus = reader.gpus();
  s.gpuVendor = reader.metaValue(trace::meta::kGpuVendor).value_or("NVIDIA");

  for (auto t : trace::eventTables())
    s.tableCounts.emplace_back(std::string(t), reader.rowCount(t));
  s.strings = reader.rowCount(table::kStringIds);

  auto cats = reader.db().prepare(
      "SELECT category, COUNT(*) FROM rlscope_cpu_intervals GROUP BY category ORDER BY category");
  while (cats.step()) {
    s.categoryCounts.emplace_back(
        std::string(trace::categoryName(static_cast<trace::Category>(cats.columnInt(0)))),
        cats.columnInt(1));
  }

  std::map<std::pair<std::int64_t, std::int64_t>, StreamSummary> streams;
  auto countStreams = [&](std::string_view t, std::int64_t StreamSummary::*field) {
    auto st = reader.db().prepare("SELECT deviceId, streamId, COUNT(*) FROM " + std::string(t) +
                                  " GROUP BY deviceId, streamId");
    while (st.step()) {
      auto key = std::pair{st.columnInt(0), st.columnInt(1)};
      auto& ss = streams[key];
      ss.deviceId = key.first;
      ss.streamId = key.second;
      ss.*field += st.columnInt(2);
    }
  };
  countStreams(table::kKernel, &StreamSummary::kernels);
  countStreams(table::kMemcpy, &StreamSummary::memcpys);
  countStreams(table::kMemset, &StreamSummary::memsets);
  for (auto& [k, v] : streams) s.streams.push_back(v);

  auto count = [&](std::string_view t) {
    for (auto& [name, n] : s.tableCounts) {
      if (name == t) return n;
    }
    return std::int64_t{0};
  };
  auto feature = [&](bool present, const char* name) {
    if (present) s.features.emplace_back(name);
  };
  feature(count(table::kOperations) > 0, "operations");
  feature(count(table::kPhases) > 0, "phases");
  for (auto& [cat, n] : s.categoryCounts) s.features.push_back("CPU category " + cat);
  feature(count(table::kRuntime) > 0, "CUDA runtime API");
  feature(count(table::kDriver) > 0, "CUDA driver API");
  feature(count(table::kKernel) > 0, "GPU kernels");
  feature(count(table::kMemcpy) > 0, "GPU memcpys");
  feature(count(table::kMemset) > 0, "GPU memsets");
  feature(count(table::kSync) > 0, "CUDA synchronization");
  feature(count(table::kNvtx) > 0, "NVTX");
  feature(reader.rowCount(table::kExternalCorrelation) > 0, "kernel-to-operation correlation");
  feature(!s.gpus.empty(), "GPU properties");
  feature(reader.rowCount(table::kCalibration) > 0, "overhead calibration");
  return s;
}

nlohmann::json toJson(const TraceSummary& s) {
  using nlohmann::json;
  json j;
  j["schema"] = "rlscope.info/1";
  j["path"] = s.path;
  j["schema_version"] = s.schemaVersion;
  j["meta"] = json::object();
  for (auto& [k, v] : s.meta) j["meta"][k] = v;
  if (s.span) {
    j["time_span"] = {{"start_ns", s.span->start},
                      {"end_ns", s.span->end},
                      {"duration_ns", s.span->end - s.span->start}};
  } else {
    j["time_span"] = nullptr;
  }
  j["hosts"] = s.hosts;
  j["ranks"] = s.ranks;
  j["processes"] = json::array();
  auto orNull = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  auto textOrNull = [](const std::string& v) { return v.empty() ? json(nullptr) : json(v); };
  for (auto& p : s.processes) {
    json threads = json::array();
    for (auto& t : p.threads) threads.push_back({{"tid", t.tid}, {"name", t.name}});
    const auto& id = p.identity;
    j["processes"].push_back({{"pid", p.process.pid},
                              {"name", p.process.name},
                              {"command_line", p.process.commandLine},
                              {"host", textOrNull(id.host)},
                              {"launcher", textOrNull(id.launcher)},
                              {"rank", orNull(id.rank)},
                              {"local_rank", orNull(id.localRank)},
                              {"world_size", orNull(id.worldSize)},
                              {"local_world_size", orNull(id.localWorldSize)},
                              {"node_rank", orNull(id.nodeRank)},
                              {"backend", textOrNull(id.backend)},
                              {"threads", threads}});
  }
  j["gpu_vendor"] = s.gpuVendor;
  j["gpus"] = json::array();
  for (auto& g : s.gpus) {
    j["gpus"].push_back({{"id", g.id},
                         {"name", g.name},
                         {"compute_capability",
                          std::to_string(g.computeMajor) + "." + std::to_string(g.computeMinor)},
                         {"sm_count", g.smCount},
                         {"total_memory", g.totalMemory}});
  }
  j["streams"] = json::array();
  for (auto& st : s.streams) {
    j["streams"].push_back({{"device", st.deviceId},
                            {"stream", st.streamId},
                            {"kernels", st.kernels},
                            {"memcpys", st.memcpys},
                            {"memsets", st.memsets}});
  }
  j["event_counts"] = json::object();
  for (auto& [t, n] : s.tableCounts) j["event_counts"][t] = n;
  j["cpu_categories"] = json::object();
  for (auto& [c, n] : s.categoryCounts) j["cpu_categories"][c] = n;
  j["features"] = s.features;
  return j;
}

void printText(const TraceSummary& s, std::ostream& out) {
  auto metaOr = [&](std::string_view key, std::string_view fallback) -> std::string {
    for (auto& [k, v] : s.meta) {
      if (k == key) return v;
    }
    return std::string(fallback);
  };
  out << "trace        " << s.path << "\n";
  out << "format       rlscope trace v" << s.schemaVersion << ", from "
      << metaOr(trace::meta::kSourceFormat, "unknown");
  auto source = metaOr(trace::meta::kSourceFile, "");
  if (!source.empty()) out << " (" << source << ")";
  out << "\n";
  auto cmd = metaOr(trace::meta::kCommandLine, "");
  if (!cmd.empty()) out << "command      " << cmd << "\n";
  if (s.span) {
    out << "time span    " << formatDuration(s.span->end - s.span->start) << " (" << s.span->start
        << " .. " << s.span->end << " ns)\n";
  } else {
    out << "time span    (no events)\n";
  }
  out << "gpu activity "
      << metaOr(trace::meta::kGpuActivity, s.gpus.empty() ? "none recorded" : "recorded") << "\n";

  if (!s.hosts.empty()) {
    out << (s.hosts.size() == 1 ? "host         " : "hosts        ");
    for (std::size_t i = 0; i < s.hosts.size(); ++i) out << (i ? ", " : "") << s.hosts[i];
    out << "\n";
  }
  printMergedTraces(metaOr("merged_traces", ""), out);
  out << "\nprocesses (" << s.processes.size();
  if (s.ranks) out << ", " << s.ranks << " with a rank";
  out << ")\n";
  bool severalHosts = s.hosts.size() > 1;
  for (auto& p : s.processes) {
    out << "  pid " << p.process.pid;
    if (!p.process.name.empty()) out << "  " << p.process.name;
    if (auto label = rankText(p.identity, severalHosts); !label.empty()) out << "  " << label;
    out << "  (" << p.threads.size() << " thread" << (p.threads.size() == 1 ? "" : "s") << ")\n";
    for (auto& t : p.threads) {
      out << "    tid " << t.tid;
      if (!t.name.empty()) out << "  " << t.name;
      out << "\n";
    }
  }

  out << "\ngpus (" << s.gpus.size() << ")\n";
  for (auto& g : s.gpus) {
    out << "  [" << g.id << "] " << (g.name.empty() ? "(unnamed)" : g.name) << "  ";
    // AMD's compute units and architecture (gfx9.0 for an MI250) are not CUDA's SMs and
    // compute capabilities.
    if (s.gpuVendor == "AMD")
      out << "gfx" << g.computeMajor << "." << g.computeMinor << ", " << g.smCount << " CUs, ";
    else
      out << "sm_" << g.computeMajor << g.computeMinor << ", " << g.smCount << " SMs, ";
    out << formatBytes(g.totalMemory) << "\n";
  }
  if (!s.streams.empty()) {
    out << "\ngpu streams (" << s.streams.size() << ")\n";
    for (auto& st : s.streams) {
      out << "  device " << st.deviceId << " stream " << st.streamId << ": " << st.kernels
          << " kernels, " << st.memcpys << " memcpys, " << st.memsets << " memsets\n";
    }
  }

  out << "\nevents\n";
  for (auto& [t, n] : s.tableCounts) {
    char line[128];
    std::snprintf(line, sizeof line, "  %-38s %12lld\n", t.c_str(), static_cast<long long>(n));
    out << line;
  }
  if (!s.categoryCounts.empty()) {
    out << "\ncpu categories\n";
    for (auto& [c, n] : s.categoryCounts) {
      char line[128];
      std::snprintf(line, sizeof line, "  %-38s %12lld\n", c.c_str(), static_cast<long long>(n));
      out << line;
    }
  }
  out << "\nfeatures     ";
  if (s.features.empty()) out << "(none)";
  for (std::size_t i = 0; i < s.features.size(); ++i) out << (i ? ", " : "") << s.features[i];
  out << "\n";
}

}  // namespace rlscope::summary
