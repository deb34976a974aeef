/* The plain timer for native workloads (bench/validation/README.md): an NVTX tool that times the
 * operations of rlscope's annotations (<rlscope/rlscope.h>: push/pop ranges in the NVTX domain
 * "rlscope") with clock_gettime(CLOCK_MONOTONIC), and nothing else.
 *
 *   cc -O2 -shared -fPIC -I/usr/local/cuda/include plain_nvtx.c -o libplain_nvtx.so
 *   NVTX_INJECTION64_PATH=$PWD/libplain_nvtx.so RLSCOPE_VALIDATION_PLAIN=out.json program ...
 *
 * At exit it writes {"total_ns": ..., "operations": {name: ns}} to $RLSCOPE_VALIDATION_PLAIN, like
 * workloads.py's plain mode: an operation's own time (the innermost open operation is charged for
 * each instant, as in rlscope's analysis), total_ns from the first NVTX call to exit. validate.py
 * compiles it into its scratch directory; validate.py never builds anything in build/.
 *
 * One thread: the operations of other threads would be charged to this thread's stack (the
 * bundled C++ sample has one thread). */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_NAMES 64
#define MAX_DEPTH 256

static struct {
  const char*
      name; /* the annotation's string (a literal in the sample: compared by pointer first) */
  int64_t ns;
  int64_t instances;
  int64_t children; /* operations opened directly inside this one */
} g_names[MAX_NAMES];
static int64_t g_topLevel; /* operations opened outside every other */
static int g_nameCount;
static int g_stack[MAX_DEPTH];
static int g_depth;
static int64_t g_last, g_start;
static const char* g_out;

/* Handles: the domain "rlscope" is 1, any other domain 2. */
#define RLSCOPE_DOMAIN ((nvtxDomainHandle_t)(uintptr_t)1)
#define OTHER_DOMAIN ((nvtxDomainHandle_t)(uintptr_t)2)

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int name_index(const char* name) {
  for (int i = 0; i < g_nameCount; ++i)
    if (g_names[i].name == name) return i;
  for (int i = 0; i < g_nameCount; ++i)
    if (strcmp(g_names[i].name, name) == 0) return i;
  if (g_nameCount == MAX_NAMES) return MAX_NAMES - 1; /* more names than that: lumped together */
  g_names[g_nameCount].name = strdup(name);
  return g_nameCount++;
}

static void charge(int64_t now) {
  if (g_depth > 0 && g_depth <= MAX_DEPTH) g_names[g_stack[g_depth - 1]].ns += now - g_last;
  g_last = now;
}

static int NVTX_API push_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a) {
  if (domain != RLSCOPE_DOMAIN) return 0;
  int64_t now = now_ns();
  charge(now);
  const char* name = a && a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii
                         ? a->message.ascii
                         : "(unnamed)";
  int i = name_index(name);
  ++g_names[i].instances;
  if (g_depth == 0)
    ++g_topLevel;
  else if (g_depth <= MAX_DEPTH)
    ++g_names[g_stack[g_depth - 1]].children;
  if (g_depth < MAX_DEPTH) g_stack[g_depth] = i;
  ++g_depth;
  return g_depth - 1;
}

static int NVTX_API pop(nvtxDomainHandle_t domain) {
  if (domain != RLSCOPE_DOMAIN || g_depth == 0) return -1;
  charge(now_ns());
  --g_depth;
  return g_depth;
}

static nvtxDomainHandle_t NVTX_API create_a(const char* name) {
  return name && strcmp(name, "rlscope") == 0 ? RLSCOPE_DOMAIN : OTHER_DOMAIN;
}

static void write_result(void) {
  int64_t total = now_ns() - g_start;
  FILE* f = fopen(g_out, "w");
  if (!f) {
    fprintf(stderr, "plain_nvtx: cannot write %s\n", g_out);
    return;
  }
  fprintf(f, "{\"total_ns\": %lld, \"operations\": {", (long long)total);
  for (int i = 0; i < g_nameCount; ++i)
    fprintf(f, "%s\"%s\": %lld", i ? ", " : "", g_names[i].name, (long long)g_names[i].ns);
  fprintf(f, "}, \"instances\": {");
  for (int i = 0; i < g_nameCount; ++i)
    fprintf(f, "%s\"%s\": %lld", i ? ", " : "", g_names[i].name, (long long)g_names[i].instances);
  fprintf(f, "}, \"children\": {\"(outside operations)\": %lld", (long long)g_topLevel);
  for (int i = 0; i < g_nameCount; ++i)
    fprintf(f, ", \"%s\": %lld", g_names[i].name, (long long)g_names[i].children);
  fprintf(f, "}}\n");
  fclose(f);
}

/* RLSCOPE_VALIDATION_TIMER_COST=FILE: before the program runs, what one operation costs this
 * timer (push + pop, ns) and how much of it lands inside the operation, the best of 5 loops of
 * empty operations against 5 bare loops, written to FILE as {"inside_ns": .., "total_ns": ..}.
 * validate.py asks for it in a run of its own, whose time it does not use. */
static void measure_own_cost(const char* path) {
  enum { N = 100000 };
  nvtxEventAttributes_t a = {0};
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "(timer)";
  double best_inside = 1e300, best_total = 1e300;
  int timer = name_index("(timer)");
  for (int rep = 0; rep < 5; ++rep) {
    int64_t t = now_ns();
    for (volatile int i = 0; i < N; ++i) {
    }
    int64_t bare = now_ns() - t;
    g_names[timer].ns = 0;
    t = now_ns();
    for (volatile int i = 0; i < N; ++i) {
      push_ex(RLSCOPE_DOMAIN, &a);
      pop(RLSCOPE_DOMAIN);
    }
    double total = (double)(now_ns() - t - bare) / N, inside = (double)g_names[timer].ns / N;
    if (total < best_total) best_total = total;
    if (inside < best_inside) best_inside = inside;
  }
  g_nameCount = 0; /* the measurement's name and counts are not the program's */
  g_topLevel = 0;
  memset(g_names, 0, sizeof g_names);
  FILE* f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "{\"inside_ns\": %.2f, \"total_ns\": %.2f}\n", best_inside, best_total);
  fclose(f);
}

static void install(NvtxFunctionTable table, unsigned size, unsigned id, void* fn) {
  if (id < size && table[id]) *table[id] = (NvtxFunctionPointer)fn;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t getExportTable) {
  g_out = getenv("RLSCOPE_VALIDATION_PLAIN");
  if (!g_out || !*g_out || !getExportTable) return 0;
  const NvtxExportTableCallbacks* cb =
      (const NvtxExportTableCallbacks*)getExportTable(NVTX_ETID_CALLBACKS);
  if (!cb || cb->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;
  NvtxFunctionTable t = NULL;
  unsigned n = 0;
  if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) || !t) return 0;
  install(t, n, NVTX_CBID_CORE2_DomainRangePushEx, (void*)push_ex);
  install(t, n, NVTX_CBID_CORE2_DomainRangePop, (void*)pop);
  install(t, n, NVTX_CBID_CORE2_DomainCreateA, (void*)create_a);
  const char* cost = getenv("RLSCOPE_VALIDATION_TIMER_COST");
  if (cost && *cost) measure_own_cost(cost);
  g_start = g_last = now_ns();
  atexit(write_result);
  return 1;
}
