// The report library: HTML and Markdown renderings of analysis documents (structure, escaping,
// percentages, missing sections) and the regression gate's rule. Set RLSCOPE_REPORT_SAMPLE_DIR
// to also write the sample document's report-sample.html and report-sample.md there.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "rlscope/report/comparison.h"
#include "rlscope/report/comparison_output.h"
#include "rlscope/report/html_report.h"
#include "rlscope/report/markdown_report.h"

namespace rlscope::report {
namespace {

using nlohmann::json;

const char* kTrickyName = "<script>alert(\"x\")</script> & 'q'|pipe";

bool isGpu(const std::string& category) {
  return category.rfind("GPU", 0) == 0;
}

// One operation whose resources and time follow from its category sets plus idle time, as the
// analyzer computes them.
json operation(const std::string& name, std::int64_t process, const std::string& phase,
               const std::vector<std::pair<std::vector<std::string>, double>>& sets,
               double idleUs = 0) {
  double cpu = 0, gpu = 0, both = 0, time = idleUs;
  json categories = json::array();
  for (const auto& [set, us] : sets) {
    bool hasCpu = false, hasGpu = false;
    for (const auto& c : set) (isGpu(c) ? hasGpu : hasCpu) = true;
    (hasCpu && hasGpu ? both : hasGpu ? gpu : cpu) += us;
    time += us;
    categories.push_back({{"set", set}, {"time_us", us}});
  }
  return {{"name", name},
          {"process", process},
          {"phase", phase},
          {"instances", 10},
          {"time_us", time},
          {"gpu_bound_us", gpu + both},
          {"resources", {{"CPU", cpu}, {"GPU", gpu}, {"CPU+GPU", both}}},
          {"categories", categories},
          {"transitions",
           {{"Python->Backend", 120}, {"Python->Simulator", 40}, {"Backend->CUDA API", 300}}}};
}

// A PPO-like training run: inference, simulation and backpropagation, time outside every
// operation, one operation with a hostile name; kernels, idle time, launches and correction.
json sampleDocument() {
  json ops = json::array();
  ops.push_back(operation("inference", 4242, "training",
                          {{{"Python"}, 180000},
                           {{"Backend"}, 240000},
                           {{"Backend", "CUDA API"}, 95000},
                           {{"Backend", "GPU kernel"}, 60000},
                           {{"CUDA API", "GPU kernel"}, 30000},
                           {{"GPU kernel"}, 45000},
                           {{"GPU memcpy"}, 8000}},
                          5000));
  ops.push_back(operation(
      "simulation", 4242, "training",
      {{{"Python"}, 210000}, {{"Simulator"}, 690000}, {{"Python", "Simulator"}, 12000}}, 2000));
  ops.push_back(operation("backpropagation", 4242, "training",
                          {{{"Python"}, 90000},
                           {{"Backend"}, 160000},
                           {{"Backend", "CUDA API"}, 140000},
                           {{"Backend", "GPU kernel"}, 110000},
                           {{"GPU kernel"}, 180000},
                           {{"GPU memset"}, 3000}},
                          1000));
  ops.push_back(
      operation(kTrickyName, 4242, "training", {{{"Python"}, 25000}, {{"Native"}, 15000}}));
  ops.push_back(operation("(unannotated)", 4242, "", {{{"Python"}, 70000}}, 30000));
  json kernels = json::array();
  kernels.push_back({{"name",
                      "void at::native::vectorized_elementwise_kernel<4, "
                      "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, "
                      "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"},
                     {"class", "compute"},
                     {"count", 5200},
                     {"total_us", 240000},
                     {"mean_us", 46.2},
                     {"min_us", 3.1},
                     {"max_us", 412.0},
                     {"std_us", 22.5}});
  kernels.push_back({{"name", "ampere_sgemm_128x64_tn"},
                     {"class", "compute"},
                     {"count", 1800},
                     {"total_us", 185000},
                     {"mean_us", 102.8},
                     {"min_us", 60.2},
                     {"max_us", 180.7},
                     {"std_us", 12.0}});
  kernels.push_back({{"name", "[CUDA memcpy HtoD]"},
                     {"class", "memory"},
                     {"count", 900},
                     {"total_us", 8000},
                     {"mean_us", 8.9},
                     {"min_us", 1.2},
                     {"max_us", 64.0},
                     {"std_us", 5.5}});
  kernels.push_back({{"name", "[CUDA memset]"},
                     {"class", "memory"},
                     {"count", 300},
                     {"total_us", 3000},
                     {"mean_us", 10.0},
                     {"min_us", 2.0},
                     {"max_us", 30.0},
                     {"std_us", 3.0}});
  return {{"schema", "rlscope.analysis/1"},
          {"trace", "runs/ppo_walker2d.sqlite"},
          {"corrected", true},
          {"total_us", 2405000.0},
          {"operations", ops},
          {"gpu",
           {{"available", true},
            {"kernels", kernels},
            {"classes", {{"compute", 425000}, {"memory", 11000}, {"communication", 0}}},
            {"idle",
             {{"span_us", 2390000},
              {"busy_us", 436000},
              {"idle_us", 1954000},
              {"host_wait_us", 1800000},
              {"kernel_wait_us", 90000},
              {"other_us", 64000}}},
            {"launch",
             {{"count", 8200},
              {"delay_mean_us", 18.2},
              {"delay_p50_us", 9.5},
              {"delay_p95_us", 61.0},
              {"delay_max_us", 2300.0},
              {"short_kernels", 3100},
              {"short_kernel_time_us", 14500}}}}},
          {"correction",
           {{"calibration", "calibration/ppo_walker2d.json"},
            {"uncorrected_total_us", 3465000},
            {"corrected_total_us", 2405000},
            {"uninstrumented_total_us", 2342000},
            {"bias_pct", 2.7},
            {"bias_uncertainty_pct", 1.9},
            {"bias_verdict", "within_target"},
            {"uninstrumented_noise_pct", 1.4},
            {"removed_us",
             {{"annotation", 42000},
              {"python_transition", 510000},
              {"cuda_api_interception", 208000},
              {"cupti", 300000}}}}}};
}

// Only the keys docs/analysis.md requires: what an old or CPU-only analyzer writes.
json minimalDocument() {
  json op = operation("step", 7, "", {{{"Python"}, 1000}, {{"Simulator"}, 3000}});
  for (const char* key : {"phase", "instances", "gpu_bound_us", "transitions"}) op.erase(key);
  return {{"schema", "rlscope.analysis/1"}, {"operations", json::array({op})}};
}

// Every opened element is closed in order, void elements and "<x/>" aside; comments, the
// doctype and <style> text are skipped. Returns "" when balanced, else what went wrong.
std::string tagBalanceError(const std::string& html) {
  static const std::set<std::string> kVoid = {"area",   "base",  "br",    "col",  "embed",
                                              "hr",     "img",   "input", "link", "meta",
                                              "source", "track", "wbr"};
  std::vector<std::string> open;
  std::size_t i = 0;
  while ((i = html.find('<', i)) != std::string::npos) {
    if (html.compare(i, 4, "<!--") == 0) {
      i = html.find("-->", i);
      if (i == std::string::npos) return "unterminated comment";
      continue;
    }
    std::size_t end = html.find('>', i);
    if (end == std::string::npos) return "unterminated tag at " + std::to_string(i);
    std::string tag = html.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.empty() || tag[0] == '!') continue;
    bool closing = tag[0] == '/';
    std::string name = tag.substr(closing ? 1 : 0,
                                  tag.find_first_of(" \t\n/", closing ? 1 : 0) - (closing ? 1 : 0));
    if (closing) {
      if (open.empty() || open.back() != name)
        return "</" + name + "> closes <" + (open.empty() ? "nothing" : open.back()) + ">";
      open.pop_back();
    } else if (tag.back() != '/' && !kVoid.count(name)) {
      open.push_back(name);
      if (name == "style") i = html.find("</style>", i);
    }
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}

// The "% of process" cells of every operation table body (footers excluded).
std::vector<std::vector<double>> percentColumns(const std::string& html) {
  std::vector<std::vector<double>> tables;
  static const std::regex kCell(R"(<td class="num pct">([0-9.]+)%</td>)");
  for (std::size_t at = 0; (at = html.find("<tbody>", at)) != std::string::npos;) {
    std::size_t end = html.find("</tbody>", at);
    std::string body = html.substr(at, end - at);
    at = end;
    std::vector<double> pcts;
    for (std::sregex_iterator m(body.begin(), body.end(), kCell), none; m != none; ++m)
      pcts.push_back(std::stod((*m)[1]));
    if (!pcts.empty()) tables.push_back(pcts);
  }
  return tables;
}

// Lines of the Markdown table that follows `heading`.
std::vector<std::string> tableAfter(const std::string& markdown, const std::string& heading) {
  std::istringstream in(markdown.substr(markdown.find(heading)));
  std::vector<std::string> rows;
  std::string line;
  bool inTable = false;
  while (std::getline(in, line)) {
    if (line.rfind("|", 0) == 0) {
      inTable = true;
      rows.push_back(line);
    } else if (inTable) {
      break;
    }
  }
  return rows;
}

// Columns a UTF-8 line takes in a terminal ("µ" is two bytes, one column).
std::size_t displayWidth(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// Cell separators: '|' not preceded by a backslash.
std::size_t unescapedPipes(const std::string& row) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < row.size(); ++i)
    if (row[i] == '|' && (i == 0 || row[i - 1] != '\\')) ++n;
  return n;
}

void writeSampleIfAsked(const std::string& html, const std::string& markdown) {
  const char* dir = std::getenv("RLSCOPE_REPORT_SAMPLE_DIR");
  if (dir == nullptr) return;
  std::ofstream(std::string(dir) + "/report-sample.html") << html;
  std::ofstream(std::string(dir) + "/report-sample.md") << markdown;
}

// --- HTML ---------------------------------------------------------------------------------------

TEST(HtmlReport, IsSelfContainedAndBalanced) {
  std::string html = renderHtml(sampleDocument());
  writeSampleIfAsked(html, renderMarkdown(sampleDocument()));
  EXPECT_EQ(tagBalanceError(html), "");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(html, "<script"), 0u) << "no scripts, and input names are escaped";
  EXPECT_EQ(count(html, "http://") + count(html, "https://"), 0u) << "nothing from the network";
  EXPECT_NE(html.find("<style>"), std::string::npos);
}

TEST(HtmlReport, TitleNamesTraceAndCorrection) {
  std::string html = renderHtml(sampleDocument());
  EXPECT_NE(html.find("runs/ppo_walker2d.sqlite"), std::string::npos);
  EXPECT_NE(html.find("overhead corrected"), std::string::npos);
  json uncorrected = minimalDocument();
  EXPECT_NE(renderHtml(uncorrected).find(">uncorrected<"), std::string::npos);
}

TEST(HtmlReport, EscapesEveryOperationName) {
  std::string html = renderHtml(sampleDocument());
  for (const char* name : {"inference", "simulation", "backpropagation", "(unannotated)"})
    EXPECT_NE(html.find(std::string(">") + name + "<"), std::string::npos) << name;
  EXPECT_NE(html.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;|pipe"),
            std::string::npos);
  EXPECT_EQ(html.find(kTrickyName), std::string::npos);
  EXPECT_NE(
      html.find("vectorized_elementwise_kernel&lt;4, at::native::CUDAFunctor_add&lt;float&gt;"),
      std::string::npos)
      << "kernel names are escaped too";
}

TEST(HtmlReport, OneBarPerOperation) {
  json doc = sampleDocument();
  std::string html = renderHtml(doc);
  EXPECT_EQ(count(html, "<g class=\"bar\""), doc["operations"].size());
  // The longest operation spans the whole bar (580 units), idle time included: its category
  // segments (height 18) add up to the bar width.
  std::size_t at = html.find("<g class=\"bar\" data-operation=\"simulation\"");
  ASSERT_NE(at, std::string::npos);
  std::string bar = html.substr(at, html.find("</g>", at) - at);
  static const std::regex kSegment(R"re(width="([0-9.]+)" height="18.00")re");
  double width = 0;
  for (std::sregex_iterator m(bar.begin(), bar.end(), kSegment), none; m != none; ++m)
    width += std::stod((*m)[1]);
  EXPECT_NEAR(width, 580.0, 0.1);
}

TEST(HtmlReport, PercentagesAddUpPerProcess) {
  auto tables = percentColumns(renderHtml(sampleDocument()));
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].size(), 5u);
  double sum = 0;
  for (double p : tables[0]) sum += p;
  EXPECT_NEAR(sum, 100.0, 0.05 * static_cast<double>(tables[0].size()));
}

TEST(HtmlReport, GroupsByProcessWhenThereAreSeveral) {
  json doc = sampleDocument();
  doc["operations"].push_back(operation("rollout", 5151, "training", {{{"Simulator"}, 40000}}));
  doc["operations"].push_back(operation("(unannotated)", 5151, "", {{{"Python"}, 10000}}));
  std::string html = renderHtml(doc);
  EXPECT_EQ(tagBalanceError(html), "");
  EXPECT_NE(html.find("<h3>Process 4242"), std::string::npos);
  EXPECT_NE(html.find("<h3>Process 5151"), std::string::npos);
  EXPECT_EQ(count(html, "<svg class=\"bars\""), 2u);
  EXPECT_EQ(count(html, "<g class=\"bar\""), doc["operations"].size());
  auto tables = percentColumns(html);
  ASSERT_EQ(tables.size(), 2u);
  for (const auto& t : tables) {
    double sum = 0;
    for (double p : t) sum += p;
    EXPECT_NEAR(sum, 100.0, 0.05 * static_cast<double>(t.size()));
  }
}

TEST(HtmlReport, HasEverySection) {
  std::string html = renderHtml(sampleDocument());
  for (const char* id : {"operations", "kernels", "idle", "launch", "transitions", "correction"})
    EXPECT_NE(html.find(std::string("<section id=\"") + id + "\">"), std::string::npos) << id;
  EXPECT_EQ(count(html, "not available"), 0u);
  EXPECT_NE(html.find("GPU-bound %"), std::string::npos);
  EXPECT_NE(html.find("+2.7%"), std::string::npos) << "the bias";
  EXPECT_NE(html.find("CUPTI"), std::string::npos);
  EXPECT_NE(html.find("ampere_sgemm_128x64_tn"), std::string::npos);
  EXPECT_NE(html.find("Backend+GPU kernel"), std::string::npos) << "the legend";
  EXPECT_NE(html.find("url(#rls-set-"), std::string::npos) << "striped multi-category sets";
}

TEST(HtmlReport, MissingOptionalSectionsAreNotAvailable) {
  std::string html = renderHtml(minimalDocument());
  EXPECT_EQ(tagBalanceError(html), "");
  for (const char* id : {"kernels", "idle", "launch", "transitions", "correction"}) {
    std::size_t at = html.find(std::string("<section id=\"") + id + "\">");
    ASSERT_NE(at, std::string::npos) << id;
    std::string section = html.substr(at, html.find("</section>", at) - at);
    EXPECT_NE(section.find("not available"), std::string::npos) << id;
  }
  EXPECT_NE(html.find("wall time not available"), std::string::npos);
  EXPECT_EQ(count(html, "<g class=\"bar\""), 1u);
}

TEST(HtmlReport, CpuOnlyTraceSaysSo) {
  json doc = minimalDocument();
  doc["gpu"] = {{"available", false}};
  EXPECT_NE(renderHtml(doc).find("not available: no GPU activity in this trace (a CPU-only run)"),
            std::string::npos);
}

TEST(HtmlReport, OptionalKeysOfTheWrongTypeAreIgnored) {
  json doc = minimalDocument();
  doc["total_us"] = "soon";
  doc["trace"] = 12;
  doc["gpu"] = {
      {"available", true}, {"kernels", "none"}, {"idle", 3}, {"launch", {{"count", "x"}}}};
  doc["correction"] = {{"bias_pct", "big"}};
  doc["operations"][0]["phase"] = json::array();
  EXPECT_NO_THROW(renderHtml(doc));
  EXPECT_NO_THROW(renderMarkdown(doc));
}

// The members `rlscope analyze --by rank` adds: rank 1 held rank 0 back.
json withRanks(json doc) {
  doc["ranks"] = json::parse(R"([
      {"rank": 0, "host": "node<0>", "time_us": 1000, "collectives": {"count": 4, "time_us": 400,
       "waiting_us": 300, "transferring_us": 100}},
      {"rank": 1, "host": "node1", "time_us": 1000, "collectives": {"count": 4, "time_us": 100,
       "waiting_us": 0, "transferring_us": 100}}])");
  doc["stragglers"] = json::parse(R"([
      {"rank": 0, "host": "node<0>", "collectives_last": 0, "others_waited_us": 0, "doing": []},
      {"rank": 1, "host": "node1", "collectives_last": 4, "others_waited_us": 300,
       "doing": [{"operation": "simulate", "category": "Python", "time_us": 290}]}])");
  doc["collectives"] = {{"matched", 4}, {"source", "c10d calls"}, {"notes", json::array()}};
  return doc;
}

TEST(HtmlReport, RanksSideBySideWithTheirStraggler) {
  EXPECT_EQ(renderHtml(minimalDocument()).find("<section id=\"ranks\">"), std::string::npos);
  std::string html = renderHtml(withRanks(minimalDocument()));
  EXPECT_EQ(tagBalanceError(html), "");
  std::size_t at = html.find("<section id=\"ranks\">");
  ASSERT_NE(at, std::string::npos);
  std::string section = html.substr(at, html.find("</section>", at) - at);
  EXPECT_NE(section.find("4 collectives matched across 2 ranks, from c10d calls."),
            std::string::npos);
  EXPECT_NE(section.find("rank 0 on node&lt;0&gt;"), std::string::npos) << section;
  EXPECT_NE(section.find("simulate / Python 290.0 µs"), std::string::npos) << section;
  EXPECT_EQ(count(section, "<h3>"), 2u);  // a bar per rank
  // Ranks of the wrong shape lose their values, not the report.
  json bad = withRanks(minimalDocument());
  bad["ranks"][0]["collectives"] = "many";
  bad["stragglers"][1]["doing"] = 3;
  bad["collectives"]["notes"] = json::array({1, "kept"});
  EXPECT_NO_THROW(renderHtml(bad));
  EXPECT_NE(renderMarkdown(bad).find("kept"), std::string::npos);
}

// --- Markdown -----------------------------------------------------------------------------------

TEST(MarkdownReport, OperationTableHasOneRowPerOperation) {
  json doc = sampleDocument();
  std::string markdown = renderMarkdown(doc);
  auto rows = tableAfter(markdown, "### Time per operation");
  // Header, separator, the operations, the total.
  ASSERT_EQ(rows.size(), doc["operations"].size() + 3);
  EXPECT_EQ(rows[0],
            "| Operation | Phase | Instances | Time | % | CPU | CPU+GPU | GPU | Waiting | "
            "GPU-bound % |");
  for (const auto& row : rows) EXPECT_EQ(unescapedPipes(row), unescapedPipes(rows[0])) << row;
  EXPECT_EQ(rows[2].rfind("| simulation | training | 10 | 914.00 ms | 38.1% | 912.00 ms | 0 | 0 | "
                          "0 | 0.0% |",
                          0),
            0u)
      << rows[2];
  EXPECT_EQ(rows.back().rfind("| **All operations** |", 0), 0u);
}

// The numbers of the HTML bars: each operation's time per category set, in the report's order
// of sets (CPU, CPU+GPU, GPU; single categories first).
TEST(MarkdownReport, CategoryTableHasTheBarsNumbers) {
  json doc = sampleDocument();
  std::string markdown = renderMarkdown(doc);
  auto rows = tableAfter(markdown, "| Operation | Python |");
  ASSERT_EQ(rows.size(), doc["operations"].size() + 2);
  EXPECT_EQ(
      rows[0],
      "| Operation | Python | Backend | Simulator | Native | Python+Simulator | "
      "Backend+CUDA API | Backend+GPU kernel | CUDA API+GPU kernel | GPU kernel | GPU memcpy | "
      "GPU memset |");
  EXPECT_EQ(rows[2], "| simulation | 210.00 ms |  | 690.00 ms |  | 12.00 ms |  |  |  |  |  |  |");
}

TEST(MarkdownReport, ABiasTooNoisyToTellSaysSo) {
  json doc = sampleDocument();
  doc["correction"]["bias_pct"] = 61.9;
  doc["correction"]["bias_uncertainty_pct"] = 40.0;
  doc["correction"]["bias_verdict"] = "too_noisy_to_tell";
  std::string markdown = renderMarkdown(doc);
  EXPECT_NE(markdown.find("(bias +61.9% ± 40.0% (too noisy to tell))"), std::string::npos)
      << markdown;
  EXPECT_NE(renderHtml(doc).find("too noisy to tell"), std::string::npos);
}

TEST(MarkdownReport, RanksTable) {
  std::string md = renderMarkdown(withRanks(minimalDocument()));
  EXPECT_NE(md.find("### Ranks"), std::string::npos);
  EXPECT_NE(md.find("| 1 | node1 | 1.00 ms | 4 | 100.0 µs | 0 | 100.0 µs | 4 | 300.0 µs | "
                    "simulate / Python 290.0 µs |"),
            std::string::npos)
      << md;
}

TEST(MarkdownReport, EscapesPipesAndMarkup) {
  std::string markdown = renderMarkdown(sampleDocument());
  EXPECT_NE(markdown.find("\\<script\\>alert(\"x\")\\</script\\> & 'q'\\|pipe"), std::string::npos);
  EXPECT_EQ(markdown.find("<script>"), std::string::npos);
}

TEST(MarkdownReport, HasKernelsIdleAndCorrection) {
  std::string markdown = renderMarkdown(sampleDocument());
  for (const char* heading : {"### GPU kernels", "### GPU idle time", "### Kernel launches",
                              "### Overhead correction", "### Language transitions"})
    EXPECT_NE(markdown.find(heading), std::string::npos) << heading;
  EXPECT_EQ(markdown.find("not available"), std::string::npos);
  auto kernels = tableAfter(markdown, "| Kernel |");
  EXPECT_EQ(kernels.size(), 2u + 4u);
  EXPECT_NE(markdown.find("| Bias (corrected vs uninstrumented) | +2.7% ± 1.9% |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| Run-to-run noise of the uninstrumented run | 1.4% |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| CUPTI | 300.00 ms | 8.7% |"), std::string::npos);
}

TEST(MarkdownReport, MissingOptionalSectionsAreNotAvailable) {
  std::string markdown = renderMarkdown(minimalDocument());
  for (const char* heading : {"### GPU kernels", "### GPU idle time", "### Kernel launches",
                              "### Overhead correction", "### Language transitions"}) {
    std::size_t at = markdown.find(heading);
    ASSERT_NE(at, std::string::npos) << heading;
    EXPECT_EQ(markdown.find("_not available: ", at), markdown.find('\n', at) + 2) << heading;
  }
}

// --- Schema -------------------------------------------------------------------------------------

TEST(AnalysisDocument, WrongDocumentsThrowOneLine) {
  json wrongVersion = minimalDocument();
  wrongVersion["schema"] = "rlscope.analysis/2";
  json noSchema = minimalDocument();
  noSchema.erase("schema");
  json noOperations = minimalDocument();
  noOperations.erase("operations");
  json noTime = minimalDocument();
  noTime["operations"][0].erase("time_us");
  json badSet = minimalDocument();
  badSet["operations"][0]["categories"][0]["set"] = "Python";
  for (const json& doc :
       {wrongVersion, noSchema, noOperations, noTime, badSet, json::array(), json("text")}) {
    for (auto render : {&renderHtml, &renderMarkdown}) {
      try {
        render(doc);
        ADD_FAILURE() << "accepted " << doc.dump();
      } catch (const std::runtime_error& e) {
        std::string what = e.what();
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        EXPECT_FALSE(what.empty());
      }
    }
  }
  try {
    renderHtml(wrongVersion);
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("rlscope.analysis/2"), std::string::npos) << e.what();
  }
}

// --- Regression gate ----------------------------------------------------------------------------

// A run of three operations (total 2 s), scaled per operation.
json run(std::map<std::string, double> scale = {}, std::int64_t pid = 100) {
  auto s = [&](const char* name) { return scale.count(name) ? scale[name] : 1.0; };
  json ops = json::array();
  ops.push_back(operation("inference", pid, "training",
                          {{{"Backend"}, 300000 * s("inference")},
                           {{"Backend", "GPU kernel"}, 200000 * s("inference")}}));
  ops.push_back(
      operation("simulation", pid, "training", {{{"Simulator"}, 900000 * s("simulation")}}));
  ops.push_back(operation("backpropagation", pid, "training",
                          {{{"GPU kernel"}, 600000 * s("backpropagation")}}));
  return {{"schema", "rlscope.analysis/1"}, {"trace", "run.sqlite"}, {"operations", ops}};
}

const ComparisonRow& row(const std::vector<ComparisonRow>& rows, const std::string& name) {
  for (const auto& r : rows)
    if (r.name == name) return r;
  throw std::runtime_error("no row " + name);
}

TEST(Comparison, TwentyPercentSlowerOperationRegresses) {
  Comparison c = compare(run(), run({{"inference", 1.2}}), 10);
  EXPECT_TRUE(c.regressed());
  const auto& inference = row(c.operations, "inference");
  EXPECT_TRUE(inference.regression);
  EXPECT_NEAR(*inference.changePct(), 20.0, 1e-9);
  EXPECT_DOUBLE_EQ(inference.changeUs(), 100000);
  EXPECT_FALSE(row(c.operations, "simulation").regression);
  EXPECT_EQ(c.operations.front().name, "inference") << "largest change first";
  EXPECT_TRUE(row(c.categorySets, "Backend+GPU kernel").regression) << "sets keyed by '+'";
  EXPECT_FALSE(c.total.regression) << "the total grew 5%";
}

TEST(Comparison, ThreePercentNoisePasses) {
  Comparison c = compare(
      run(), run({{"inference", 1.03}, {"simulation", 0.98}, {"backpropagation", 1.03}}), 10);
  EXPECT_FALSE(c.regressed());
}

TEST(Comparison, NewOperationIsAddedNotARegression) {
  json current = run();
  current["operations"].push_back(operation("evaluation", 100, "eval", {{{"Python"}, 80000}}));
  Comparison c = compare(run(), current, 10);
  EXPECT_FALSE(c.regressed());
  const auto& added = row(c.operations, "evaluation");
  EXPECT_EQ(added.presence, Presence::Added);
  EXPECT_FALSE(added.regression);
  EXPECT_FALSE(added.changePct().has_value());
  EXPECT_EQ(row(c.categorySets, "Python").presence, Presence::Added);

  Comparison reverse = compare(current, run(), 10);
  EXPECT_EQ(row(reverse.operations, "evaluation").presence, Presence::Removed);
  EXPECT_FALSE(reverse.regressed());
}

TEST(Comparison, FasterRunPasses) {
  Comparison c = compare(run(), run({{"inference", 0.5}, {"simulation", 0.7}}), 10);
  EXPECT_FALSE(c.regressed());
  EXPECT_LT(c.total.changeUs(), 0);
}

TEST(Comparison, ChangeBelowTheNoiseFloorDoesNotRegress) {
  json baseline = run(), current = run();
  baseline["operations"].push_back(operation("log", 100, "training", {{{"Python"}, 5000}}));
  current["operations"].push_back(operation("log", 100, "training", {{{"Python"}, 15000}}));
  // +10 ms is +200% of "log" but under the default floor, 1% of the 2.005 s baseline total.
  Comparison c = compare(baseline, current, 10);
  EXPECT_DOUBLE_EQ(c.noiseFloorUs, 20050);
  EXPECT_FALSE(row(c.operations, "log").regression);
  EXPECT_FALSE(c.regressed());
  // An explicit floor below the change makes the same change a regression.
  Comparison strict = compare(baseline, current, 10, 1000);
  EXPECT_TRUE(row(strict.operations, "log").regression);
  EXPECT_TRUE(strict.regressed());
}

TEST(Comparison, DefaultFloorIsAtLeastOneHundredMicroseconds) {
  json tiny = {{"schema", "rlscope.analysis/1"},
               {"operations", json::array({operation("op", 1, "", {{{"Python"}, 1000}})})}};
  json slower = {{"schema", "rlscope.analysis/1"},
                 {"operations", json::array({operation("op", 1, "", {{{"Python"}, 1090}})})}};
  Comparison c = compare(tiny, slower, 5);
  EXPECT_DOUBLE_EQ(c.noiseFloorUs, 100);
  EXPECT_FALSE(c.regressed()) << "+90 µs is under 100 µs";
}

TEST(Comparison, OperationsAreSummedOverProcesses) {
  json baseline = run({}, 100);
  json current = run({}, 200);
  json secondCurrent = run({}, 201), secondBaseline = run({}, 101);
  for (const auto& op : secondCurrent["operations"]) current["operations"].push_back(op);
  for (const auto& op : secondBaseline["operations"]) baseline["operations"].push_back(op);
  Comparison c = compare(baseline, current, 10);
  EXPECT_EQ(c.operations.size(), 3u) << "pids differ, (name, phase) match";
  EXPECT_DOUBLE_EQ(row(c.operations, "simulation").baselineUs, 1800000);
  EXPECT_FALSE(c.regressed());
}

// PyTorch numbers each profiled step: the steps of two runs are one row, and a slower step
// regresses like any other operation.
TEST(Comparison, NumberedStepsAreOneRow) {
  auto steps = [](int first, double us) {
    json doc = run();
    for (int i = first; i < first + 3; ++i)
      doc["operations"].push_back(
          operation("ProfilerStep#" + std::to_string(i), 100, "", {{{"Python"}, us}}));
    return doc;
  };
  Comparison same = compare(steps(1010, 100000), steps(20, 100000), 10);
  const auto& stepRow = row(same.operations, "ProfilerStep#*");
  EXPECT_EQ(stepRow.presence, Presence::Both);
  EXPECT_DOUBLE_EQ(stepRow.baselineUs, 300000);
  EXPECT_FALSE(same.regressed());
  Comparison slower = compare(steps(1010, 100000), steps(20, 150000), 10);
  EXPECT_TRUE(row(slower.operations, "ProfilerStep#*").regression);

  EXPECT_EQ(comparisonName("ProfilerStep#7"), "ProfilerStep#*");
  EXPECT_EQ(comparisonName("step#"), "step#");
  EXPECT_EQ(comparisonName("#12"), "#*");
  EXPECT_EQ(comparisonName("layer#3a"), "layer#3a");
  EXPECT_EQ(comparisonName("inference"), "inference");
}

TEST(Comparison, PhaseIsPartOfTheKey) {
  json current = run();
  current["operations"][1]["phase"] = "evaluation";
  Comparison c = compare(run(), current, 10);
  std::size_t simulations = 0;
  for (const auto& r : c.operations) simulations += r.name == "simulation";
  EXPECT_EQ(simulations, 2u);
  EXPECT_FALSE(c.regressed());
}

TEST(Comparison, TotalUsesWallTimeWhenBothHaveIt) {
  json baseline = run(), current = run();
  baseline["total_us"] = 2100000.0;
  current["total_us"] = 2600000.0;
  Comparison c = compare(baseline, current, 10);
  EXPECT_TRUE(c.totalIsWallTime);
  EXPECT_TRUE(c.total.regression);
  EXPECT_TRUE(c.regressed());
}

TEST(Comparison, RejectsBadThresholdAndWrongSchema) {
  EXPECT_THROW(compare(run(), run(), -1), std::invalid_argument);
  json wrong = run();
  wrong["schema"] = "something/1";
  EXPECT_THROW(compare(run(), wrong, 10), std::runtime_error);
  EXPECT_THROW(compare(wrong, run(), 10), std::runtime_error);
}

TEST(Comparison, WarnsWhenCorrectionDiffers) {
  json corrected = run();
  corrected["corrected"] = true;
  EXPECT_EQ(compare(run(), corrected, 10).warnings.size(), 1u);
  EXPECT_TRUE(compare(run(), run(), 10).warnings.empty());
}

TEST(ComparisonOutput, MarkdownMarksRegressionsAndSortsByChange) {
  json current = run({{"inference", 1.2}, {"simulation", 0.9}});
  current["operations"].push_back(operation("evaluation", 100, "eval", {{{"Python"}, 5000}}));
  std::string markdown = renderComparisonMarkdown(compare(run(), current, 10));
  EXPECT_NE(markdown.find("## rlscope regression check: ❌ regression"), std::string::npos);
  auto rows = tableAfter(markdown, "### Operations");
  ASSERT_EQ(rows.size(), 2u + 4u);
  EXPECT_EQ(
      rows[2].rfind("| inference \\[training\\] | 500.00 ms | 600.00 ms | +100.00 ms | +20.0% | "
                    "❌ **regression** |",
                    0),
      0u)
      << rows[2];
  EXPECT_EQ(rows[3].rfind("| simulation \\[training\\] |", 0), 0u) << rows[3];  // -90 ms
  EXPECT_NE(rows[4].find("| n/a | added |"), std::string::npos) << rows[4];
  EXPECT_NE(markdown.find("### Category sets"), std::string::npos);

  std::string ok = renderComparisonMarkdown(compare(run(), run(), 10));
  EXPECT_NE(ok.find("✅ no regression"), std::string::npos);
}

TEST(ComparisonOutput, TerminalTableIsAligned) {
  std::ostringstream out;
  writeComparisonTable(compare(run(), run({{"inference", 1.2}}), 10), out);
  std::string text = out.str();
  EXPECT_EQ(text.rfind("rlscope regression check: REGRESSION\n", 0), 0u);
  std::istringstream lines(text.substr(text.find("\noperations\n") + 12));
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(first.rfind("!  inference [training]", 0), 0u) << first;
  EXPECT_NE(first.find("REGRESSION"), std::string::npos);
  // Right-aligned numbers: the "change %" column ends at the same place on every line.
  auto column = [](const std::string& line, const std::string& cell) {
    return displayWidth(line.substr(0, line.find(cell) + cell.size()));
  };
  EXPECT_EQ(column(header, "change %"), column(first, "+20.0%")) << header << "\n" << first;
  EXPECT_EQ(column(header, "change %"), column(second, "0.0%")) << header << "\n" << second;
}

TEST(ComparisonOutput, JsonHasRowsAndVerdict) {
  json current = run({{"inference", 1.2}});
  current["operations"].push_back(operation("evaluation", 100, "eval", {{{"Python"}, 5000}}));
  json j = comparisonToJson(compare(run(), current, 10));
  EXPECT_EQ(j["schema"], "rlscope.comparison/1");
  EXPECT_EQ(j["regressed"], true);
  EXPECT_EQ(j["fail_above_pct"], 10.0);
  EXPECT_EQ(j["operations"][0]["name"], "inference");
  EXPECT_EQ(j["operations"][0]["regression"], true);
  EXPECT_EQ(j["operations"][0]["status"], "changed");
  bool sawAdded = false;
  for (const auto& r : j["operations"])
    if (r["name"] == "evaluation") {
      sawAdded = true;
      EXPECT_EQ(r["status"], "added");
      EXPECT_TRUE(r["change_pct"].is_null());
    }
  EXPECT_TRUE(sawAdded);
  EXPECT_EQ(j["total"]["kind"], "total");
  EXPECT_FALSE(j["category_sets"].empty());
}

}  // namespace
}  // namespace rlscope::report
