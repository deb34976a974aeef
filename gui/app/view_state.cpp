#include "rlscope/gui_widgets/view_state.h"

#include <algorithm>
#include <cmath>

namespace rlscope::gui {

void ViewState::setBounds(TimeNs start, TimeNs end) {
  boundsStart_ = static_cast<double>(start);
  boundsEnd_ = std::max(static_cast<double>(end), boundsStart_ + kMinSpan);
  fit();
}

void ViewState::fit() {
  start_ = boundsStart_;
  end_ = boundsEnd_;
}

TimeNs ViewState::windowStart() const {
  return static_cast<TimeNs>(std::floor(start_));
}

TimeNs ViewState::windowEnd() const {
  return std::max(static_cast<TimeNs>(std::ceil(end_)), windowStart() + 1);
}

double ViewState::timeAt(double x, int width) const {
  return start_ + x / std::max(width, 1) * span();
}

double ViewState::xOf(double t, int width) const {
  return (t - start_) / span() * width;
}

void ViewState::zoomAt(double x, int width, double factor) {
  const double fraction = x / std::max(width, 1);
  const double anchor = timeAt(x, width);
  const double maxSpan = 2 * (boundsEnd_ - boundsStart_);
  const double newSpan = std::clamp(span() * factor, kMinSpan, std::max(maxSpan, kMinSpan));
  start_ = anchor - fraction * newSpan;
  end_ = start_ + newSpan;
  clamp();
}

void ViewState::panPixels(double dx, int width) {
  panFraction(dx / std::max(width, 1));
}

void ViewState::panFraction(double fraction) {
  const double shift = fraction * span();
  start_ += shift;
  end_ += shift;
  clamp();
}

void ViewState::setWindow(double start, double end) {
  start_ = start;
  end_ = std::max(end, start + kMinSpan);
  clamp();
}

void ViewState::reveal(double t0, double t1) {
  const double length = std::max(t1 - t0, 0.0);
  double s = span();
  if (length > s / 2) {
    s = std::max(length * 1.25, kMinSpan);
  } else if (length * kTooSmall < s) {
    s = std::max(length * kRevealZoom, kMinSpan);  // a few pixels would not show it
  }
  const double mid = (t0 + t1) / 2;
  start_ = mid - s / 2;
  end_ = mid + s / 2;
  // Within the trace where the window fits in it: the event stays in view, off centre.
  const double bounds = boundsEnd_ - boundsStart_;
  if (s <= bounds) {
    if (end_ > boundsEnd_) start_ = boundsEnd_ - s;
    if (start_ < boundsStart_) start_ = boundsStart_;
    end_ = start_ + s;
  }
  clamp();
}

void ViewState::clamp() {
  // Some of the trace stays in view: at least half of the window, or all of the trace.
  const double s = span();
  const double keep = std::min(s / 2, boundsEnd_ - boundsStart_);
  if (end_ < boundsStart_ + keep) start_ = boundsStart_ + keep - s;
  if (start_ > boundsEnd_ - keep) start_ = boundsEnd_ - keep;
  end_ = start_ + s;
}

void ViewState::scrollBy(int dy, int contentHeight, int viewHeight) {
  scrollY_ = std::clamp(scrollY_ + dy, 0, std::max(0, contentHeight - viewHeight));
}

void ViewState::scrollToShow(int y, int h, int contentHeight, int viewHeight) {
  if (y < scrollY_) {
    scrollBy(y - scrollY_, contentHeight, viewHeight);
  } else if (y + h > scrollY_ + viewHeight) {
    scrollBy(y + h - scrollY_ - viewHeight, contentHeight, viewHeight);
  }
}

}  // namespace rlscope::gui
