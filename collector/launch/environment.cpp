#include <unistd.h>

#include <cstring>
#include <map>

#include "rlscope/launch/launch.h"
#include "rlscope/part/format.h"

extern char** environ;

namespace rlscope::launch {

namespace {

std::map<std::string, std::string> currentEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq) env[std::string(*e, static_cast<std::size_t>(eq - *e))] = eq + 1;
  }
  return env;
}

void prependPythonPath(std::map<std::string, std::string>& env,
                       const std::filesystem::path& directory) {
  std::string& path = env["PYTHONPATH"];
  path = path.empty() ? directory.string() : directory.string() + ":" + path;
}

std::vector<std::string> entries(const std::map<std::string, std::string>& env) {
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace

std::vector<std::string> plainEnvironment(const std::filesystem::path& pythonDirectory) {
  auto env = currentEnvironment();
  if (!pythonDirectory.empty()) prependPythonPath(env, pythonDirectory);
  return entries(env);
}

std::filesystem::path pythonPackageDirectory(const std::filesystem::path& libraryDirectory) {
  std::filesystem::path python = libraryDirectory.parent_path() / "python";
  std::error_code ec;
  return std::filesystem::exists(python / "rlscope", ec) ? python : std::filesystem::path();
}

std::vector<std::string> injectedEnvironment(const InjectionConfig& config,
                                             std::vector<std::string>& notes) {
  auto env = currentEnvironment();
  const std::string collector = config.collectorLibrary.string();

  // Preloaded so every process of the run, CUDA or not, starts its part at load time.
  std::string& preload = env["LD_PRELOAD"];
  preload = preload.empty() ? collector : collector + ":" + preload;

  if (config.features & part::kFeatureNvtx) {
    auto it = env.find("NVTX_INJECTION64_PATH");
    if (it != env.end() && !it->second.empty() && it->second != collector)
      notes.push_back("NVTX_INJECTION64_PATH was " + it->second +
                      "; rlscope records NVTX itself and replaced it for this run");
    env["NVTX_INJECTION64_PATH"] = collector;
  } else {
    env.erase("NVTX_INJECTION64_PATH");
  }

  bool cuda = config.features & (part::kFeatureCudaApi | part::kFeatureGpuActivity);
  if (cuda && !config.cudaLibrary.empty()) {
    auto it = env.find("CUDA_INJECTION64_PATH");
    if (it != env.end() && !it->second.empty() && it->second != config.cudaLibrary.string())
      notes.push_back("CUDA_INJECTION64_PATH was " + it->second +
                      "; replaced by rlscope's CUPTI collector for this run");
    env["CUDA_INJECTION64_PATH"] = config.cudaLibrary.string();
  }

  std::string features;
  auto add = [&](std::uint32_t bit, const char* name) {
    if (!(config.features & bit)) return;
    if (!features.empty()) features += ',';
    features += name;
  };
  add(part::kFeatureNvtx, "nvtx");
  add(part::kFeatureCudaApi, "cuda-api");
  add(part::kFeatureGpuActivity, "gpu-activity");
  add(part::kFeaturePython, "python");
  env["RLSCOPE_FEATURES"] = features.empty() ? "none" : features;

  if (!config.pythonDirectory.empty()) {
    prependPythonPath(env, config.pythonDirectory);
    // "+a,b": the package's defaults and a, b; "a,b": only a, b (rlscope/_autostart.py).
    auto modules = [&](const std::vector<std::string>& list) {
      std::string v = config.replaceDefaultModules ? "" : "+";
      for (std::size_t i = 0; i < list.size(); ++i) v += (i ? "," : "") + list[i];
      return v;
    };
    env["RLSCOPE_BACKEND_MODULES"] = modules(config.backendModules);
    env["RLSCOPE_SIMULATOR_MODULES"] = modules(config.simulatorModules);
  }
  if (config.pythonEventsOnly)
    env["RLSCOPE_PYTHON_TRACKING"] = "events";
  else
    env.erase("RLSCOPE_PYTHON_TRACKING");
  env["RLSCOPE_PART_DIR"] = config.partDir.string();
  env["RLSCOPE_FLUSH_MS"] = std::to_string(config.flushMs);

  return entries(env);
}

std::filesystem::path libraryDirectory() {
  if (const char* dir = std::getenv("RLSCOPE_LIB_DIR"); dir && *dir) return dir;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return exe.parent_path().parent_path() / "lib";
}

}  // namespace rlscope::launch
