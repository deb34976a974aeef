// Importer for PyTorch profiler / Kineto Chrome-trace JSON (.json or .json.gz).
#pragma once

#include <string_view>

#include "rlscope/import/importer.h"
#include "rlscope/trace/writer.h"

namespace rlscope::import {

// Parses `json` (a complete document, already decompressed) and writes it into `writer` with the
// category mapping of docs/trace-format.md. Throws TraceError naming the first bad event.
void importKineto(std::string_view json, trace::TraceWriter& writer, const ImportOptions& options,
                  ImportStats& stats);

// The format's entry in formats() (kineto_format.cpp): Kineto JSON files, plain or gzip.
const Format& kinetoFormat();

}  // namespace rlscope::import
