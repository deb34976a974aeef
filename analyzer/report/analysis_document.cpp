#include "analysis_document.h"

#include <algorithm>
#include <stdexcept>

#include "gpu_metrics_json.h"
#include "rlscope/trace/records.h"

namespace rlscope::report {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("analysis document: " + what);
}

// Optional keys of the wrong type count as absent: an old or foreign analyzer must not stop
// the report, it only loses that value.
std::optional<double> optNumber(const json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<std::int64_t> optInteger(const json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

std::string optString(const json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const json* optObject(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? &*it : nullptr;
}

std::map<std::string, double> numberMap(const json* object) {
  std::map<std::string, double> out;
  if (object == nullptr) return out;
  for (const auto& [key, value] : object->items())
    if (value.is_number()) out[key] = value.get<double>();
  return out;
}

const json& required(const json& object, const char* key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end()) fail(where + " has no \"" + key + "\"");
  return *it;
}

double requiredNumber(const json& object, const char* key, const std::string& where) {
  const json& value = required(object, key, where);
  if (!value.is_number()) fail(where + ": \"" + key + "\" is not a number");
  return value.get<double>();
}

std::vector<CategorySetTime> parseCategories(const json& categories, const std::string& where) {
  if (!categories.is_array()) fail(where + ": \"categories\" is not a list");
  std::vector<CategorySetTime> out;
  for (const auto& entry : categories) {
    if (!entry.is_object()) fail(where + ": a category entry is not an object");
    const json& set = required(entry, "set", where + " category entry");
    if (!set.is_array()) fail(where + ": a category \"set\" is not a list");
    CategorySetTime c;
    for (const auto& name : set) {
      if (!name.is_string()) fail(where + ": a category name is not a string");
      c.set.push_back(name.get<std::string>());
    }
    // The contract sorts sets; sorting again keeps keys stable if a producer does not.
    std::sort(c.set.begin(), c.set.end());
    c.timeUs = requiredNumber(entry, "time_us", where + " category entry");
    out.push_back(std::move(c));
  }
  return out;
}

Operation parseOperation(const json& op, std::size_t index) {
  std::string where = "operation " + std::to_string(index);
  if (!op.is_object()) fail(where + " is not an object");
  Operation o;
  const json& name = required(op, "name", where);
  if (!name.is_string()) fail(where + ": \"name\" is not a string");
  o.name = name.get<std::string>();
  where += " (\"" + o.name + "\")";
  const json& process = required(op, "process", where);
  if (!process.is_number_integer()) fail(where + ": \"process\" is not an integer");
  o.process = process.get<std::int64_t>();
  o.host = optString(op, "host");
  o.rank = optInteger(op, "rank");
  o.phase = optString(op, "phase");
  o.instances = optInteger(op, "instances");
  o.timeUs = requiredNumber(op, "time_us", where);
  const json& resources = required(op, "resources", where);
  if (!resources.is_object()) fail(where + ": \"resources\" is not an object");
  o.cpuUs = optNumber(resources, "CPU").value_or(0);
  o.gpuUs = optNumber(resources, "GPU").value_or(0);
  o.cpuGpuUs = optNumber(resources, "CPU+GPU").value_or(0);
  o.waitingUs = optNumber(op, "waiting_us").value_or(0);
  o.gpuBoundUs = optNumber(op, "gpu_bound_us").value_or(o.gpuUs + o.cpuGpuUs);
  o.launchedGpuUs = optNumber(op, "launched_gpu_us");
  o.categories = parseCategories(required(op, "categories", where), where);
  o.transitions = numberMap(optObject(op, "transitions"));
  return o;
}

Kernel parseKernel(const json& k) {
  namespace key = analysis::gpu_json::kernel;
  Kernel out;
  out.name = optString(k, key::kName);
  out.kernelClass = optString(k, key::kClass);
  out.count = optNumber(k, key::kCount);
  out.totalUs = optNumber(k, key::kTotalUs);
  out.meanUs = optNumber(k, key::kMeanUs);
  out.minUs = optNumber(k, key::kMinUs);
  out.maxUs = optNumber(k, key::kMaxUs);
  out.stdUs = optNumber(k, key::kStdUs);
  return out;
}

GpuSection parseGpu(const json& gpu) {
  namespace key = analysis::gpu_json;
  GpuSection out;
  auto available = gpu.find(key::kAvailable);
  // A GPU section without the flag but with kernels was clearly made with a GPU.
  out.available = available != gpu.end() && available->is_boolean() ? available->get<bool>()
                                                                    : gpu.contains(key::kKernels);
  if (auto it = gpu.find(key::kKernels); it != gpu.end() && it->is_array())
    for (const auto& k : *it)
      if (k.is_object()) out.kernels.push_back(parseKernel(k));
  out.classes = numberMap(optObject(gpu, key::kClasses));
  if (const json* idle = optObject(gpu, key::kIdle))
    out.idle = GpuIdle{
        optNumber(*idle, key::idle::kSpanUs),       optNumber(*idle, key::idle::kBusyUs),
        optNumber(*idle, key::idle::kIdleUs),       optNumber(*idle, key::idle::kHostWaitUs),
        optNumber(*idle, key::idle::kKernelWaitUs), optNumber(*idle, key::idle::kOtherUs)};
  if (const json* launch = optObject(gpu, key::kLaunch))
    out.launch = LaunchStats{optNumber(*launch, key::launch::kCount),
                             optNumber(*launch, key::launch::kDelayMeanUs),
                             optNumber(*launch, key::launch::kDelayP50Us),
                             optNumber(*launch, key::launch::kDelayP95Us),
                             optNumber(*launch, key::launch::kDelayMaxUs),
                             optNumber(*launch, key::launch::kShortKernels),
                             optNumber(*launch, key::launch::kShortKernelTimeUs)};
  return out;
}

Correction parseCorrection(const json& c) {
  Correction out;
  out.calibration = optString(c, "calibration");
  out.uncorrectedTotalUs = optNumber(c, "uncorrected_total_us");
  out.correctedTotalUs = optNumber(c, "corrected_total_us");
  out.uninstrumentedTotalUs = optNumber(c, "uninstrumented_total_us");
  out.biasPct = optNumber(c, "bias_pct");
  out.uninstrumentedNoisePct = optNumber(c, "uninstrumented_noise_pct");
  out.biasUncertaintyPct = optNumber(c, "bias_uncertainty_pct");
  out.biasVerdict = optString(c, "bias_verdict");
  out.removedUs = numberMap(optObject(c, "removed_us"));
  return out;
}

PredictedOperation parsePredictedOperation(const json& o) {
  PredictedOperation out;
  out.name = optString(o, "name");
  if (auto it = o.find("process"); it != o.end() && it->is_number_integer())
    out.process = it->get<std::int64_t>();
  out.phase = optString(o, "phase");
  out.originUs = optNumber(o, "origin_us").value_or(0);
  out.predictedUs = optNumber(o, "predicted_us").value_or(0);
  out.gpuScale = optNumber(o, "gpu_scale");
  out.expectedErrorUs = optNumber(o, "expected_error_us");
  return out;
}

PredictedKernel parsePredictedKernel(const json& k) {
  PredictedKernel out;
  out.name = optString(k, "name");
  out.method = optString(k, "method");
  out.launches = optNumber(k, "launches");
  out.cannotPredict = optNumber(k, "cannot_predict");
  out.originUs = optNumber(k, "origin_us");
  out.predictedUs = optNumber(k, "predicted_us");
  out.gamma = optNumber(k, "gamma");
  out.expectedError = optNumber(k, "expected_error");
  return out;
}

// Every key optional: a prediction is an addition to the analysis and must never stop its
// report. A prediction of another schema keeps only the schema, so the report can say why it
// shows nothing of it.
PredictionSection parsePrediction(const json& p) {
  PredictionSection out;
  out.schema = optString(p, "schema");
  if (out.schema != kPredictionSchema) return out;
  out.origin = optString(p, "origin");
  out.originFrom = optString(p, "origin_from");
  out.target = optString(p, "target");
  out.verdict = optString(p, "verdict");
  if (const json* run = optObject(p, "run")) {
    out.originUs = optNumber(*run, "origin_us");
    out.predictedUs = optNumber(*run, "predicted_us");
    out.predictedLowUs = optNumber(*run, "predicted_low_us");
    out.predictedHighUs = optNumber(*run, "predicted_high_us");
    out.speedup = optNumber(*run, "speedup");
    out.gpuBoundUs = optNumber(*run, "gpu_bound_us");
    out.maxSpeedup = optNumber(*run, "max_speedup");
    if (auto it = run->find("cpu_bound"); it != run->end() && it->is_boolean())
      out.cpuBound = it->get<bool>();
  }
  if (const json* gpu = optObject(p, "gpu")) {
    out.gpuOriginUs = optNumber(*gpu, "origin_us");
    out.gpuPredictedUs = optNumber(*gpu, "predicted_us");
    out.gpuExpectedError = optNumber(*gpu, "expected_error");
    out.kernelLaunches = optNumber(*gpu, "kernel_launches");
    out.cannotPredict = optNumber(*gpu, "cannot_predict");
  }
  if (auto it = p.find("operations"); it != p.end() && it->is_array())
    for (const auto& o : *it)
      if (o.is_object()) out.operations.push_back(parsePredictedOperation(o));
  if (auto it = p.find("kernels"); it != p.end() && it->is_array())
    for (const auto& k : *it)
      if (k.is_object()) out.kernels.push_back(parsePredictedKernel(k));
  if (auto it = p.find("notes"); it != p.end() && it->is_array())
    for (const auto& n : *it)
      if (n.is_string()) out.notes.push_back(n.get<std::string>());
  return out;
}

}  // namespace

// "ranks", "stragglers" and "collectives" of `--by rank`; rows of the wrong shape are left out.
RanksSection parseRanks(const json& ranks, const json& document) {
  RanksSection out;
  std::map<std::int64_t, std::size_t> byRank;
  for (const auto& r : ranks) {
    auto rank = optNumber(r, "rank");
    if (!rank) continue;
    RankRow row{.rank = static_cast<std::int64_t>(*rank),
                .host = optString(r, "host"),
                .pid = optInteger(r, "pid")};
    row.timeUs = optNumber(r, "time_us").value_or(0);
    if (const json* c = optObject(r, "collectives")) {
      row.collectives = optNumber(*c, "count").value_or(0);
      row.collectivesUs = optNumber(*c, "time_us").value_or(0);
      row.waitingForOthersUs = optNumber(*c, "waiting_us").value_or(0);
      row.transferringUs = optNumber(*c, "transferring_us").value_or(0);
    }
    byRank[row.rank] = out.ranks.size();
    out.ranks.push_back(std::move(row));
  }
  if (auto s = document.find("stragglers"); s != document.end() && s->is_array()) {
    for (const auto& straggler : *s) {
      auto rank = optNumber(straggler, "rank");
      auto it = rank ? byRank.find(static_cast<std::int64_t>(*rank)) : byRank.end();
      if (it == byRank.end()) continue;
      RankRow& row = out.ranks[it->second];
      row.collectivesLast = optNumber(straggler, "collectives_last").value_or(0);
      row.othersWaitedUs = optNumber(straggler, "others_waited_us").value_or(0);
      if (auto d = straggler.find("doing"); d != straggler.end() && d->is_array()) {
        for (const auto& activity : *d) {
          row.doing.push_back({optString(activity, "operation"), optString(activity, "category"),
                               optNumber(activity, "time_us").value_or(0)});
        }
      }
    }
  }
  if (const json* c = optObject(document, "collectives")) {
    out.matched = optNumber(*c, "matched").value_or(0);
    out.source = optString(*c, "source");
    if (auto n = c->find("notes"); n != c->end() && n->is_array()) {
      for (const auto& note : *n)
        if (note.is_string()) out.notes.push_back(note.get<std::string>());
    }
  }
  return out;
}

Analysis parseAnalysis(const json& document) {
  if (!document.is_object())
    fail("not a JSON object (expected " + std::string(kAnalysisSchema) + ")");
  auto schema = document.find("schema");
  if (schema == document.end() || !schema->is_string())
    fail("no \"schema\" (expected \"" + std::string(kAnalysisSchema) + "\")");
  if (schema->get<std::string>() != kAnalysisSchema)
    fail("schema \"" + schema->get<std::string>() + "\" is not \"" + kAnalysisSchema + "\"");
  const json& operations = required(document, "operations", "the document");
  if (!operations.is_array()) fail("\"operations\" is not a list");

  Analysis a;
  a.trace = optString(document, "trace");
  if (auto it = document.find("corrected"); it != document.end() && it->is_boolean())
    a.corrected = it->get<bool>();
  a.totalUs = optNumber(document, "total_us");
  for (std::size_t i = 0; i < operations.size(); ++i)
    a.operations.push_back(parseOperation(operations[i], i));
  if (const json* gpu = optObject(document, "gpu")) a.gpu = parseGpu(*gpu);
  if (const json* correction = optObject(document, "correction"))
    a.correction = parseCorrection(*correction);
  if (const json* prediction = optObject(document, "prediction"))
    a.prediction = parsePrediction(*prediction);
  if (auto r = document.find("ranks"); r != document.end() && r->is_array())
    a.ranks = parseRanks(*r, document);
  return a;
}

bool isGpuCategory(const std::string& category) {
  auto c = trace::categoryFromName(category);
  return c && trace::isGpuCategory(*c);
}

Resource resourceOf(const std::vector<std::string>& set) {
  bool cpu = false, gpu = false;
  for (const auto& c : set) (isGpuCategory(c) ? gpu : cpu) = true;
  if (cpu && gpu) return Resource::CpuGpu;
  if (gpu) return Resource::Gpu;
  return cpu ? Resource::Cpu : Resource::Idle;
}

std::string setLabel(const std::vector<std::string>& set) {
  if (set.empty()) return "(idle)";
  std::string out;
  for (const auto& c : set) out += (out.empty() ? "" : "+") + c;
  return out;
}

namespace {

// The order categories are listed in everywhere (docs/trace-format.md): CPU ones from the top of
// the stack down, then GPU ones; unknown categories after them.
int categoryRank(const std::string& category) {
  static const std::vector<std::string> kOrder = {"Python",     "Backend",   "Simulator",
                                                  "CUDA API",   "Native",    "GPU kernel",
                                                  "GPU memcpy", "GPU memset"};
  auto it = std::find(kOrder.begin(), kOrder.end(), category);
  return static_cast<int>(it - kOrder.begin());
}

std::vector<int> ranks(const std::vector<std::string>& set) {
  std::vector<int> out;
  for (const auto& c : set) out.push_back(categoryRank(c));
  return out;
}

int resourceRank(Resource r) {
  switch (r) {
    case Resource::Cpu:
      return 0;
    case Resource::CpuGpu:
      return 1;
    case Resource::Gpu:
      return 2;
    case Resource::Idle:
      return 3;
  }
  return 3;
}

}  // namespace

std::vector<std::vector<std::string>> categorySetsOf(const Analysis& analysis) {
  std::vector<std::vector<std::string>> sets;
  for (const auto& op : analysis.operations)
    for (const auto& c : op.categories)
      if (!c.set.empty() && std::find(sets.begin(), sets.end(), c.set) == sets.end())
        sets.push_back(c.set);
  std::sort(sets.begin(), sets.end(), [](const auto& a, const auto& b) {
    int ra = resourceRank(resourceOf(a)), rb = resourceRank(resourceOf(b));
    if (ra != rb) return ra < rb;
    if (a.size() != b.size()) return a.size() < b.size();
    auto rankA = ranks(a), rankB = ranks(b);
    return rankA != rankB ? rankA < rankB : a < b;
  });
  return sets;
}

std::vector<std::int64_t> processesOf(const Analysis& analysis) {
  std::vector<std::int64_t> out;
  for (const auto& o : analysis.operations)
    if (std::find(out.begin(), out.end(), o.process) == out.end()) out.push_back(o.process);
  return out;
}

double processTimeUs(const Analysis& analysis, std::int64_t process) {
  double total = 0;
  for (const auto& o : analysis.operations)
    if (o.process == process) total += o.timeUs;
  return total;
}

std::vector<const Operation*> operationsOf(const Analysis& analysis, std::int64_t process) {
  std::vector<const Operation*> out;
  for (const auto& o : analysis.operations)
    if (o.process == process) out.push_back(&o);
  std::stable_sort(out.begin(), out.end(), [](const Operation* a, const Operation* b) {
    bool aUn = a->name == kUnannotated, bUn = b->name == kUnannotated;
    if (aUn != bUn) return bUn;
    return a->timeUs > b->timeUs;
  });
  return out;
}

Operation totalOf(const std::vector<const Operation*>& operations) {
  Operation sum;
  for (const Operation* op : operations) {
    sum.timeUs += op->timeUs;
    sum.cpuUs += op->cpuUs;
    sum.cpuGpuUs += op->cpuGpuUs;
    sum.gpuUs += op->gpuUs;
    sum.waitingUs += op->waitingUs;
    sum.gpuBoundUs += op->gpuBoundUs;
  }
  return sum;
}

}  // namespace rlscope::report
