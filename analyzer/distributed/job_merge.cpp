#include "rlscope/distributed/job_merge.h"

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <system_error>

#include "rlscope/trace/error.h"
#include "rlscope/trace/global_id.h"
#include "rlscope/trace/schema.h"
#include "rlscope/trace/trace_copy.h"

namespace rlscope::analysis {

namespace {

bool sameFile(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec) && !ec;
}

std::string hostOf(trace::TraceReader& r) {
  return r.metaValue(trace::meta::kHost).value_or("");
}

// How a trace goes onto the reference's clock. The reference's collectives are read once, on
// the first trace that needs them.
ClockOffset align(trace::TraceReader& reference,
                  std::optional<std::vector<CollectiveCall>>& referenceCollectives,
                  trace::TraceReader& other, const std::filesystem::path& file,
                  const JobMergeOptions& options) {
  auto wall = wallClockOffset(reference, other);
  if (wall && wall->method == "same host") return *wall;
  std::optional<ClockOffset> exchange;
  if (options.useClockExchange) {
    try {
      exchange = exchangeOffset(reference, other);
    } catch (const trace::TraceError& e) {
      throw trace::TraceError(file.string() + " or the first trace: " + e.what() +
                              " (--align wall-clock ignores it)");
    }
  }
  if (options.alignByCollectives) {
    if (!referenceCollectives) referenceCollectives = lowestRankCollectives(reference);
    if (auto c = collectiveOffset(*referenceCollectives, lowestRankCollectives(other))) {
      // The exchange bounds the offset for certain; completions seen late cannot move it out.
      if (exchange) {
        c->offset = std::clamp(c->offset, exchange->offset - exchange->uncertainty,
                               exchange->offset + exchange->uncertainty);
        c->uncertainty = std::min(c->uncertainty, exchange->uncertainty);
      }
      return *c;
    }
  }
  if (exchange) return *exchange;
  if (wall) return *wall;
  throw trace::TraceError(
      file.string() +
      ": cannot be put on the first trace's clock: it has no wall-clock "
      "origin (rlscope_meta.start_wall_ns) and no collective in common with it");
}

// Packed pids for the processes of one trace: its own where free, else the highest free ones.
std::map<std::int64_t, std::int64_t> allocatePids(trace::TraceReader& r,
                                                  std::set<std::int64_t>& used) {
  std::map<std::int64_t, std::int64_t> remapped;
  std::int64_t next = trace::kGlobalIdFieldLimit - 1;
  for (const auto& p : r.processes()) {
    std::int64_t packed = trace::pidOfGlobalId(p.globalPid);
    if (used.insert(packed).second) continue;
    while (used.count(next)) --next;
    used.insert(next);
    remapped[packed] = next;
  }
  return remapped;
}

// The writer owns these; every other key of the first trace's meta is the job's.
bool writerOwned(std::string_view key) {
  return key == trace::meta::kSchemaVersion || key == trace::meta::kRlscopeVersion ||
         key == trace::meta::kCreatedAt || key == trace::meta::kHost;
}

}  // namespace

JobMergeReport mergeJob(const std::vector<std::filesystem::path>& inputs,
                        const std::filesystem::path& output, const JobMergeOptions& options) {
  if (inputs.empty()) throw trace::TraceError("no trace to merge");
  std::vector<std::unique_ptr<trace::TraceReader>> readers;
  for (const auto& in : inputs) {
    if (sameFile(in, output)) {
      throw trace::TraceError(output.string() + ": is one of the traces to merge; write elsewhere");
    }
    readers.push_back(std::make_unique<trace::TraceReader>(in));
  }

  JobMergeReport report;
  std::optional<std::vector<CollectiveCall>> referenceCollectives;
  std::set<std::string> hosts, formats;
  for (std::size_t i = 0; i < readers.size(); ++i) {
    MergedTrace t{.file = inputs[i], .host = hostOf(*readers[i])};
    if (i == 0) {
      t.clock.method = "reference";
    } else {
      if (options.progress) options.progress("aligning " + inputs[i].string());
      t.clock = align(*readers[0], referenceCollectives, *readers[i], inputs[i], options);
    }
    hosts.insert(t.host);
    formats.insert(readers[i]->metaValue(trace::meta::kSourceFormat).value_or(""));
    report.traces.push_back(std::move(t));
  }

  trace::TraceWriter w(output);
  for (const auto& [key, value] : readers[0]->meta()) {
    if (!writerOwned(key)) w.setMeta(key, value);
  }
  if (hosts.size() == 1 && !hosts.begin()->empty()) w.setMeta(trace::meta::kHost, *hosts.begin());
  if (formats.size() > 1) w.setMeta(trace::meta::kSourceFormat, "merged");
  for (const auto& c : readers[0]->calibration()) w.addCalibration(c);

  std::set<std::int64_t> usedPids;
  std::map<std::string, std::int64_t> hostDeviceOffset;
  std::int64_t nextDevice = 0, maxOperationId = 0;
  nlohmann::json merged = nlohmann::json::array();
  for (std::size_t i = 0; i < readers.size(); ++i) {
    auto& t = report.traces[i];
    if (options.progress) options.progress("copying " + t.file.string());
    trace::CopyMapping m{.timeOffset = t.clock.offset,
                         .pids = allocatePids(*readers[i], usedPids),
                         .operationIdOffset = maxOperationId};
    // One host's GPUs are the same devices in each of its traces; another host's are others.
    // A trace whose host is unknown gets devices of its own.
    m.deviceOffset =
        t.host.empty() ? nextDevice : hostDeviceOffset.emplace(t.host, nextDevice).first->second;
    t.pidsRemapped = m.pids.size();
    t.deviceOffset = m.deviceOffset;
    auto stats = trace::copyTrace(*readers[i], w, m);
    t.rows = stats.rows;
    report.rows += stats.rows;
    maxOperationId = std::max(maxOperationId, stats.maxOperationId);
    nextDevice = std::max(nextDevice, stats.maxDeviceId + 1);
    merged.push_back({{"file", t.file.string()},
                      {"host", t.host},
                      {"offset_ns", t.clock.offset},
                      {"uncertainty_ns", t.clock.uncertainty},
                      {"method", t.clock.method},
                      {"collectives", t.clock.collectives},
                      {"pids_remapped", t.pidsRemapped},
                      {"device_offset", t.deviceOffset}});
  }
  w.setMeta("merged_traces", merged.dump());
  if (options.progress) options.progress("writing " + output.string());
  w.commit();
  return report;
}

}  // namespace rlscope::analysis
