#include "fleet_analysis.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <new>
#include <stdexcept>
#include <thread>

#include "commands.h"

namespace rlscope::cli {

namespace fs = std::filesystem;

namespace {

// Analysis documents are a few MB; anything far larger is not one.
constexpr std::uintmax_t kMaxDocumentBytes = 256u << 20;

bool isDocument(const fs::path& path) {
  return path.extension() == ".json";
}

report::FleetInput readDocument(const fs::path& path) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) return {.trace = path.string(), .error = ec.message()};
  if (size > kMaxDocumentBytes)
    return {.trace = path.string(), .error = "too large for an analysis document"};
  std::ifstream in(path);
  auto document = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return {.trace = path.string(), .error = "not JSON"};
  return report::fleetInputFromDocument(document, path.string());
}

report::FleetInput analyzeOne(const fs::path& path, const TraceAnalysisOptions& options) {
  if (isDocument(path)) return readDocument(path);
  try {
    TraceAnalysis a = analyzeTraceFile(path.string(), options);
    return report::fleetInputFromDocument(a.document, path.string());
  } catch (const std::bad_alloc&) {
    return {.trace = path.string(), .error = "out of memory"};
  } catch (const std::exception& e) {
    // The input names the trace already: keep only why (the reader's errors start with it).
    std::string why = e.what(), prefix = path.string() + ": ";
    if (why.starts_with(prefix)) why.erase(0, prefix.size());
    return {.trace = path.string(), .error = why};
  }
}

}  // namespace

std::vector<fs::path> fleetInputs(const std::vector<std::string>& names) {
  std::vector<fs::path> out;
  for (const auto& name : names) {
    std::error_code ec;
    if (fs::is_directory(name, ec)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::directory_iterator(name, ec)) {
        auto extension = entry.path().extension();
        if (entry.is_regular_file() && (extension == ".sqlite" || extension == ".json"))
          found.push_back(entry.path());
      }
      if (ec) throw std::runtime_error(name + ": " + ec.message());
      if (found.empty())
        throw std::runtime_error(name + ": no traces (*.sqlite) or analyses (*.json) in it");
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::exists(name, ec)) {
      out.emplace_back(name);
    } else {
      throw std::runtime_error(name + ": no such file or directory");
    }
  }
  return out;
}

bool isFleet(const std::vector<std::string>& names) {
  std::error_code ec;
  return names.size() != 1 || fs::is_directory(names[0], ec) || isDocument(names[0]);
}

report::Fleet analyzeFleet(const std::vector<fs::path>& inputs, const TraceAnalysisOptions& options,
                           unsigned jobs) {
  TraceAnalysisOptions quiet = options;
  quiet.progress = false;  // one line per trace instead, from several threads
  std::vector<report::FleetInput> results(inputs.size());
  std::atomic<std::size_t> next{0};
  std::mutex progressMutex;
  std::size_t done = 0;
  auto started = std::chrono::steady_clock::now();
  auto work = [&] {
    for (std::size_t i; (i = next++) < inputs.size();) {
      results[i] = analyzeOne(inputs[i], quiet);
      std::lock_guard lock(progressMutex);
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      progress("analysed " + std::to_string(++done) + "/" + std::to_string(inputs.size()) + ": " +
               inputs[i].string() + (results[i].analysis ? "" : " (failed)") + " at " +
               elapsedText(seconds));
    }
  };
  {
    std::vector<std::jthread> workers;
    unsigned threads = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(inputs.size())));
    for (unsigned t = 1; t < threads; ++t) workers.emplace_back(work);
    work();
  }
  return report::combineAnalyses(results);
}

}  // namespace rlscope::cli
