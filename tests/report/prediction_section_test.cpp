// The "Prediction on <target>" section of the HTML and Markdown reports: rendered from a
// document's "prediction" object (rlscope.prediction/1, what `--target` adds), and absent
// without one. The prediction here is made by hand, so no trace or GPU database is needed.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "rlscope/report/analysis_document.h"
#include "rlscope/report/html_report.h"
#include "rlscope/report/markdown_report.h"

namespace rlscope::report {
namespace {

using nlohmann::json;

const char* kVerdict =
    "On T4 the run is predicted 2.50x slower (60.0 % of it waits on the GPU; an infinitely fast "
    "GPU would make it 2.50x faster).";

json predictedOperation(const std::string& name, const std::string& phase, double originUs,
                        double predictedUs, double gpuScale) {
  return {{"process", 4242},
          {"name", name},
          {"phase", phase},
          {"origin_us", originUs},
          {"predicted_us", predictedUs},
          {"cpu_us", 1000},
          {"gpu_us", 0},
          {"cpu_gpu_us", 0},
          {"gpu_wait_us", 0},
          {"idle_us", 0},
          {"gpu_scale", gpuScale}};
}

json predictedKernel(const std::string& name, const std::string& method, double launches,
                     double originUs, double predictedUs, double gamma) {
  return {{"name", name},          {"kind", "gemm"},
          {"precision", "fp32"},   {"method", method},
          {"launches", launches},  {"cannot_predict", 0},
          {"origin_us", originUs}, {"predicted_us", predictedUs},
          {"gamma", gamma},        {"occupancy_origin", 2},
          {"occupancy_target", 1}};
}

// A 10 ms run on an A100, 6 ms of it waiting on the GPU, predicted 25 ms on a T4: the GPU work
// takes 3.5 times as long there.
json prediction() {
  json operations = json::array({predictedOperation("forward", "train", 8000, 20000, 3.14),
                                 predictedOperation("(unannotated)", "", 2000, 5000, 3.0)});
  json kernels = json::array(
      {predictedKernel("void gemm<float>(float*, int)", "wave-scaled (roofline)", 600, 4000, 15000,
                       0.35),
       predictedKernel("ncclKernel_AllReduce_RING_LL_Sum_float", "kept", 40, 2000, 2000, 0)});
  return {{"schema", "rlscope.prediction/1"},
          {"origin", "A100-SXM4-40GB"},
          {"origin_from", "trace"},
          {"target", "T4"},
          {"verdict", kVerdict},
          {"run",
           {{"origin_us", 10000},
            {"predicted_us", 25000},
            {"speedup", 0.4},
            {"gpu_bound_us", 6000},
            {"max_speedup", 2.5},
            {"cpu_bound", false}}},
          {"gpu",
           {{"origin_us", 7000},
            {"predicted_us", 22000},
            {"kernel_launches", 1200},
            {"cannot_predict", 3}}},
          {"operations", operations},
          {"kernels", kernels},
          {"notes", json::array({"3 kernel launches cannot be predicted and keep their origin "
                                 "time"})}};
}

// The keys docs/analysis.md requires, and nothing else.
json document(const json& withPrediction = nullptr) {
  json op = {{"name", "forward"},
             {"process", 4242},
             {"time_us", 8000},
             {"resources", {{"CPU", 2000}, {"GPU", 6000}}},
             {"categories", json::array({{{"set", {"Python"}}, {"time_us", 2000}},
                                         {{"set", {"GPU kernel"}}, {"time_us", 6000}}})}};
  json doc = {{"schema", "rlscope.analysis/1"}, {"operations", json::array({op})}};
  if (!withPrediction.is_null()) doc["prediction"] = withPrediction;
  return doc;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}

// Opening tags "<g>" and "<g ...>" of one element name.
std::size_t opened(const std::string& html, const std::string& tag) {
  return count(html, "<" + tag + ">") + count(html, "<" + tag + " ");
}

// The HTML of the section, from its opening tag to its end.
std::string predictionHtml(const std::string& html) {
  std::size_t at = html.find("<section id=\"prediction\">");
  if (at == std::string::npos) return {};
  return html.substr(at, html.find("</section>", at) + 10 - at);
}

// Lines of the Markdown table whose header starts with `header`.
std::vector<std::string> tableAt(const std::string& markdown, const std::string& header) {
  std::size_t at = markdown.find(header);
  if (at == std::string::npos) return {};
  std::istringstream in(markdown.substr(at));
  std::vector<std::string> rows;
  for (std::string line; std::getline(in, line) && line.rfind("|", 0) == 0;) rows.push_back(line);
  return rows;
}

// --- HTML ---------------------------------------------------------------------------------------

TEST(PredictionHtml, ShowsVerdictTargetAndRun) {
  std::string section = predictionHtml(renderHtml(document(prediction())));
  ASSERT_FALSE(section.empty());
  EXPECT_NE(section.find("<h2>Prediction on T4</h2>"), std::string::npos);
  EXPECT_NE(section.find("<p class=\"verdict slower\">On T4 the run is predicted 2.50x slower"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("A100-SXM4-40GB (from the trace) → T4"), std::string::npos);
  EXPECT_NE(section.find("10.00 ms → 25.00 ms (2.50x slower)"), std::string::npos);
  EXPECT_NE(section.find("7.00 ms → 22.00 ms over 1200 kernel launches"), std::string::npos);
  EXPECT_NE(section.find("6.00 ms (60.0%)"), std::string::npos) << "the GPU-bound share";
  EXPECT_NE(section.find("at most 2.50x faster"), std::string::npos) << "the upper bound";
  EXPECT_NE(section.find("Note: 3 kernel launches cannot be predicted"), std::string::npos);
  EXPECT_NE(section.find("docs/predictor.md"), std::string::npos);
}

TEST(PredictionHtml, ComesFirstAndIsBalanced) {
  std::string html = renderHtml(document(prediction()));
  EXPECT_LT(html.find("<section id=\"prediction\">"), html.find("<section id=\"operations\">"));
  for (const char* tag : {"section", "svg", "g", "table", "tr", "dl", "p", "text", "rect"})
    EXPECT_EQ(opened(html, tag), count(html, std::string("</") + tag + ">")) << tag;
}

TEST(PredictionHtml, KernelRowsAreEscaped) {
  std::string section = predictionHtml(renderHtml(document(prediction())));
  EXPECT_NE(section.find("<td class=\"kernel\">void gemm&lt;float&gt;(float*, int)</td>"),
            std::string::npos)
      << section;
  EXPECT_EQ(section.find("gemm<float>"), std::string::npos);
  EXPECT_NE(section.find("<td class=\"num\">600</td><td class=\"num\">4.00 ms</td><td "
                         "class=\"num\">15.00 ms</td><td class=\"num\">+275.0%</td><td>wave-scaled "
                         "(roofline)</td><td class=\"num\">0.35</td>"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("ncclKernel_AllReduce_RING_LL_Sum_float"), std::string::npos);
  EXPECT_NE(section.find("<td>kept</td>"), std::string::npos);
}

TEST(PredictionHtml, OneBarPairPerTopOperation) {
  std::string section = predictionHtml(renderHtml(document(prediction())));
  EXPECT_EQ(count(section, "<g class=\"pair\">"), 2u);
  EXPECT_NE(section.find("origin (A100-SXM4-40GB)"), std::string::npos) << "the legend";
  EXPECT_NE(section.find("predicted (T4)"), std::string::npos);
  EXPECT_NE(section.find(">20.00 ms (+150.0%)</text>"), std::string::npos);
  EXPECT_NE(section.find("<td class=\"num\">3.14x</td>"), std::string::npos) << "GPU x";

  json many = prediction();
  for (int i = 0; i < 10; ++i)
    many["operations"].push_back(
        predictedOperation("op" + std::to_string(i), "", 100 + i, 200 + i, 2.0));
  section = predictionHtml(renderHtml(document(many)));
  EXPECT_EQ(count(section, "<g class=\"pair\">"), 10u);
  EXPECT_NE(section.find("The 10 longest of 12 operations."), std::string::npos);
  EXPECT_NE(section.find(">forward [train]<"), std::string::npos) << "the longest is kept";
  EXPECT_EQ(section.find(">op0<"), std::string::npos) << "the shortest is not";
}

TEST(PredictionHtml, VerdictToneFollowsTheOutcome) {
  json p = prediction();
  p["run"]["speedup"] = 1.01;
  p["run"]["cpu_bound"] = true;
  EXPECT_NE(renderHtml(document(p)).find("<p class=\"verdict cpu-bound\">"), std::string::npos);
  p["run"]["speedup"] = 0.7;
  EXPECT_NE(renderHtml(document(p)).find("<p class=\"verdict slower\">"), std::string::npos)
      << "a slower target is red even when the run is CPU-bound";
  p["run"]["cpu_bound"] = false;
  p["run"]["speedup"] = 1.8;
  EXPECT_NE(renderHtml(document(p)).find("<p class=\"verdict faster\">"), std::string::npos);
}

TEST(PredictionHtml, WholeRunOnTheGpuHasNoBound) {
  json p = prediction();
  p["run"]["gpu_bound_us"] = 10000;
  p["run"]["max_speedup"] = 0;
  EXPECT_NE(renderHtml(document(p)).find("no bound: the whole run waits on the GPU"),
            std::string::npos);
}

TEST(PredictionHtml, AbsentWithoutPrediction) {
  std::string html = renderHtml(document());
  EXPECT_EQ(html.find("id=\"prediction\""), std::string::npos);
  EXPECT_EQ(html.find("Prediction"), std::string::npos);
  EXPECT_EQ(html.find("class=\"verdict"), std::string::npos);
}

TEST(PredictionHtml, OtherSchemaIsNotAvailable) {
  json p = prediction();
  p["schema"] = "rlscope.prediction/2";
  std::string section = predictionHtml(renderHtml(document(p)));
  EXPECT_NE(section.find("not available: the prediction&#39;s schema &quot;rlscope.prediction/"
                         "2&quot; is not rlscope.prediction/1"),
            std::string::npos)
      << section;
  EXPECT_EQ(section.find("verdict"), std::string::npos);
}

// --- Markdown -----------------------------------------------------------------------------------

TEST(PredictionMarkdown, HasVerdictAndTables) {
  std::string markdown = renderMarkdown(document(prediction()));
  std::size_t heading = markdown.find("### Prediction on T4\n\n");
  ASSERT_NE(heading, std::string::npos) << markdown;
  EXPECT_LT(heading, markdown.find("### Time per operation"));
  EXPECT_NE(markdown.find(std::string("> **") + kVerdict + "**\n"), std::string::npos);
  EXPECT_NE(markdown.find("| Run (origin → predicted) | 10.00 ms → 25.00 ms (2.50x slower) |"),
            std::string::npos);

  auto operations = tableAt(markdown, "| Operation | Origin |");
  ASSERT_EQ(operations.size(), 2u + 2u);
  EXPECT_EQ(operations[0], "| Operation | Origin | Predicted | Change | GPU x |");
  EXPECT_EQ(operations[2], "| forward \\[train\\] | 8.00 ms | 20.00 ms | +150.0% | 3.14x |");
  EXPECT_EQ(operations[3], "| (unannotated) | 2.00 ms | 5.00 ms | +150.0% | 3.00x |");

  auto kernels = tableAt(markdown, "| Kernel | Launches |");
  ASSERT_EQ(kernels.size(), 2u + 2u);
  EXPECT_EQ(kernels[2],
            "| void gemm\\<float\\>(float\\*, int) | 600 | 4.00 ms | 15.00 ms | +275.0% | "
            "wave-scaled (roofline) | 0.35 |");
  EXPECT_EQ(kernels[3],
            "| ncclKernel\\_AllReduce\\_RING\\_LL\\_Sum\\_float | 40 | 2.00 ms | 2.00 ms | 0.0% | "
            "kept | 0.00 |");
  EXPECT_NE(markdown.find("docs/predictor.md"), std::string::npos);
}

// `--target` documents carry each figure's expected error (docs/predictor.md, "Expected
// error"): the run's range, the GPU work's and each kernel's error in percent, each operation's
// in time. Both reports show them beside the figure; a kernel kept as recorded shows none.
TEST(PredictionReports, ShowTheExpectedErrorBesideEachFigure) {
  json p = prediction();
  p["run"]["predicted_low_us"] = 21000;
  p["run"]["predicted_high_us"] = 29000;
  p["gpu"]["expected_error"] = 0.27;
  p["operations"][0]["expected_error_us"] = 4000;
  p["kernels"][0]["expected_error"] = 0.077;
  p["kernels"][1]["expected_error"] = 0;
  std::string markdown = renderMarkdown(document(p));
  EXPECT_NE(markdown.find("| Run (origin → predicted) | 10.00 ms → 25.00 ms (2.50x slower), "
                          "expected 21.00 ms to 29.00 ms |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("7.00 ms → 22.00 ms (± 27.0%) over 1200 kernel launches"),
            std::string::npos);
  auto operations = tableAt(markdown, "| Operation | Origin |");
  ASSERT_EQ(operations.size(), 4u);
  EXPECT_EQ(operations[2],
            "| forward \\[train\\] | 8.00 ms | 20.00 ms ± 4.00 ms | +150.0% | 3.14x |");
  auto kernels = tableAt(markdown, "| Kernel | Launches |");
  ASSERT_EQ(kernels.size(), 4u);
  EXPECT_NE(kernels[2].find("| 15.00 ms ± 7.7% |"), std::string::npos) << kernels[2];
  EXPECT_NE(kernels[3].find("| 2.00 ms | 0.0% |"), std::string::npos) << kernels[3];

  std::string html = predictionHtml(renderHtml(document(p)));
  EXPECT_NE(html.find("expected 21.00 ms to 29.00 ms"), std::string::npos);
  EXPECT_NE(html.find("20.00 ms ± 4.00 ms"), std::string::npos);
  EXPECT_NE(html.find("15.00 ms ± 7.7%"), std::string::npos);
}

TEST(PredictionMarkdown, AbsentWithoutPrediction) {
  std::string markdown = renderMarkdown(document());
  EXPECT_EQ(markdown.find("Prediction"), std::string::npos);
  EXPECT_EQ(markdown.find("| Kernel | Launches |"), std::string::npos);
}

// --- Document -----------------------------------------------------------------------------------

TEST(PredictionDocument, ReadsTypedValues) {
  Analysis a = parseAnalysis(document(prediction()));
  ASSERT_TRUE(a.prediction.has_value());
  const PredictionSection& p = *a.prediction;
  EXPECT_EQ(p.target, "T4");
  EXPECT_EQ(p.originFrom, "trace");
  EXPECT_EQ(p.verdict, kVerdict);
  EXPECT_DOUBLE_EQ(p.maxSpeedup.value_or(0), 2.5);
  EXPECT_DOUBLE_EQ(p.cannotPredict.value_or(0), 3);
  ASSERT_EQ(p.operations.size(), 2u);
  EXPECT_EQ(p.operations[0].phase, "train");
  EXPECT_EQ(p.operations[0].process, 4242);
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[1].method, "kept");
  EXPECT_DOUBLE_EQ(p.kernels[0].gamma.value_or(0), 0.35);
  EXPECT_EQ(p.notes.size(), 1u);
  EXPECT_FALSE(parseAnalysis(document()).prediction.has_value());
}

TEST(PredictionDocument, KeysOfTheWrongTypeAreIgnored) {
  json p = {{"schema", "rlscope.prediction/1"},
            {"target", 4},
            {"run", 3},
            {"gpu", {{"origin_us", "many"}}},
            {"operations", json::array({1, {{"name", 2}, {"origin_us", "x"}}})},
            {"kernels", "none"},
            {"notes", json::array({7})}};
  EXPECT_NO_THROW(renderHtml(document(p)));
  EXPECT_NO_THROW(renderMarkdown(document(p)));
  json notAnObject = document();
  notAnObject["prediction"] = "T4";
  EXPECT_EQ(renderHtml(notAnObject).find("id=\"prediction\""), std::string::npos);
}

}  // namespace
}  // namespace rlscope::report
