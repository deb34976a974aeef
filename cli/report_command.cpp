#include <fstream>
#include <iostream>

#include "commands.h"
#include "rlscope/report/comparison.h"
#include "rlscope/report/comparison_output.h"
#include "rlscope/report/html_report.h"
#include "rlscope/report/markdown_report.h"
#include "trace_analysis.h"

namespace rlscope::cli {

namespace {

bool endsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A trace is analysed; an analysis document (`rlscope analyze --format json`, e.g. a baseline
// kept by CI) is read as it is.
nlohmann::json analysisOf(const std::string& path, const TraceAnalysisOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  char first = 0;
  in >> first;
  if (first != '{') return analyzeTraceFile(path, options).document;
  in.seekg(0);
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded())
    throw std::runtime_error(path + " is neither an rlscope trace nor an analysis (JSON)");
  // The document was analysed already: analysis options cannot change it.
  if (!options.predictTarget.empty() && !doc.contains("prediction"))
    std::cerr << "rlscope: warning: " << path
              << " is an analysis document, not a trace: --target adds no prediction to it "
                 "(predict from the trace instead)\n";
  return doc;
}

}  // namespace

Run addReportCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "report",
      "Write a report of a trace: a self-contained HTML page (stacked bars per operation, GPU-\n"
      "bound share, top kernels, GPU idle time, overhead correction and bias), Markdown for CI\n"
      "job summaries, or the analysis JSON; the format follows -o's extension (.html, .md,\n"
      ".json), Markdown on standard output without -o.\n"
      "With --baseline OLD, compares NEW against OLD per operation, category set and in total,\n"
      "prints what changed, and exits with status 1 when something got slower by more than\n"
      "--fail-above percent (and more than the noise floor): a CI regression gate. OLD and NEW\n"
      "are traces or analysis documents (`rlscope analyze --format json`). See docs/report.md.\n\n"
      "  rlscope report run.sqlite -o report.html\n"
      "  rlscope report --baseline main.json run.sqlite --fail-above 10 -o summary.md");
  struct Options {
    std::string trace;
    std::string output;
    std::string baseline;
    double failAbovePct = 10;
    double noiseFloorUs = report::kDefaultNoiseFloor;
    TraceAnalysisOptions analysis;
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("TRACE", opts->trace, "rlscope trace (SQLite), or an analysis document (JSON)")
      ->required();
  cmd->add_option("-o,--output", opts->output,
                  "report file: .html, .md or .json (default: Markdown on standard output)");
  cmd->add_option("--baseline", opts->baseline,
                  "compare with this earlier trace or analysis document (regression gate)");
  cmd->add_option("--fail-above", opts->failAbovePct,
                  "with --baseline: exit 1 when an operation, category set or the total is slower "
                  "by more than this many percent")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--noise-floor-us", opts->noiseFloorUs,
                  "with --baseline: changes smaller than this never fail (default: the larger of "
                  "100 us and 1% of the baseline's total)");
  addTraceAnalysisOptions(*cmd, opts->analysis);
  return [opts]() {
    nlohmann::json current = analysisOf(opts->trace, opts->analysis);
    const std::string& out = opts->output;
    if (!opts->baseline.empty()) {
      nlohmann::json baseline = analysisOf(opts->baseline, opts->analysis);
      auto c = report::compare(baseline, current, opts->failAbovePct, opts->noiseFloorUs);
      report::writeComparisonTable(c, std::cout);
      if (!out.empty())
        writeOutput(out, [&](std::ostream& s) {
          if (endsWith(out, ".json"))
            s << report::comparisonToJson(c).dump(2) << '\n';
          else
            s << report::renderComparisonMarkdown(c);
        });
      return c.regressed() ? 1 : 0;
    }
    writeOutput(out, [&](std::ostream& s) {
      if (endsWith(out, ".html") || endsWith(out, ".htm"))
        s << report::renderHtml(current);
      else if (endsWith(out, ".json"))
        s << current.dump(2) << '\n';
      else
        s << report::renderMarkdown(current);
    });
    if (!out.empty()) std::cerr << "rlscope: report written to " << out << '\n';
    return 0;
  };
}

}  // namespace rlscope::cli
