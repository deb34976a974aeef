// An analysis document (`rlscope analyze -f json`), as `rlscope report` and `rlscope analyze
// DOCUMENTS...` read it: a stranger's file, or one a Ray task sent back. Whatever its keys and
// types, it must be refused in one line or rendered and combined (a crash, an out-of-range index
// or an exception of another kind is a bug).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "rlscope/report/fleet.h"
#include "rlscope/report/html_report.h"
#include "rlscope/report/markdown_report.h"

using namespace rlscope::report;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto document = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return 0;
  try {
    (void)renderHtml(document);
    (void)renderMarkdown(document);
  } catch (const std::runtime_error&) {
    // refused in one line, as rlscope report does
  }
  // Combined with itself: the same processes twice, every operation across both.
  FleetInput input = fleetInputFromDocument(document, "fuzz.json");
  Fleet fleet = combineAnalyses({input, input});
  std::ostringstream out;
  writeFleetTable(fleet, out, 20);
  writeFleetCsv(fleet, out);
  out << fleetToJson(fleet).dump();
  return 0;
}
