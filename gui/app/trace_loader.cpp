#include "trace_loader.h"

#include <QMetaObject>
#include <chrono>
#include <exception>
#include <utility>

namespace rlscope::gui {

namespace {
// Progress is posted at most this often: a fast read would otherwise flood the event queue.
constexpr auto kProgressInterval = std::chrono::milliseconds(50);
}  // namespace

TraceLoader::TraceLoader(QObject* parent) : QObject(parent) {
  qRegisterMetaType<std::shared_ptr<const TraceDocument>>();
}

TraceLoader::~TraceLoader() {
  cancel();
  join();
}

void TraceLoader::cancel() {
  if (cancel_) cancel_->store(true);
}

void TraceLoader::join() {
  if (worker_.joinable()) worker_.join();
}

template <typename Fn>
void TraceLoader::deliver(unsigned generation, Fn fn) {
  // Queued to this object: if it is destroyed first, Qt drops the call with it.
  QMetaObject::invokeMethod(
      this,
      [this, generation, fn = std::move(fn)] {
        if (generation == generation_) fn();
      },
      Qt::QueuedConnection);
}

void TraceLoader::load(const QString& path) {
  cancel();
  join();
  const unsigned generation = ++generation_;
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  busy_ = true;
  worker_ = std::thread([this, generation, path, cancel = cancel_] {
    auto last = std::chrono::steady_clock::now() - kProgressInterval;
    QString lastStage;
    auto onProgress = [&](const std::string& stage, double fraction) {
      const QString text = QString::fromStdString(stage);
      const auto now = std::chrono::steady_clock::now();
      if (text != lastStage || now - last >= kProgressInterval) {
        last = now;
        lastStage = text;
        deliver(generation, [this, text, fraction] { emit progress(text, fraction); });
      }
      return !cancel->load();
    };
    try {
      auto doc = openTraceFile(path.toStdString(), onProgress);
      if (cancel->load()) throw LoadCancelled();
      deliver(generation, [this, doc = std::move(doc), path] {
        busy_ = false;
        emit loaded(doc, path);
      });
    } catch (const LoadCancelled&) {
      deliver(generation, [this, path] {
        busy_ = false;
        emit cancelled(path);
      });
    } catch (const std::exception& e) {
      deliver(generation, [this, path, message = QString::fromUtf8(e.what())] {
        busy_ = false;
        emit failed(path, message);
      });
    }
  });
}

}  // namespace rlscope::gui
