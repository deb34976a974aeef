#include "rlscope/report/analysis_document.h"

#include <algorithm>
#include <stdexcept>

#include "rlscope/document/gpu_json.h"
#include "rlscope/trace/records.h"

namespace rlscope::report {

namespace {

using nlohmann::json;
namespace json_keys = analysis::json_keys;

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
    const json& set = required(entry, json_keys::category::kSet, where + " category entry");
    if (!set.is_array()) fail(where + ": a category \"set\" is not a list");
    CategorySetTime c;
    for (const auto& name : set) {
      if (!name.is_string()) fail(where + ": a category name is not a string");
      c.set.push_back(name.get<std::string>());
    }
    // The contract sorts sets; sorting again keeps keys stable if a producer does not.
    std::sort(c.set.begin(), c.set.end());
    c.timeUs = requiredNumber(entry, json_keys::category::kTimeUs, where + " category entry");
    out.push_back(std::move(c));
  }
  return out;
}

Operation parseOperation(const json& op, std::size_t index) {
  namespace key = json_keys::operation;
  std::string where = "operation " + std::to_string(index);
  if (!op.is_object()) fail(where + " is not an object");
  Operation o;
  const json& name = required(op, key::kName, where);
  if (!name.is_string()) fail(where + ": \"name\" is not a string");
  o.name = name.get<std::string>();
  where += " (\"" + o.name + "\")";
  const json& process = required(op, key::kProcess, where);
  if (!process.is_number_integer()) fail(where + ": \"process\" is not an integer");
  o.process = process.get<std::int64_t>();
  o.host = optString(op, key::kHost);
  o.rank = optInteger(op, key::kRank);
  o.phase = optString(op, key::kPhase);
  o.instances = optInteger(op, key::kInstances);
  o.timeUs = requiredNumber(op, key::kTimeUs, where);
  const json& resources = required(op, key::kResources, where);
  if (!resources.is_object()) fail(where + ": \"resources\" is not an object");
  o.cpuUs = optNumber(resources, json_keys::resource::kCpu).value_or(0);
  o.gpuUs = optNumber(resources, json_keys::resource::kGpu).value_or(0);
  o.cpuGpuUs = optNumber(resources, json_keys::resource::kCpuGpu).value_or(0);
  o.waitingUs = optNumber(op, key::kWaitingUs).value_or(0);
  o.gpuBoundUs = optNumber(op, key::kGpuBoundUs).value_or(o.gpuUs + o.cpuGpuUs);
  o.launchedGpuUs = optNumber(op, key::kLaunchedGpuUs);
  o.categories = parseCategories(required(op, key::kCategories, where), where);
  o.transitions = numberMap(optObject(op, key::kTransitions));
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
  namespace key = json_keys::correction;
  Correction out;
  out.calibration = optString(c, key::kCalibration);
  out.uncorrectedTotalUs = optNumber(c, key::kUncorrectedTotalUs);
  out.correctedTotalUs = optNumber(c, key::kCorrectedTotalUs);
  out.uninstrumentedTotalUs = optNumber(c, key::kUninstrumentedTotalUs);
  out.biasPct = optNumber(c, key::kBiasPct);
  out.uninstrumentedNoisePct = optNumber(c, key::kUninstrumentedNoisePct);
  out.biasUncertaintyPct = optNumber(c, key::kBiasUncertaintyPct);
  out.biasVerdict = optString(c, key::kBiasVerdict);
  out.removedUs = numberMap(optObject(c, key::kRemovedUs));
  return out;
}

PredictedOperation parsePredictedOperation(const json& o) {
  namespace key = json_keys::prediction;
  PredictedOperation out;
  out.name = optString(o, key::operation::kName);
  if (auto it = o.find(key::operation::kProcess); it != o.end() && it->is_number_integer())
    out.process = it->get<std::int64_t>();
  out.phase = optString(o, key::operation::kPhase);
  out.originUs = optNumber(o, key::operation::kOriginUs).value_or(0);
  out.predictedUs = optNumber(o, key::operation::kPredictedUs).value_or(0);
  out.gpuScale = optNumber(o, key::operation::kGpuScale);
  out.expectedErrorUs = optNumber(o, key::operation::kExpectedErrorUs);
  return out;
}

PredictedKernel parsePredictedKernel(const json& k) {
  namespace key = json_keys::prediction;
  PredictedKernel out;
  out.name = optString(k, key::kernel::kName);
  out.method = optString(k, key::kernel::kMethod);
  out.launches = optNumber(k, key::kernel::kLaunches);
  out.cannotPredict = optNumber(k, key::kernel::kCannotPredict);
  out.originUs = optNumber(k, key::kernel::kOriginUs);
  out.predictedUs = optNumber(k, key::kernel::kPredictedUs);
  out.gamma = optNumber(k, key::kernel::kGamma);
  out.expectedError = optNumber(k, key::kernel::kExpectedError);
  return out;
}

// Every key optional: a prediction is an addition to the analysis and must never stop its
// report. A prediction of another schema keeps only the schema, so the report can say why it
// shows nothing of it.
PredictionSection parsePrediction(const json& p) {
  namespace key = json_keys::prediction;
  PredictionSection out;
  out.schema = optString(p, key::kSchema);
  if (out.schema != kPredictionSchema) return out;
  out.origin = optString(p, key::kOrigin);
  out.originFrom = optString(p, key::kOriginFrom);
  out.target = optString(p, key::kTarget);
  out.verdict = optString(p, key::kVerdict);
  if (const json* run = optObject(p, key::kRun)) {
    out.originUs = optNumber(*run, key::run::kOriginUs);
    out.predictedUs = optNumber(*run, key::run::kPredictedUs);
    out.predictedLowUs = optNumber(*run, key::run::kPredictedLowUs);
    out.predictedHighUs = optNumber(*run, key::run::kPredictedHighUs);
    out.speedup = optNumber(*run, key::run::kSpeedup);
    out.gpuBoundUs = optNumber(*run, key::run::kGpuBoundUs);
    out.maxSpeedup = optNumber(*run, key::run::kMaxSpeedup);
    if (auto it = run->find(key::run::kCpuBound); it != run->end() && it->is_boolean())
      out.cpuBound = it->get<bool>();
  }
  if (const json* gpu = optObject(p, key::kGpu)) {
    out.gpuOriginUs = optNumber(*gpu, key::gpu::kOriginUs);
    out.gpuPredictedUs = optNumber(*gpu, key::gpu::kPredictedUs);
    out.gpuExpectedError = optNumber(*gpu, key::gpu::kExpectedError);
    out.kernelLaunches = optNumber(*gpu, key::gpu::kKernelLaunches);
    out.cannotPredict = optNumber(*gpu, key::gpu::kCannotPredict);
  }
  if (auto it = p.find(key::kOperations); it != p.end() && it->is_array())
    for (const auto& o : *it)
      if (o.is_object()) out.operations.push_back(parsePredictedOperation(o));
  if (auto it = p.find(key::kKernels); it != p.end() && it->is_array())
    for (const auto& k : *it)
      if (k.is_object()) out.kernels.push_back(parsePredictedKernel(k));
  if (auto it = p.find(key::kNotes); it != p.end() && it->is_array())
    for (const auto& n : *it)
      if (n.is_string()) out.notes.push_back(n.get<std::string>());
  return out;
}

}  // namespace

// "ranks", "stragglers" and "collectives" of `--by rank`; rows of the wrong shape are left out.
RanksSection parseRanks(const json& ranks, const json& document) {
  namespace rank_key = json_keys::rank;
  namespace straggler_key = json_keys::straggler;
  RanksSection out;
  std::map<std::int64_t, std::size_t> byRank;
  for (const auto& r : ranks) {
    auto rank = optNumber(r, rank_key::kRank);
    if (!rank) continue;
    RankRow row{.rank = static_cast<std::int64_t>(*rank),
                .host = optString(r, rank_key::kHost),
                .pid = optInteger(r, rank_key::kPid)};
    row.timeUs = optNumber(r, rank_key::kTimeUs).value_or(0);
    if (const json* c = optObject(r, rank_key::kCollectives)) {
      row.collectives = optNumber(*c, rank_key::collectives::kCount).value_or(0);
      row.collectivesUs = optNumber(*c, rank_key::collectives::kTimeUs).value_or(0);
      row.waitingForOthersUs = optNumber(*c, rank_key::collectives::kWaitingUs).value_or(0);
      row.transferringUs = optNumber(*c, rank_key::collectives::kTransferringUs).value_or(0);
    }
    byRank[row.rank] = out.ranks.size();
    out.ranks.push_back(std::move(row));
  }
  if (auto s = document.find(json_keys::kStragglers); s != document.end() && s->is_array()) {
    for (const auto& entry : *s) {
      auto rank = optNumber(entry, straggler_key::kRank);
      auto it = rank ? byRank.find(static_cast<std::int64_t>(*rank)) : byRank.end();
      if (it == byRank.end()) continue;
      RankRow& row = out.ranks[it->second];
      row.collectivesLast = optNumber(entry, straggler_key::kCollectivesLast).value_or(0);
      row.othersWaitedUs = optNumber(entry, straggler_key::kOthersWaitedUs).value_or(0);
      if (auto d = entry.find(straggler_key::kDoing); d != entry.end() && d->is_array()) {
        for (const auto& activity : *d) {
          row.doing.push_back({optString(activity, straggler_key::doing::kOperation),
                               optString(activity, straggler_key::doing::kCategory),
                               optNumber(activity, straggler_key::doing::kTimeUs).value_or(0)});
        }
      }
    }
  }
  if (const json* c = optObject(document, json_keys::kCollectives)) {
    out.matched = optNumber(*c, json_keys::collectives::kMatched).value_or(0);
    out.source = optString(*c, json_keys::collectives::kSource);
    if (auto n = c->find(json_keys::collectives::kNotes); n != c->end() && n->is_array()) {
      for (const auto& note : *n)
        if (note.is_string()) out.notes.push_back(note.get<std::string>());
    }
  }
  return out;
}

Analysis parseAnalysis(const json& document) {
  if (!document.is_object())
    fail("not a JSON object (expected " + std::string(kAnalysisSchema) + ")");
  auto schema = document.find(json_keys::kSchema);
  if (schema == document.end() || !schema->is_string())
    fail("no \"schema\" (expected \"" + std::string(kAnalysisSchema) + "\")");
  if (schema->get<std::string>() != kAnalysisSchema)
    fail("schema \"" + schema->get<std::string>() + "\" is not \"" + kAnalysisSchema + "\"");
  const json& operations = required(document, json_keys::kOperations, "the document");
  if (!operations.is_array()) fail("\"operations\" is not a list");

  Analysis a;
  a.trace = optString(document, json_keys::kTrace);
  if (auto it = document.find(json_keys::kCorrected); it != document.end() && it->is_boolean())
    a.corrected = it->get<bool>();
  a.totalUs = optNumber(document, json_keys::kTotalUs);
  for (std::size_t i = 0; i < operations.size(); ++i)
    a.operations.push_back(parseOperation(operations[i], i));
  if (const json* gpu = optObject(document, json_keys::kGpu)) a.gpu = parseGpu(*gpu);
  if (const json* correction = optObject(document, json_keys::kCorrection))
    a.correction = parseCorrection(*correction);
  if (const json* prediction = optObject(document, json_keys::kPrediction))
    a.prediction = parsePrediction(*prediction);
  if (auto r = document.find(json_keys::kRanks); r != document.end() && r->is_array())
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
