// Kernels described by their operation's shape (--gemm, --conv) and many kernels at once
// (`rlscope predict --kernels FILE.csv`).
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>

#include "rlscope/predictor/gpu_database.h"
#include "rlscope/predictor/kernel_table.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace rlscope::predictor {
namespace {

TEST(KernelShape, GemmAndConvolutionWork) {
  Work g = gemmWork(parseGemm("1,128,256,64"), Precision::kFp32);
  EXPECT_DOUBLE_EQ(g.flops, 2.0 * 128 * 256 * 64);
  EXPECT_DOUBLE_EQ(g.dramBytes, 4.0 * (128 * 64 + 64 * 256 + 128 * 256));
  Work batched = gemmWork(parseGemm("8x128x256x64"), Precision::kFp16);
  EXPECT_DOUBLE_EQ(batched.flops, 8 * g.flops);
  EXPECT_DOUBLE_EQ(batched.dramBytes, 8 * g.dramBytes / 2);  // 2-byte elements
  // 3 -> 8 channels, 3x3 filters, 32x32 input, stride 1, padding 1: a 32x32 output.
  Work c = convWork(parseConv("1,3,8,32,32,3,3,1,1"), Precision::kFp32);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 8 * 32 * 32 * 3 * 9);
  EXPECT_DOUBLE_EQ(c.dramBytes, 4.0 * (3 * 32 * 32 + 8 * 3 * 9 + 8 * 32 * 32));
  // Stride 2, no padding: (32 - 3) / 2 + 1 = 15.
  Work s = convWork(parseConv("1,3,8,32,32,3,3,2,0"), Precision::kFp32);
  EXPECT_DOUBLE_EQ(s.flops, 2.0 * 8 * 15 * 15 * 3 * 9);
  EXPECT_EQ(parseGrid("4,2,1"), 8);
  EXPECT_EQ(parseGrid("4x2"), 8);
}

TEST(KernelShape, MalformedShapesAreOneClearError) {
  for (const char* bad : {"", "1,2,3", "1,2,3,4,5", "1,0,3,4", "a,b,c,d", "1,2,3,4,", "-1,2,3,4"}) {
    try {
      parseGemm(bad);
      ADD_FAILURE() << "accepted --gemm '" << bad << "'";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("--gemm '"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(parseConv("1,3,8,32,32,3,3,0,1"), std::runtime_error);  // stride 0
  EXPECT_THROW(convWork(parseConv("1,3,8,2,2,5,5,1,0"), Precision::kFp32), std::runtime_error);
  EXPECT_THROW(parseGrid("4,2,1,1"), std::runtime_error);
}

TEST(KernelDescription, AShapeMakesALibraryKernelWithItsWork) {
  KernelDescription k;
  k.grid = "16,8";
  k.resources.blockSize = 256;
  k.timeUs = 100;
  k.gemm = "1,1024,1024,1024";
  DescribedKernel d = describe(k);
  EXPECT_EQ(d.traits.kind, KernelKind::kLibrary);
  EXPECT_EQ(d.launch.blocks, 128);
  EXPECT_DOUBLE_EQ(d.launch.timeNs, 100e3);
  EXPECT_DOUBLE_EQ(d.launch.flops, 2.0 * (1 << 30));
  k.flops = 5;  // given counts win over the shape's
  EXPECT_DOUBLE_EQ(describe(k).launch.flops, 5);
  k.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
  EXPECT_EQ(describe(k).traits.kind, KernelKind::kCommunication);
  k.conv = "1,3,8,32,32,3,3,1,1";
  EXPECT_THROW(describe(k), std::runtime_error);  // both
}

TEST(KernelTable, PredictsEveryRowAndKeepsItsColumns) {
  const GpuDatabase& db = GpuDatabase::builtIn();
  KernelPredictor predictor(db.get("V100 PCIe 16GB"), db.get("T4"));
  std::istringstream in(
      "id,name,grid,block,regs,time_us,gemm\r\n"
      "a,volta_sgemm_128x64_nn,\"8,4,1\",256,120,412.5,\"1,1024,1024,1024\"\n"
      "b,vectorized_elementwise_kernel,8x4x1,256,,20,\n");
  std::ostringstream out;
  KernelTableStats stats = predictKernelTable(in, out, predictor, "k.csv");
  EXPECT_EQ(stats.kernels, 2u);
  std::istringstream lines(out.str());
  std::string header, a, b;
  std::getline(lines, header);
  std::getline(lines, a);
  std::getline(lines, b);
  EXPECT_EQ(header, "id,name,grid,block,regs,time_us,gemm,predicted_us");
  KernelDescription ka;
  ka.name = "volta_sgemm_128x64_nn";
  ka.grid = "8,4,1";
  ka.resources = {256, 120, 0, 0};
  ka.timeUs = 412.5;
  ka.gemm = "1,1024,1024,1024";
  DescribedKernel d = describe(ka);
  double expected = predictor.predict(d.launch, d.traits).timeNs / 1e3;
  ASSERT_EQ(a.rfind("a,volta_sgemm_128x64_nn,\"8,4,1\",256,120,412.5,\"1,1024,1024,1024\",", 0),
            0u);
  EXPECT_NEAR(std::stod(a.substr(a.rfind(',') + 1)), expected, 1e-9 * expected);
  EXPECT_EQ(b.rfind("b,vectorized_elementwise_kernel,8x4x1,256,,20,,", 0), 0u) << b;
}

TEST(KernelTable, BadRowsNameTheirLineAndColumn) {
  const GpuDatabase& db = GpuDatabase::builtIn();
  KernelPredictor predictor(db.get("A100"), db.get("H100"));
  auto errorOf = [&](const std::string& text) {
    std::istringstream in(text);
    std::ostringstream out;
    try {
      predictKernelTable(in, out, predictor, "k.csv");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(errorOf("grid,block,time_us\n4,256,1\n4,x,1\n"),
            "k.csv line 3: column block: 'x' is not a non-negative number");
  EXPECT_EQ(errorOf("grid,block,time_us\n4,256\n"),
            "k.csv line 2: 2 fields where the header has 3");
  EXPECT_EQ(errorOf("grid,block,time_us\n4,256,0\n"),
            "k.csv line 2: a kernel needs its grid, block and time_us");
  EXPECT_EQ(errorOf("name,block,time_us\n"),
            "k.csv line 1: the header needs the columns grid, block and time_us");
  EXPECT_EQ(errorOf(""), "k.csv line 0: no header row");
  EXPECT_EQ(errorOf("grid,block,time_us\n\"4,256,1\n"),
            "k.csv line 2: a quoted field is not closed");
}

TEST(PredictorCommands, GemmAndKernelTableFromTheCommandLine) {
  testing::TempDir dir;
  auto one =
      testing::runCommand({"rlscope", "predict", "--kernel", "--origin", "V100", "--target", "T4",
                           "--grid", "8,4", "--block", "256", "--regs", "120", "--time-us", "412.5",
                           "--gemm", "1,1024,1024,1024", "--name", "volta_sgemm_128x64_nn"});
  ASSERT_EQ(one.exitCode, 0) << one.err;
  EXPECT_NE(one.out.find("library fp32 kernel"), std::string::npos) << one.out;
  auto csv = dir.write("k.csv",
                       "name,grid,block,regs,time_us,gemm\n"
                       "volta_sgemm_128x64_nn,8x4,256,120,412.5,1x1024x1024x1024\n");
  auto out = dir / "p.csv";
  auto table = testing::runCommand({"rlscope", "predict", "--kernels", csv.string(), "--origin",
                                    "V100", "--target", "T4", "-o", out.string()});
  ASSERT_EQ(table.exitCode, 0) << table.err;
  std::string text = testing::readFile(out);
  std::string row = testing::lines(text).back();
  EXPECT_NEAR(std::stod(row.substr(row.rfind(',') + 1)), std::stod(testing::lines(one.out).back()),
              1e-3);
  auto bad =
      testing::runCommand({"rlscope", "predict", "--kernel", "--origin", "V100", "--target", "T4",
                           "--grid", "8", "--block", "256", "--time-us", "1", "--gemm", "1,2,3"});
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_EQ(testing::lines(bad.err).size(), 1u) << bad.err;
}

}  // namespace
}  // namespace rlscope::predictor
