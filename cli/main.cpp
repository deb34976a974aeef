// rlscope: profile, calibrate, and work with traces (import, export, info, analyze, report,
// predict), and the GPU database (devices, occupancy).

#include <cstdlib>
#include <iostream>
#include <map>
#include <string>

#include "calibrate_command.h"
#include "commands.h"
#include "prof_command.h"
#include "rlscope/trace/error.h"
#include "rlscope/trace/version.h"

int main(int argc, char** argv) {
  using namespace rlscope;
  CLI::App app{
      "rlscope: a cross-stack profiler for deep RL and CUDA/Python programs.\n"
      "Profiles programs (`rlscope prof`, the same as rlscope-prof), calibrates the profiler's\n"
      "overhead, and works with rlscope traces (SQLite files): import other profilers' traces,\n"
      "export them, merge a job's hosts' traces, summarise, analyse and report on them, gate CI\n"
      "on regressions, and predict them on other GPUs (predict, devices, occupancy).\n"
      "Run `rlscope SUBCOMMAND --help` for each subcommand.",
      "rlscope"};
  // `rlscope prof` is rlscope-prof: everything after `prof` is its own command line, which
  // CLI11 could not leave unparsed for a subcommand.
  if (argc > 1 && std::string_view(argv[1]) == "prof")
    return cli::profMain("rlscope prof", argc - 1, argv + 1);
  if (argc > 1 && std::string_view(argv[1]) == "calibrate")
    return cli::calibrateMain("rlscope calibrate", argc - 1, argv + 1);
  app.set_version_flag("--version", std::string("rlscope ") + trace::kRlscopeVersion);
  app.require_subcommand(1);
  app.fallthrough(false);

  std::map<const CLI::App*, cli::Run> runs;
  auto add = [&](cli::Run (*factory)(CLI::App&)) {
    auto before = app.get_subcommands({}).size();
    auto run = factory(app);
    runs[app.get_subcommands({}).at(before)] = run;
  };
  add(cli::addImportCommand);
  add(cli::addExportCommand);
  add(cli::addInfoCommand);
  add(cli::addAnalyzeCommand);
  add(cli::addMergeCommand);
  add(cli::addReportCommand);
  add(cli::addPredictCommand);
  add(cli::addDevicesCommand);
  add(cli::addOccupancyCommand);
  app.add_subcommand("prof",
                     "Profile a program: the same as rlscope-prof (see `rlscope prof --help`)");
  app.add_subcommand("calibrate",
                     "Measure the profiler's cost per recorded event for a command, to remove it "
                     "from its traces (see `rlscope calibrate --help`)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, with a pointer to the help of the subcommand being parsed.
    std::string help = "rlscope";
    for (auto* sub : app.get_subcommands()) help += " " + sub->get_name();
    std::cerr << "rlscope: error: " << e.what() << " (see `" << help << " --help`)\n";
    return 2;
  }

  try {
    for (auto* sub : app.get_subcommands()) return runs.at(sub)();
  } catch (const trace::TraceError& e) {
    std::cerr << "rlscope: error: " << e.what() << '\n';
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "rlscope: error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "rlscope: error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
