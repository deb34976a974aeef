/* The collector's C interface for CPU category tracking (the Python hooks of the rlscope
 * package). The package does not link librlscope_collector.so: it looks these symbols up with
 * dlsym(RTLD_DEFAULT, ...) and stays inert when they are absent (not under rlscope-prof). */
#ifndef RLSCOPE_COLLECTOR_CATEGORY_ABI_H
#define RLSCOPE_COLLECTOR_CATEGORY_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Categories, as trace::Category numbers them (rlscope_cpu_intervals.category). */
enum {
  RLSCOPE_CATEGORY_WAITING = 0, /* the thread waits (a lock, a sleep): no CPU category */
  RLSCOPE_CATEGORY_PYTHON = 1,
  RLSCOPE_CATEGORY_BACKEND = 2,
  RLSCOPE_CATEGORY_SIMULATOR = 3,
};

/* Non-zero when the collector records in this process (it runs under rlscope-prof). */
typedef int (*rlscope_recording_fn)(void);
/* Non-zero when the collector records in this process and the run asked for Python tracking
 * (rlscope-prof without --no-python). */
typedef int (*rlscope_category_tracking_fn)(void);
/* A handle for `name` (UTF-8, `size` bytes) that category pushes can refer to; 0 on failure. */
typedef uint64_t (*rlscope_register_name_fn)(const char* name, size_t size);
/* The calling thread now runs `category` (in the native function `name`, 0 = none) until the
 * matching pop: a stack per thread, timestamped by the collector. `events`: the Python events
 * (profile-function or sys.monitoring callbacks) the thread's tracker handled since its previous
 * push or pop, which cost the program time in the span the push or pop ends. */
typedef void (*rlscope_category_push_fn)(uint32_t category, uint64_t name, uint64_t events);
typedef void (*rlscope_category_pop_fn)(uint64_t events);
/* The process's running count of Python events (all threads), which the collector reads when
 * its part ends: the total the calibration prices. The counter must outlive the process's
 * collector (static storage). */
typedef void (*rlscope_python_event_counter_fn)(const volatile uint64_t* counter);

#define RLSCOPE_RECORDING_SYMBOL "rlscope_collector_recording"
#define RLSCOPE_CATEGORY_TRACKING_SYMBOL "rlscope_collector_category_tracking"
#define RLSCOPE_REGISTER_NAME_SYMBOL "rlscope_collector_register_name"
#define RLSCOPE_CATEGORY_PUSH_SYMBOL "rlscope_collector_category_push_counted"
#define RLSCOPE_CATEGORY_POP_SYMBOL "rlscope_collector_category_pop_counted"
#define RLSCOPE_PYTHON_EVENT_COUNTER_SYMBOL "rlscope_collector_python_event_counter"

#ifdef __cplusplus
}
#endif

#endif
