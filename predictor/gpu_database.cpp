#include "rlscope/predictor/gpu_database.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

namespace rlscope::predictor {

extern const std::string_view kBuiltInGpusJson;  // builtin_gpus.cpp, generated

namespace {

using nlohmann::json;

inline constexpr const char* kSchema = "rlscope.gpus/1";
inline constexpr std::size_t kMaxFileBytes = 16u << 20;  // a user's file is untrusted input

// Lower case, without a leading "NVIDIA " and with '_' and ' ' read as '-', so that the driver's
// "NVIDIA A100-SXM4-80GB", "a100 sxm4 80gb" and "A100_SXM4_80GB" meet.
std::string nameKey(std::string_view name) {
  std::string key;
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    key += (c == ' ' || c == '_') ? '-' : static_cast<char>(std::tolower(u));
  }
  if (key.rfind("nvidia-", 0) == 0) key.erase(0, 7);
  return key;
}

class SpecReader {
 public:
  SpecReader(const json& object, std::string where) : object_(object), where_(std::move(where)) {}

  template <typename T>
  T number(const char* field, T min, T max) {
    const json& value = required(field);
    if (!value.is_number()) throw std::runtime_error(where_ + ": '" + field + "' must be a number");
    auto x = value.get<double>();
    if (!(x >= static_cast<double>(min) && x <= static_cast<double>(max)))
      throw std::runtime_error(where_ + ": '" + field + "' = " + value.dump() + " is out of range");
    if constexpr (std::is_integral_v<T>) {
      if (x != static_cast<double>(static_cast<T>(x)))
        throw std::runtime_error(where_ + ": '" + field + "' must be a whole number");
    }
    return static_cast<T>(x);
  }

  std::string text(const char* field) {
    const json& value = required(field);
    if (!value.is_string() || value.get_ref<const std::string&>().empty())
      throw std::runtime_error(where_ + ": '" + field + "' must be a non-empty string");
    return value.get<std::string>();
  }

  const json& required(const char* field) {
    auto it = object_.find(field);
    if (it == object_.end()) throw std::runtime_error(where_ + ": missing '" + field + "'");
    return *it;
  }

 private:
  const json& object_;
  std::string where_;
};

void readComputeCapability(const std::string& text, GpuSpec& gpu, const std::string& where) {
  int major = 0, minor = 0;
  char dot = 0, extra = 0;
  std::istringstream in(text);
  if (!(in >> major >> dot >> minor) || dot != '.' || (in >> extra) || major < 1 || major > 99 ||
      minor < 0 || minor > 9)
    throw std::runtime_error(where + ": compute_capability '" + text +
                             "' is not of the form MAJOR.MINOR");
  gpu.ccMajor = major;
  gpu.ccMinor = minor;
}

// Every field a GPU entry must have, in file order: the loader refuses an entry without one.
GpuSpec readGpu(const json& object, const std::string& where) {
  if (!object.is_object()) throw std::runtime_error(where + ": a GPU must be a JSON object");
  SpecReader r(object, where);
  GpuSpec g;
  g.name = r.text("name");
  SpecReader named(object, where + " ('" + g.name + "')");
  if (auto it = object.find("aliases"); it != object.end()) {
    if (!it->is_array()) throw std::runtime_error(where + ": 'aliases' must be a list");
    for (const auto& alias : *it) {
      if (!alias.is_string() || alias.get_ref<const std::string&>().empty())
        throw std::runtime_error(where + ": every alias must be a non-empty string");
      g.aliases.push_back(alias.get<std::string>());
    }
  }
  g.architecture = named.text("architecture");
  readComputeCapability(named.text("compute_capability"), g, where);
  g.smCount = named.number<int>("sm_count", 1, 4096);
  g.baseClockMhz = named.number<double>("base_clock_mhz", 1, 10000);
  g.boostClockMhz = named.number<double>("boost_clock_mhz", g.baseClockMhz, 10000);
  g.memoryGB = named.number<double>("memory_gb", 0.1, 1e5);
  g.memoryBandwidthGBs = named.number<double>("memory_bandwidth_gbs", 1, 1e6);
  g.achievableBandwidthGBs =
      named.number<double>("achievable_bandwidth_gbs", 1, g.memoryBandwidthGBs);
  g.fp32Tflops = named.number<double>("fp32_tflops", 0.01, 1e5);
  g.tf32Tflops = named.number<double>("tf32_tflops", 0, 1e5);
  g.fp16Tflops = named.number<double>("fp16_tflops", 0, 1e5);
  g.bf16Tflops = named.number<double>("bf16_tflops", 0, 1e5);
  g.registersPerSm = named.number<int>("registers_per_sm", 1024, 1 << 24);
  g.registersPerBlock = named.number<int>("registers_per_block", 1024, g.registersPerSm);
  g.sharedMemPerSm = named.number<int>("shared_memory_per_sm", 1024, 1 << 26);
  g.sharedMemPerBlock = named.number<int>("shared_memory_per_block", 1024, g.sharedMemPerSm);
  g.sharedMemPerBlockOptin =
      named.number<int>("shared_memory_per_block_optin", 0, g.sharedMemPerSm);
  g.maxThreadsPerSm = named.number<int>("max_threads_per_sm", 32, 1 << 20);
  g.maxThreadsPerBlock = named.number<int>("max_threads_per_block", 32, g.maxThreadsPerSm);
  g.maxBlocksPerSm = named.number<int>("max_blocks_per_sm", 1, 1024);
  g.warpSize = named.number<int>("warp_size", 32, 32);
  g.l2CacheBytes = named.number<std::int64_t>("l2_cache_bytes", 0, std::int64_t{1} << 40);
  if (auto it = object.find("notes"); it != object.end() && it->is_string()) g.notes = *it;
  const json& sources = named.required("sources");
  if (!sources.is_object()) throw std::runtime_error(where + ": 'sources' must be an object");
  for (const auto& [field, id] : sources.items()) {
    if (field != "default" && !object.contains(field))
      throw std::runtime_error(where + ": 'sources' names '" + field + "', which is not a field");
    if (!id.is_string()) throw std::runtime_error(where + ": source ids must be strings");
    g.sources[field] = id.get<std::string>();
  }
  return g;
}

// Every value must have a source: a "default" or one per numeric field.
void checkSourced(const GpuSpec& gpu, const json& object, const std::set<std::string>& known,
                  const std::string& where) {
  for (const auto& [field, value] : object.items()) {
    if (field == "name" || field == "aliases" || field == "sources" || field == "notes") continue;
    std::string id = gpu.sourceOf(field);
    if (id.empty())
      throw std::runtime_error(where + " ('" + gpu.name + "'): '" + field + "' has no source");
    if (!known.count(id))
      throw std::runtime_error(where + " ('" + gpu.name + "'): unknown source id '" + id + "'");
  }
}

}  // namespace

std::string GpuSpec::computeCapabilityText() const {
  return std::to_string(ccMajor) + "." + std::to_string(ccMinor);
}

std::string GpuSpec::sourceOf(std::string_view field) const {
  if (auto it = sources.find(std::string(field)); it != sources.end()) return it->second;
  if (auto it = sources.find("default"); it != sources.end()) return it->second;
  return {};
}

const GpuDatabase& GpuDatabase::builtIn() {
  static const GpuDatabase db = parse(kBuiltInGpusJson, "the built-in GPU database");
  return db;
}

GpuDatabase GpuDatabase::parse(std::string_view text, const std::string& origin) {
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) throw std::runtime_error(origin + ": not valid JSON");
  if (!doc.is_object() || doc.value("schema", "") != kSchema)
    throw std::runtime_error(origin + ": not a GPU database (schema is not '" +
                             std::string(kSchema) + "')");
  GpuDatabase db;
  if (auto it = doc.find("sources"); it != doc.end()) {
    if (!it->is_object()) throw std::runtime_error(origin + ": 'sources' must be an object");
    for (const auto& [id, citation] : it->items()) {
      if (!citation.is_string()) throw std::runtime_error(origin + ": sources must be strings");
      db.sources_[id] = citation.get<std::string>();
    }
  }
  auto gpus = doc.find("gpus");
  if (gpus == doc.end() || !gpus->is_array())
    throw std::runtime_error(origin + ": missing the 'gpus' list");
  std::set<std::string> known;
  for (const auto& [id, citation] : db.sources_) known.insert(id);
  std::set<std::string> names;
  for (std::size_t i = 0; i < gpus->size(); ++i) {
    std::string where = origin + ": gpus[" + std::to_string(i) + "]";
    GpuSpec gpu = readGpu((*gpus)[i], where);
    checkSourced(gpu, (*gpus)[i], known, where);
    // A GPU may repeat its own name among its aliases; no two GPUs may share one.
    std::set<std::string> own{nameKey(gpu.name)};
    for (const auto& alias : gpu.aliases) own.insert(nameKey(alias));
    for (const auto& key : own)
      if (!names.insert(key).second)
        throw std::runtime_error(where + ": the name '" + key + "' (in any case) is used twice");
    db.gpus_.push_back(std::move(gpu));
  }
  return db;
}

GpuDatabase GpuDatabase::load(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot open the GPU database file");
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes)
      throw std::runtime_error(path.string() + ": larger than a GPU database can be (16 MiB)");
  }
  return parse(text, path.string());
}

void GpuDatabase::merge(const GpuDatabase& other) {
  for (const auto& [id, citation] : other.sources_) sources_[id] = citation;
  for (const auto& gpu : other.gpus_) {
    auto clashes = [&](const GpuSpec& mine) {
      auto ours = [&](std::string_view n) {
        if (nameKey(n) == nameKey(mine.name)) return true;
        return std::any_of(mine.aliases.begin(), mine.aliases.end(),
                           [&](const std::string& a) { return nameKey(a) == nameKey(n); });
      };
      return ours(gpu.name) || std::any_of(gpu.aliases.begin(), gpu.aliases.end(),
                                           [&](const std::string& a) { return ours(a); });
    };
    gpus_.erase(std::remove_if(gpus_.begin(), gpus_.end(), clashes), gpus_.end());
    gpus_.push_back(gpu);
  }
}

const GpuSpec* GpuDatabase::find(std::string_view name) const {
  std::string key = nameKey(name);
  for (const auto& gpu : gpus_) {
    if (nameKey(gpu.name) == key) return &gpu;
    for (const auto& alias : gpu.aliases)
      if (nameKey(alias) == key) return &gpu;
  }
  return nullptr;
}

const GpuSpec& GpuDatabase::get(std::string_view name) const {
  if (const GpuSpec* gpu = find(name)) return *gpu;
  throw std::runtime_error("unknown GPU '" + std::string(name) +
                           "' (see `rlscope devices` for the names rlscope knows)");
}

}  // namespace rlscope::predictor
