// What part of the timeline a TimelineView shows: the visible time window [start, end) and the
// vertical scroll, with the navigation that changes them (zoom at a point, pan, fit). Plain
// arithmetic with no Qt, so that the navigation is tested without painting. Times are kept as
// doubles so that repeated zooming does not drift; window() rounds them for the LOD query.
#pragma once

#include "rlscope/trace/records.h"

namespace rlscope::gui {

using trace::TimeNs;

class ViewState {
 public:
  // The narrowest window: a few nanoseconds stay readable, and the query needs a non-empty one.
  static constexpr double kMinSpan = 10.0;

  // The trace's extent: what fit() shows and what zooming out and panning stay near.
  void setBounds(TimeNs start, TimeNs end);
  void fit();

  double start() const { return start_; }
  double end() const { return end_; }
  double span() const { return end_ - start_; }
  // The window rounded outwards to whole nanoseconds, never empty.
  TimeNs windowStart() const;
  TimeNs windowEnd() const;

  // The time at pixel x of a plot `width` pixels wide, and the pixel of a time.
  double timeAt(double x, int width) const;
  double xOf(double t, int width) const;

  // Multiplies the span by `factor` (< 1 zooms in) keeping the time at pixel x where it is.
  void zoomAt(double x, int width, double factor);
  // Moves the window by `dx` pixels of a plot `width` wide (positive: to later times).
  void panPixels(double dx, int width);
  // Moves the window by a fraction of its span.
  void panFraction(double fraction);
  // Shows [start, end) (at least kMinSpan long), kept near the trace as panning keeps it.
  void setWindow(double start, double end);
  // Centres [t0, t1] in the window, at the current zoom when it is at most half the window long
  // and at least 1/kTooSmall of it; else zoomed out to show it with a margin, or in until it is
  // 1/kRevealZoom of the window. The window stays within the trace when it fits in it.
  void reveal(double t0, double t1);
  static constexpr double kTooSmall = 500;
  static constexpr double kRevealZoom = 20;

  int scrollY() const { return scrollY_; }
  // Scrolls by dy pixels, keeping the content (contentHeight tall, shown in viewHeight) in view.
  void scrollBy(int dy, int contentHeight, int viewHeight);
  // Scrolls as little as needed to show content rows [y, y + h).
  void scrollToShow(int y, int h, int contentHeight, int viewHeight);

 private:
  // Keeps half of the window, or the whole trace when it is shorter, over the trace.
  void clamp();

  double boundsStart_ = 0;
  double boundsEnd_ = 1;
  double start_ = 0;
  double end_ = 1;
  int scrollY_ = 0;
};

}  // namespace rlscope::gui
