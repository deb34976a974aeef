// The predictor's outputs: `rlscope predict` (JSON "rlscope.prediction/1" and a table) and
// `rlscope devices` (the database as JSON or a table).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>

#include "rlscope/predictor/gpu_database.h"
#include "rlscope/predictor/what_if.h"

namespace rlscope::predictor {

// Every kernel group and operation; times in µs.
nlohmann::json toJson(const RunPrediction& p);
// The verdict, the run, the top kernels and the operations, for people.
void writeTable(const RunPrediction& p, std::size_t topKernels, std::ostream& out);

// A list of objects, each with every field of the database file and its sources.
nlohmann::json devicesToJson(const GpuDatabase& db);
void writeDevicesTable(const GpuDatabase& db, std::ostream& out);

}  // namespace rlscope::predictor
