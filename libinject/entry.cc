// The library's entry points: the CUDA injection hook, the NVTX injection
// hook and the LD_PRELOAD constructor. Whatever combination loads the
// library, the process producer starts once (StartProcessProducer, process.h).
// Nothing here throws or writes to stdout.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "libinject/log.h"
#include "libinject/nvtx_injection.h"
#include "libinject/ops_route.h"
#include "libinject/process.h"
#include "libinject/tracer.h"

using rooftrace::inject::EntryRoute;
using rooftrace::inject::Producer;
using rooftrace::inject::StartOnFirstRecord;
using rooftrace::inject::StartProcessProducer;

extern "C" {

// Called by the CUDA driver at cuInit when CUDA_INJECTION64_PATH names us.
__attribute__((visibility("default"))) int InitializeInjection() {
  StartProcessProducer(EntryRoute::kCudaInjection);
  return 1;
}

// Called by the application's NVTX on its first NVTX call when
// NVTX_INJECTION64_PATH names us. Returning 0 makes NVTX calls no-ops.
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  Producer* producer = StartProcessProducer(EntryRoute::kNvtxInjection);
  if (producer == nullptr) return 0;
  // ROOFTRACE_TRACE_OFF=nvtx (measuring only): NVTX calls stay no-ops.
  if (!producer->config().parts.nvtx) return 0;
  return rooftrace::inject::InstallNvtxHandlers(get_export_table);
}

// The ops route (ops_route.h): the injected Python startup hook hands over
// a window of torch operators through ctypes. Returns the operators
// accepted, or -1 when there is no producer (disabled, standing aside), so
// that the hook turns itself off. Never throws; safe from any thread.
__attribute__((visibility("default"))) long long RooftraceSubmitOps(
    const char* buf, size_t len) {
  Producer* producer = rooftrace::inject::CurrentProducer();
  if (producer == nullptr) return -1;
  const rooftrace::inject::OpsSubmitted done =
      rooftrace::inject::SubmitOps(producer, buf, len);
  if (done.malformed > 0) {
    producer->Warn("ops route: " + std::to_string(done.malformed) +
                   " operator records were malformed and skipped");
  }
  return static_cast<long long>(done.accepted);
}

}  // extern "C"

namespace {
// LD_PRELOAD: the cuBLAS hooks are live as soon as we are loaded. The
// producer starts now when the host links CUDA, else with its first record.
__attribute__((constructor)) void RooftracePreloadConstructor() {
  // Only when preloaded: a dlopen() by CUDA or NVTX goes through the
  // routes above instead.
  const char* preload = getenv("LD_PRELOAD");
  Dl_info self{};
  if (preload == nullptr ||
      dladdr(reinterpret_cast<void*>(&RooftracePreloadConstructor), &self) ==
          0 ||
      self.dli_fname == nullptr) {
    return;
  }
  const char* base = strrchr(self.dli_fname, '/');
  base = base != nullptr ? base + 1 : self.dli_fname;
  if (strstr(preload, base) == nullptr) return;
  if (rooftrace::inject::HostLinksCuda()) {
    // CUDA is linked: start now so CUPTI sees the first kernels.
    StartProcessProducer(EntryRoute::kPreload);
  } else {
    StartOnFirstRecord();
  }
}
}  // namespace
