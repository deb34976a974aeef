// Opens traces on a worker thread, so that the window stays responsive (and keeps showing the
// trace it has) while a large file is imported and read. One load at a time: a new one cancels
// the one before, whose results are then never delivered. Signals arrive on the loader's thread
// (the GUI thread), in order: progress..., then exactly one of loaded, failed or cancelled.
#pragma once

#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <thread>

#include "rlscope/gui_widgets/trace_file.h"

namespace rlscope::gui {

class TraceLoader : public QObject {
  Q_OBJECT

 public:
  explicit TraceLoader(QObject* parent = nullptr);
  // Cancels a running load and waits for its thread (it stops at its next progress step; an
  // import in progress runs to its end).
  ~TraceLoader() override;

  void load(const QString& path);
  void cancel();
  bool busy() const { return busy_; }

 signals:
  // fraction < 0 while the stage cannot tell how far it is.
  void progress(const QString& stage, double fraction);
  void loaded(std::shared_ptr<const rlscope::gui::TraceDocument> doc, const QString& path);
  void failed(const QString& path, const QString& message);
  void cancelled(const QString& path);

 private:
  void join();
  // Runs fn on this object's thread if load `generation` is still the current one.
  template <typename Fn>
  void deliver(unsigned generation, Fn fn);

  std::thread worker_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  unsigned generation_ = 0;
  bool busy_ = false;
};

}  // namespace rlscope::gui
