// Importer for Nsight Systems SQLite exports (`nsys export --type sqlite`), schema 3.x.
#pragma once

#include <filesystem>

#include "rlscope/import/importer.h"
#include "rlscope/trace/writer.h"

namespace rlscope::import {

// Reads the export read-only and writes its CUDA, NVTX, thread and GPU tables into `writer`;
// NVTX push/pop and start/end ranges also become operations. Throws TraceError on a file that
// is not an nsys export or has an unsupported EXPORT_SCHEMA_VERSION major.
void importNsys(const std::filesystem::path& input, trace::TraceWriter& writer,
                const ImportOptions& options, ImportStats& stats);

// The format's entry in formats(): SQLite databases with an nsys export's tables.
const Format& nsysFormat();

}  // namespace rlscope::import
