// The learned kernel models (rlscope/predictor/kernel_model.h): the C++ features and MLP reproduce
// the training script's predictions, the combination with the origin's measurement, and malformed
// model files.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "rlscope/predictor/gpu_database.h"
#include "rlscope/predictor/kernel_model.h"
#include "rlscope/predictor/kernel_table.h"
#include "rlscope/predictor/wave_scaling.h"

namespace rlscope::predictor {

extern const std::string_view kBuiltInKernelModelsJson;

namespace {

ModelledKernel modelled(KernelFamily family, double flops, double bytes,
                        const std::vector<std::int64_t>& dims) {
  ModelledKernel k{.family = family, .work = {flops, bytes}};
  if (family == KernelFamily::kGemm) k.gemm = GemmShape{dims[0], dims[1], dims[2], dims[3]};
  if (family == KernelFamily::kConv)
    k.conv =
        ConvShape{dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], dims[6], dims[7], dims[8]};
  return k;
}

TEST(KernelModel, BuiltInModelsReproduceTheTrainingScriptsPredictions) {
  const KernelModels& models = KernelModels::builtIn();
  auto doc = nlohmann::json::parse(kBuiltInKernelModelsJson);
  int checked = 0;
  for (KernelFamily f : {KernelFamily::kGemm, KernelFamily::kConv, KernelFamily::kElementwise,
                         KernelFamily::kNormalisation}) {
    ASSERT_TRUE(models.covers(f)) << kernelFamilyName(f);
    for (const auto& c : doc["families"][kernelFamilyName(f)]["checks"]) {
      const GpuSpec& gpu = GpuDatabase::builtIn().get(c["gpu"].get<std::string>());
      ModelledKernel k = modelled(f, c["flops"], c["dram_bytes"], c["dims"]);
      double expected = c["kernel_us"];
      EXPECT_NEAR(models.kernelUs(k, gpu), expected, 1e-9 * expected)
          << kernelFamilyName(f) << " on " << gpu.name;
      ++checked;
    }
  }
  EXPECT_GE(checked, 16);
  EXPECT_EQ(models.trainedOn().size(), 5u);
  EXPECT_TRUE(models.heldOut().empty());
}

TEST(KernelModel, BuiltInPairModelsReproduceTheTrainingScriptsPredictions) {
  const KernelModels& models = KernelModels::builtIn();
  const GpuDatabase& db = GpuDatabase::builtIn();
  auto doc = nlohmann::json::parse(kBuiltInKernelModelsJson);
  int checked = 0;
  for (KernelFamily f : {KernelFamily::kGemm, KernelFamily::kConv, KernelFamily::kNormalisation}) {
    ASSERT_TRUE(models.coversPairs(f)) << kernelFamilyName(f);
    for (const auto& c : doc["families"][kernelFamilyName(f)]["pair"]["checks"]) {
      ModelledKernel k = modelled(f, c["flops"], c["dram_bytes"], c["dims"]);
      double originUs = c["origin_us"], expected = c["target_us"];
      double got =
          originUs * std::exp(models.pairLogRatio(k, db.get(c["origin"].get<std::string>()),
                                                  db.get(c["target"].get<std::string>()), originUs,
                                                  c["blocks"].get<std::int64_t>()));
      EXPECT_NEAR(got, expected, 1e-9 * expected) << kernelFamilyName(f);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 12);
  EXPECT_FALSE(models.coversPairs(KernelFamily::kElementwise));
}

// What a model learned must keep the physics: more work takes longer, and a GPU with more of
// everything is faster on a large GEMM, also one no training row came from (H100).
TEST(KernelModel, LargerWorkIsSlowerAndBiggerGpusAreFaster) {
  const KernelModels& models = KernelModels::builtIn();
  const GpuDatabase& db = GpuDatabase::builtIn();
  auto gemm = [&](std::int64_t n, const char* gpu) {
    Work w = gemmWork({1, n, n, n}, Precision::kFp32);
    return models.kernelUs(modelled(KernelFamily::kGemm, w.flops, w.dramBytes, {1, n, n, n}),
                           db.get(gpu));
  };
  for (const char* gpu : {"T4", "A100 SXM4 40GB", "H100 SXM"})
    EXPECT_LT(gemm(1024, gpu), gemm(4096, gpu)) << gpu;
  EXPECT_LT(gemm(4096, "A100 SXM4 40GB"), gemm(4096, "T4"));
  EXPECT_LT(gemm(4096, "H100 SXM"), gemm(4096, "A100 SXM4 40GB"));
  auto add = [&](double elements, const char* gpu) {
    return models.kernelUs(modelled(KernelFamily::kElementwise, elements, 12 * elements, {}),
                           db.get(gpu));
  };
  EXPECT_LT(add(1e6, "T4"), add(1e8, "T4"));
  EXPECT_LT(add(1e8, "A100 SXM4 40GB"), add(1e8, "T4"));
}

// A one-layer model with zero weights makes every kernel exp(bias) times its roofline, so the
// combination with the origin's measurement can be checked by hand.
std::string constantModel(double bias) {
  nlohmann::json family = {
      {"mean", std::vector<double>(4, 0.0)},
      {"scale", std::vector<double>(4, 1.0)},
      {"layers", {{{"weights", {std::vector<double>(4, 0.0)}}, {"bias", {bias}}}}}};
  nlohmann::json doc = {{"format", "rlscope-kernel-models/1"},
                        {"trained_on", {"T4"}},
                        {"held_out", "A100"},
                        {"families", {{"elementwise", family}}}};
  return doc.dump();
}

TEST(KernelModel, OriginsTimeOutsideTheModelledKernelIsCarriedOver) {
  KernelModels models = KernelModels::parse(constantModel(std::log(2.0)), "test");
  EXPECT_EQ(models.heldOut(), "A100");
  EXPECT_FALSE(models.covers(KernelFamily::kGemm));
  const GpuDatabase& db = GpuDatabase::builtIn();
  const GpuSpec& t4 = db.get("T4");
  const GpuSpec& a100 = db.get("A100 SXM4 40GB");
  double bytes = 1.2e9, flops = 1e8;  // memory-bound on both
  double t4Us = 2 * bytes / (t4.achievableBandwidthGBs * 1e3);
  double a100Us = 2 * bytes / (a100.achievableBandwidthGBs * 1e3);
  KernelPredictor predictor(t4, a100, &models);
  KernelTraits traits = classifyKernel("void at::native::vectorized_elementwise_kernel<4>");
  ASSERT_EQ(traits.family, KernelFamily::kElementwise);
  KernelLaunch k{
      .blocks = 4096, .resources = {.blockSize = 128}, .dramBytes = bytes, .flops = flops};
  // 30 µs more than the model's kernel on the origin: kept on top of the target's kernel.
  k.timeNs = (t4Us + 30) * 1e3;
  KernelPrediction p = predictor.predict(k, traits);
  EXPECT_EQ(p.method, Method::kLearned);
  EXPECT_EQ(p.family, KernelFamily::kElementwise);
  EXPECT_NEAR(p.timeNs, (a100Us + 30) * 1e3, 1e-6 * p.timeNs);
  // Half the model's time on the origin: half on the target too.
  k.timeNs = t4Us / 2 * 1e3;
  EXPECT_NEAR(predictor.predict(k, traits).timeNs, a100Us / 2 * 1e3, 1e-6 * a100Us * 1e3);
  // Where the models do not apply, the analytic rules do: no FLOPs, another precision, no
  // model for the family.
  k.flops = 0;
  EXPECT_EQ(predictor.predict(k, traits).method, Method::kWaveScaledMemoryBound);
  k.flops = flops;
  KernelTraits half = classifyKernel("vectorized_elementwise_kernel<4, __half>");
  EXPECT_NE(predictor.predict(k, half).method, Method::kLearned);
  KernelLaunch g = describe({.grid = "8,4",
                             .name = "volta_sgemm_128x64_nn",
                             .gemm = "1,1024,1024,1024",
                             .resources = {.blockSize = 256},
                             .timeUs = 400})
                       .launch;
  EXPECT_EQ(predictor.predict(g, classifyKernel("volta_sgemm_128x64_nn")).method,
            Method::kPeakThroughput);
  // With the built-in models a GEMM of known shape takes the pair model: its time ratio.
  KernelPrediction pair =
      KernelPredictor(t4, a100).predict(g, classifyKernel("volta_sgemm_128x64_nn"));
  EXPECT_EQ(pair.method, Method::kLearned);
  EXPECT_EQ(pair.family, KernelFamily::kGemm);
  ModelledKernel mk = modelled(KernelFamily::kGemm, g.flops, g.dramBytes, {1, 1024, 1024, 1024});
  EXPECT_NEAR(pair.timeNs,
              400e3 * std::exp(KernelModels::builtIn().pairLogRatio(mk, t4, a100, 400, 32)),
              1e-6 * pair.timeNs);
  EXPECT_EQ(KernelPredictor(t4, a100, nullptr).predict(k, traits).method, Method::kWaveScaled);
}

TEST(KernelModel, MalformedFilesAreOneClearError) {
  auto errorOf = [](const std::string& text) {
    try {
      KernelModels::parse(text, "m.json");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(errorOf("{}"),
            "m.json: not a kernel models file (format must be \"rlscope-kernel-models/1\")");
  EXPECT_NE(errorOf("{").find("m.json: "), std::string::npos);
  auto doc = nlohmann::json::parse(constantModel(0));
  auto withFamily = [&](const nlohmann::json& f) {
    auto d = doc;
    d["families"]["elementwise"] = f;
    return d.dump();
  };
  auto family = doc["families"]["elementwise"];
  auto wide = family;
  wide["mean"].push_back(0.0);
  EXPECT_EQ(errorOf(withFamily(wide)),
            "m.json: family 'elementwise': expected 4 features (this rlscope computes that many)");
  auto zeroScale = family;
  zeroScale["scale"][1] = 0.0;
  EXPECT_EQ(errorOf(withFamily(zeroScale)),
            "m.json: family 'elementwise': a feature scale is not positive");
  auto badChain = family;
  badChain["layers"][0]["weights"][0].push_back(1.0);
  EXPECT_EQ(errorOf(withFamily(badChain)),
            "m.json: family 'elementwise': a layer's weights do not chain");
  auto twoOutputs = family;
  twoOutputs["layers"][0]["weights"].push_back(std::vector<double>(4, 0.0));
  twoOutputs["layers"][0]["bias"].push_back(0.0);
  EXPECT_EQ(errorOf(withFamily(twoOutputs)),
            "m.json: family 'elementwise': the last layer must have one output");
  auto text = family;
  text["bias"] = "x";
  text["layers"][0]["bias"] = {"x"};
  EXPECT_EQ(errorOf(withFamily(text)), "m.json: bias holds a non-number");

  // Pair models: every node index checked, children after their parent.
  auto tree = [](std::vector<int> feature, std::vector<int> left, std::vector<int> right) {
    std::size_t n = feature.size();
    return nlohmann::json{{"feature", feature},
                          {"left", left},
                          {"right", right},
                          {"threshold", std::vector<double>(n, 0.5)},
                          {"value", std::vector<double>(n, 0.1)}};
  };
  auto withPair = [&](const nlohmann::json& t, std::size_t features = 15) {
    auto f = family;
    f["pair"] = {
        {"baseline", 0.0}, {"features", std::vector<std::string>(features, "x")}, {"trees", {t}}};
    return withFamily(f);
  };
  EXPECT_EQ(errorOf(withPair(tree({0, -1, -1}, {1, 0, 0}, {2, 0, 0}))), "accepted");
  EXPECT_EQ(errorOf(withPair(tree({0, -1, -1}, {1, 0, 0}, {2, 0, 0}), 19)),
            "m.json: family 'elementwise' pairs: expected 15 features (this rlscope computes "
            "that many)");
  EXPECT_EQ(errorOf(withPair(tree({0, -1}, {1, 0}, {5, 0}))),
            "m.json: family 'elementwise' pairs: a tree's node 0 points outside the tree");
  EXPECT_EQ(errorOf(withPair(tree({0, -1, -1}, {0, 0, 0}, {2, 0, 0}))),
            "m.json: family 'elementwise' pairs: a tree's node 0 points outside the tree");
  EXPECT_EQ(errorOf(withPair(tree({15, -1, -1}, {1, 0, 0}, {2, 0, 0}))),
            "m.json: family 'elementwise' pairs: a tree's node 0 points outside the tree");
  auto shortValues = tree({0, -1, -1}, {1, 0, 0}, {2, 0, 0});
  shortValues["value"] = {0.1};
  EXPECT_EQ(errorOf(withPair(shortValues)),
            "m.json: family 'elementwise' pairs: a tree's arrays differ in length");
  auto notIndex = tree({0, -1, -1}, {1, 0, 0}, {2, 0, 0});
  notIndex["left"][0] = 1.5;
  EXPECT_EQ(errorOf(withPair(notIndex)), "m.json: left holds a value that is not a node index");
}

}  // namespace
}  // namespace rlscope::predictor
