#include <fstream>
#include <iostream>
#include <optional>

#include "breakdown.h"
#include "breakdown_output.h"
#include "commands.h"
#include "rlscope/trace/atomic_output.h"

namespace rlscope::cli {

Run addAnalyzeCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "analyze",
      "Break a trace's time down per process and operation: how much of each operation ran on\n"
      "the CPU only, the GPU only or both at once, and in which categories (Python, Backend,\n"
      "Simulator, CUDA API, GPU kernel, ...), how much GPU time each launched, and its language\n"
      "transitions. Time outside every operation is (unannotated).\n"
      "With a calibration (`rlscope calibrate`, or one stored by `rlscope-prof --calibrate`),\n"
      "the profiler's own overhead is removed and the corrected run time is compared with the\n"
      "uninstrumented run (the bias).");
  struct Options {
    std::string trace;
    std::string format = "table";
    std::string output;
    std::string calibration;
    bool noCorrection = false;
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("TRACE", opts->trace, "rlscope trace (SQLite)")->required();
  cmd->add_option("-f,--format", opts->format,
                  "table for people, json (schema rlscope.analysis/1) or csv for scripts")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("-o,--output", opts->output, "write here instead of standard output");
  cmd->add_option("--calibration", opts->calibration,
                  "remove the profiler's overhead with this calibration file (rlscope "
                  "calibrate); default: the calibration stored in the trace, if any");
  cmd->add_flag("--no-correction", opts->noCorrection,
                "times as recorded, even when the trace holds a calibration");
  return [opts]() {
    trace::TraceReader reader(opts->trace);
    analysis::AnalyzeOptions options;
    options.progress = [](const std::string& line) { progress(line); };
    std::optional<analysis::Calibration> calibration;
    if (!opts->noCorrection) {
      if (!opts->calibration.empty()) {
        calibration = analysis::readCalibrationFile(opts->calibration);
        options.calibrationOrigin = opts->calibration;
      } else if (auto rows = reader.calibration(); !rows.empty()) {
        calibration = analysis::calibrationFromRecords(rows);
        options.calibrationOrigin = "stored in the trace";
      }
    }
    if (calibration) options.calibration = &*calibration;
    auto b = analysis::analyzeTrace(reader, options);
    auto write = [&](std::ostream& out) {
      if (opts->format == "json")
        out << analysis::toJson(b).dump(2) << '\n';
      else if (opts->format == "csv")
        analysis::writeCsv(b, out);
      else
        analysis::writeTable(b, out);
    };
    if (opts->output.empty()) {
      write(std::cout);
    } else {
      trace::AtomicOutput file(opts->output);
      std::ofstream out(file.tempPath());
      write(out);
      out.close();
      if (!out) throw std::runtime_error("cannot write " + opts->output);
      file.commit();
    }
    return 0;
  };
}

}  // namespace rlscope::cli
