#include "libinject/process.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "libinject/log.h"
#include "libinject/sink.h"
#include "libinject/thread_state.h"
#include "libinject/tracer.h"

namespace rooftrace::inject {

namespace {

std::atomic<Producer*> g_current{nullptr};
std::mutex g_init_mu;
bool g_process_init_done = false;
std::atomic<bool> g_child_pending{false};
// Preloaded into a process that does not (yet) link CUDA: the producer
// starts with its first record, so helper processes that never touch NVTX,
// cuBLAS or CUDA leave no trace at all.
std::atomic<bool> g_preload_pending{false};

void ForkPrepare() { g_init_mu.lock(); }
void ForkParent() { g_init_mu.unlock(); }
void ForkChild() {
  g_init_mu.unlock();
  // The parent's producer (its queue, sender thread and sink) belongs to the
  // parent; it is abandoned here, never touched again.
  if (g_current.exchange(nullptr) != nullptr) g_child_pending.store(true);
}

void AtExit() {
  Producer* s = g_current.load();
  if (s != nullptr) s->Stop(-1);
}

// A forked child writing to the parent's file would truncate it: the child
// gets "<name>-child-<pid>.rft" next to it.
std::string ChildFilePath(const std::string& path, pid_t pid) {
  return SiblingPath(path, "child-" + std::to_string(pid));
}

Producer* CreateProducer(bool forked_child = false) {
  auto config = ParseConfig([](const char* name) { return getenv(name); });
  if (!config.ok()) {
    Say(LogLevel::kWarn, "%s; rooftrace stands aside",
        config.status().message().c_str());
    return nullptr;
  }
  SetLogLevel(config->log_level);
  if (config->disabled) {
    Say(LogLevel::kInfo, "ROOFTRACE_DISABLE=1: standing aside");
    return nullptr;
  }
  ProducerOptions options;
  options.config = std::move(*config);
  if (forked_child && options.config.sink.kind == SinkSpec::Kind::kFile) {
    options.config.sink.path =
        ChildFilePath(options.config.sink.path, getpid());
  }
  return new Producer(std::move(options));
}

// Starts the sender of a created producer; null (and one line) on failure.
Producer* StartOrStandAside(Producer* producer) {
  if (producer == nullptr) return nullptr;
  Status s = producer->Start();
  if (!s.ok()) {
    Say(LogLevel::kWarn, "%s; rooftrace stands aside", s.message().c_str());
    return nullptr;  // leaked on purpose: CUPTI may hold a pointer to it
  }
  return producer;
}

bool WantsCupti(EntryRoute route) {
  return route == EntryRoute::kCudaInjection ||
         (route == EntryRoute::kPreload && HostLinksCuda() &&
          getenv("CUDA_INJECTION64_PATH") == nullptr);
}

}  // namespace

Producer* CurrentProducer() {
  Producer* s = g_current.load(std::memory_order_acquire);
  if (s != nullptr) return s;
  if (g_preload_pending.load(std::memory_order_relaxed) &&
      g_preload_pending.exchange(false)) {
    return StartProcessProducer(EntryRoute::kPreload);
  }
  if (!g_child_pending.load(std::memory_order_relaxed)) return nullptr;
  std::lock_guard<std::mutex> lock(g_init_mu);
  if (g_child_pending.exchange(false)) {
    // A forked child: its own producer, NVTX and cuBLAS only (CUDA does not
    // survive fork; a child that execs is a new process anyway).
    g_current.store(StartOrStandAside(CreateProducer(/*forked_child=*/true)),
                    std::memory_order_release);
  }
  return g_current.load(std::memory_order_acquire);
}

void SetCurrentProducerForTesting(Producer* producer) {
  g_current.store(producer, std::memory_order_release);
}

void StartOnFirstRecord() {
  g_preload_pending.store(true, std::memory_order_release);
}

Producer* StartProcessProducer(EntryRoute route) {
  g_preload_pending.store(false, std::memory_order_relaxed);
  Producer* producer = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_init_mu);
    if (!g_process_init_done) {
      g_process_init_done = true;
      Producer* created = CreateProducer();
      // CUPTI first, so the Hello announces kernels when they will come.
      if (created != nullptr && WantsCupti(route)) StartCuptiTracing(created);
      created = StartOrStandAside(created);
      if (created != nullptr) {
        g_current.store(created, std::memory_order_release);
        pthread_atfork(ForkPrepare, ForkParent, ForkChild);
        atexit(AtExit);
      }
    }
    producer = g_current.load(std::memory_order_acquire);
  }
  if (producer == nullptr) return CurrentProducer();
  if (WantsCupti(route)) StartCuptiTracing(producer);  // once per producer
  return producer;
}

}  // namespace rooftrace::inject
