#include <chrono>
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "rlscope/distributed/job_merge.h"
#include "rlscope/trace/micros_text.h"

namespace rlscope::cli {

Run addMergeCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "merge",
      "Join the traces of one job's hosts (each node's rlscope-prof) into one trace, every host's\n"
      "events on the first trace's clock: traces of one host share its clock; another host's is\n"
      "aligned by the clock exchanges of rlscope-prof --clock-sync (within the network's round\n"
      "trip) refined by the job's collectives (the same collective completes at the same moment\n"
      "on every rank), else by the wall-clock origins the traces recorded (as good as NTP).\n"
      "Processes whose pid an earlier trace had get a free one; GPUs of each host keep ids of\n"
      "their own. rlscope_meta.merged_traces says what was done (docs/user-guide.md).");
  struct Options {
    std::vector<std::string> traces;
    std::string output;
    std::string align = "collectives";
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("TRACE", opts->traces, "the hosts' traces; the first one's clock is kept")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", opts->output, "the job's trace")->required();
  cmd->add_option("--align", opts->align,
                  "collectives (the clock exchanges, refined by the collectives the traces "
                  "have in common), clock-exchange (the exchanges alone) or wall-clock (the "
                  "recorded wall-clock origins only); each falls back to the next")
      ->capture_default_str()
      ->check(CLI::IsMember({"collectives", "clock-exchange", "wall-clock"}));
  return [opts]() {
    auto started = std::chrono::steady_clock::now();
    std::vector<std::filesystem::path> inputs(opts->traces.begin(), opts->traces.end());
    auto report = analysis::mergeJob(inputs, opts->output,
                                     {.useClockExchange = opts->align != "wall-clock",
                                      .alignByCollectives = opts->align == "collectives",
                                      .progress = [](const std::string& line) { progress(line); }});
    for (const auto& t : report.traces) {
      std::cout << t.file.string() << " (" << (t.host.empty() ? "host unknown" : t.host) << "): ";
      if (t.clock.method == "reference") {
        std::cout << "the reference clock";
      } else {
        std::cout << trace::clockOffsetText(t.clock.method, t.clock.offset,
                                            static_cast<std::int64_t>(t.clock.collectives),
                                            t.clock.uncertainty);
      }
      std::cout << ", " << t.rows << " rows";
      if (t.pidsRemapped) std::cout << ", " << t.pidsRemapped << " pids renumbered";
      std::cout << '\n';
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::cout << "merged " << report.traces.size() << " traces (" << report.rows << " rows) into "
              << opts->output << " in " << elapsedText(seconds) << '\n';
    return 0;
  };
}

}  // namespace rlscope::cli
