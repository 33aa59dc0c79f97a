// Host CPU time per kernel launch (issue 26): N launches of an empty kernel
// through each launch API an inference process uses, on 1 and on 4 host
// threads, timed with the launching thread's own CPU clock
// (CLOCK_THREAD_CPUTIME_ID), not wall time, so a noisy VM's stolen time
// and the GPU's speed do not enter the figure.
//
//   launch_bench [--launches N] [--threads 1,4] [--apis LIST] [--batch B]
//                [--kineto-like]
//
// APIs: triple (<<<>>>: nvcc 13's __cudaLaunchKernel stub), runtime
// (cudaLaunchKernel), driver (cuLaunchKernel, as Triton launches), graph
// (cudaGraphLaunch of a one-kernel graph made by stream capture).
// --kineto-like: the program itself enables the CUPTI activity kinds
// Kineto (torch.profiler with CUDA activities) enables, and nothing else:
// the peer configuration to compare with (run it without rooftrace).
//
// Each thread launches in batches of B (default 256) and synchronizes its
// stream between batches, outside the timed part, so a full launch queue
// never makes a launch wait. One line per API and thread count:
//   launch api=triple threads=1 launches=20000 cpu_ns_per_launch=2345.6
//       wall_ns_per_launch=2456.7
// (one line each; scripts/launch_overhead.py reads them), then
// "launch total=N": every launch made, warm-up included. Exit 0, 2 on a
// bad argument, 1 when CUDA fails (no GPU: one line saying so).
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

__global__ void EmptyKernel(int) {}

uint64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t WallNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

enum class Api { kTriple, kRuntime, kDriver, kGraph };

const char* ApiName(Api api) {
  switch (api) {
    case Api::kTriple: return "triple";
    case Api::kRuntime: return "runtime";
    case Api::kDriver: return "driver";
    case Api::kGraph: return "graph";
  }
  return "?";
}

bool Check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  fprintf(stderr, "launch_bench: %s failed: %s\n", what, cudaGetErrorString(e));
  return false;
}

// cuLaunchKernel as Triton's launcher reaches it: dlsym() in libcuda, so
// the benchmark does not link the driver (it runs, and says what is
// missing, where there is none).
using CuLaunchKernelFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned,
                                      unsigned, unsigned, unsigned, unsigned,
                                      CUstream, void**, void**);
CuLaunchKernelFn LoadCuLaunchKernel() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) h = dlopen("libcuda.so.1", RTLD_NOW);
  if (h == nullptr) return nullptr;
  return reinterpret_cast<CuLaunchKernelFn>(dlsym(h, "cuLaunchKernel"));
}
CuLaunchKernelFn g_cu_launch_kernel = nullptr;

// Every launch made, warm-up included (the last line, "launch total=N",
// lets a caller relate counts libinject reports to launches).
std::atomic<uint64_t> g_total_launches{0};

struct ThreadResult {
  uint64_t cpu_ns = 0;
  uint64_t wall_ns = 0;
  bool ok = false;
};

// One host thread: its own stream (and graph), `launches` launches in
// batches, each batch timed on the thread's CPU clock.
void RunThread(Api api, uint64_t launches, uint64_t batch, ThreadResult* out) {
  cudaStream_t stream = nullptr;
  if (!Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
             "cudaStreamCreate")) {
    return;
  }
  CUfunction function = nullptr;
  cudaGraphExec_t graph_exec = nullptr;
  if (api == Api::kDriver &&
      !Check(cudaGetFuncBySymbol(&function,
                                 reinterpret_cast<const void*>(&EmptyKernel)),
             "cudaGetFuncBySymbol")) {
    return;
  }
  if (api == Api::kGraph) {
    cudaGraph_t graph = nullptr;
    if (!Check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
               "cudaStreamBeginCapture")) {
      return;
    }
    EmptyKernel<<<1, 32, 0, stream>>>(0);
    if (!Check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture") ||
        !Check(cudaGraphInstantiate(&graph_exec, graph, 0),
               "cudaGraphInstantiate")) {
      return;
    }
    cudaGraphDestroy(graph);
  }
  int arg = 0;
  void* args[] = {&arg};
  // Warm-up, untimed: the first launches load the module and the graph.
  for (int i = 0; i < 32; ++i) {
    EmptyKernel<<<1, 32, 0, stream>>>(0);
    if (graph_exec != nullptr) cudaGraphLaunch(graph_exec, stream);
  }
  g_total_launches.fetch_add(graph_exec != nullptr ? 64 : 32);
  if (!Check(cudaStreamSynchronize(stream), "warm-up")) return;
  uint64_t cpu = 0;
  uint64_t wall = 0;
  for (uint64_t done = 0; done < launches;) {
    const uint64_t end = std::min(launches, done + batch);
    const uint64_t c0 = ThreadCpuNs();
    const uint64_t w0 = WallNs();
    for (uint64_t i = done; i < end; ++i) {
      switch (api) {
        case Api::kTriple:
          EmptyKernel<<<1, 32, 0, stream>>>(0);
          break;
        case Api::kRuntime:
          cudaLaunchKernel(reinterpret_cast<const void*>(&EmptyKernel),
                           dim3(1), dim3(32), args, 0, stream);
          break;
        case Api::kDriver:
          g_cu_launch_kernel(function, 1, 1, 1, 32, 1, 1, 0, stream, args,
                             nullptr);
          break;
        case Api::kGraph:
          cudaGraphLaunch(graph_exec, stream);
          break;
      }
    }
    cpu += ThreadCpuNs() - c0;
    wall += WallNs() - w0;
    g_total_launches.fetch_add(end - done);
    done = end;
    if (!Check(cudaStreamSynchronize(stream), ApiName(api))) return;
  }
  if (!Check(cudaGetLastError(), ApiName(api))) return;
  if (graph_exec != nullptr) cudaGraphExecDestroy(graph_exec);
  cudaStreamDestroy(stream);
  out->cpu_ns = cpu;
  out->wall_ns = wall;
  out->ok = true;
}

// The Kineto-like configuration: CUPTI activity records of the kinds
// torch.profiler asks for with CUDA activities (kernels, copies, memsets,
// runtime and driver API records, external correlation, synchronization),
// no callbacks; buffers are taken and dropped.
using ActivityEnableFn = CUptiResult (*)(CUpti_ActivityKind);
using RegisterFn = CUptiResult (*)(CUpti_BuffersCallbackRequestFunc,
                                   CUpti_BuffersCallbackCompleteFunc);
using FlushFn = CUptiResult (*)(uint32_t);
FlushFn g_flush = nullptr;

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size,
                              size_t* max_records) {
  *size = 8u << 20;
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t,
                              size_t) {
  free(buffer);
}

bool EnableKinetoLike() {
  void* h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
#ifdef ROOFTRACE_CUPTI_LIBRARY
  if (h == nullptr) h = dlopen(ROOFTRACE_CUPTI_LIBRARY, RTLD_NOW | RTLD_LOCAL);
#endif
  if (h == nullptr) {
    fprintf(stderr,
            "launch_bench: --kineto-like needs libcupti.so.13: %s; put "
            "CUDA 13's CUPTI on LD_LIBRARY_PATH\n",
            dlerror());
    return false;
  }
  auto enable =
      reinterpret_cast<ActivityEnableFn>(dlsym(h, "cuptiActivityEnable"));
  auto reg = reinterpret_cast<RegisterFn>(
      dlsym(h, "cuptiActivityRegisterCallbacks"));
  g_flush = reinterpret_cast<FlushFn>(dlsym(h, "cuptiActivityFlushAll"));
  using ResultFn = CUptiResult (*)(CUptiResult, const char**);
  auto result_string =
      reinterpret_cast<ResultFn>(dlsym(h, "cuptiGetResultString"));
  auto why = [&](CUptiResult r) {
    const char* s = nullptr;
    if (result_string == nullptr || result_string(r, &s) != CUPTI_SUCCESS) {
      s = nullptr;
    }
    return s != nullptr ? s : "?";
  };
  if (enable == nullptr || reg == nullptr) {
    fprintf(stderr, "launch_bench: libcupti lacks the activity API\n");
    return false;
  }
  if (const CUptiResult r = reg(&BufferRequested, &BufferCompleted);
      r != CUPTI_SUCCESS) {
    fprintf(stderr, "launch_bench: cuptiActivityRegisterCallbacks: %s\n",
            why(r));
    return false;
  }
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION}) {
    if (const CUptiResult r = enable(kind); r != CUPTI_SUCCESS) {
      fprintf(stderr, "launch_bench: cuptiActivityEnable(%d): %s\n",
              static_cast<int>(kind), why(r));
      return false;
    }
  }
  return true;
}

bool ParseList(const char* s, std::vector<std::string>* out) {
  out->clear();
  std::string cur;
  for (const char* p = s;; ++p) {
    if (*p == ',' || *p == '\0') {
      if (cur.empty()) return false;
      out->push_back(cur);
      cur.clear();
      if (*p == '\0') break;
    } else {
      cur.push_back(*p);
    }
  }
  return true;
}

int Usage(const char* why) {
  fprintf(stderr,
          "launch_bench: %s\nusage: launch_bench [--launches N] [--threads "
          "1,4] [--apis triple,runtime,driver,graph] [--batch B] "
          "[--kineto-like]\n",
          why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t launches = 20000;
  uint64_t batch = 256;
  std::vector<int> threads = {1, 4};
  std::vector<Api> apis = {Api::kTriple, Api::kRuntime, Api::kDriver,
                           Api::kGraph};
  bool kineto_like = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--kineto-like") {
      kineto_like = true;
    } else if ((a == "--launches" || a == "--batch") && has_value) {
      char* end = nullptr;
      const unsigned long long v = strtoull(argv[++i], &end, 10);
      if (*end != '\0' || v == 0) {
        return Usage((a + " wants a whole number > 0").c_str());
      }
      (a == "--launches" ? launches : batch) = v;
    } else if (a == "--threads" && has_value) {
      std::vector<std::string> list;
      if (!ParseList(argv[++i], &list)) return Usage("bad --threads list");
      threads.clear();
      for (const std::string& t : list) {
        const int n = atoi(t.c_str());
        if (n < 1 || n > 64) return Usage("--threads: each from 1 to 64");
        threads.push_back(n);
      }
    } else if (a == "--apis" && has_value) {
      std::vector<std::string> list;
      if (!ParseList(argv[++i], &list)) return Usage("bad --apis list");
      apis.clear();
      for (const std::string& name : list) {
        bool found = false;
        for (Api api : {Api::kTriple, Api::kRuntime, Api::kDriver,
                        Api::kGraph}) {
          if (name == ApiName(api)) {
            apis.push_back(api);
            found = true;
          }
        }
        if (!found) {
          return Usage(("unknown API '" + name +
                        "' (triple, runtime, driver or graph)")
                           .c_str());
        }
      }
    } else {
      return Usage(("unknown or incomplete argument '" + a + "'").c_str());
    }
  }
  if (kineto_like && !EnableKinetoLike()) return 1;
  if (!Check(cudaFree(nullptr), "CUDA initialization (is there a GPU?)")) {
    return 1;
  }
  for (Api api : apis) {
    if (api == Api::kDriver && g_cu_launch_kernel == nullptr) {
      g_cu_launch_kernel = LoadCuLaunchKernel();
      if (g_cu_launch_kernel == nullptr) {
        fprintf(stderr, "launch_bench: cuLaunchKernel not found in "
                        "libcuda.so.1\n");
        return 1;
      }
    }
    for (int n : threads) {
      std::vector<ThreadResult> results(static_cast<size_t>(n));
      std::vector<std::thread> workers;
      for (int t = 0; t < n; ++t) {
        workers.emplace_back(RunThread, api, launches, batch,
                             &results[static_cast<size_t>(t)]);
      }
      for (std::thread& w : workers) w.join();
      double cpu = 0;
      double wall = 0;
      for (const ThreadResult& r : results) {
        if (!r.ok) return 1;
        cpu += static_cast<double>(r.cpu_ns);
        wall += static_cast<double>(r.wall_ns);
      }
      const double total = static_cast<double>(launches) * n;
      printf(
          "launch api=%s threads=%d launches=%llu cpu_ns_per_launch=%.1f "
          "wall_ns_per_launch=%.1f\n",
          ApiName(api), n, static_cast<unsigned long long>(launches),
          cpu / total, wall / total);
      fflush(stdout);
    }
  }
  if (kineto_like && g_flush != nullptr) g_flush(1);
  printf("launch total=%llu\n",
         static_cast<unsigned long long>(g_total_launches.load()));
  return 0;
}
