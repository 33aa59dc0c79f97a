// libinject's own NVTX handlers, installed through the NVTX export table
// (NVTX_ETID_CALLBACKS) that the application's NVTX headers hand to
// InitializeInjectionNvtx2. No CUPTI involved, so NVTX capture works (and is
// tested) without a GPU.
//
// Push/pop ranges live on a per-thread stack (thread_state.h); a popped
// range becomes one NvtxRange record. Start/end ranges may end on another
// thread, so they are kept in a locked map. Messages and domain names are
// interned; registered strings and domains are handed back to the app as
// handles that are their iids. Handlers are thread-safe and never throw.
#ifndef ROOFTRACE_LIBINJECT_NVTX_INJECTION_H_
#define ROOFTRACE_LIBINJECT_NVTX_INJECTION_H_

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

namespace rooftrace::inject {

class Producer;

// Fills the application's NVTX function tables with our handlers. Returns
// 1 on success, 0 when the export table is unusable (NVTX then makes every
// call a no-op).
int InstallNvtxHandlers(NvtxGetExportTableFunc_t get_export_table);

// The handlers (exposed for tests and the benchmark). Each reaches the
// process producer; with none they do nothing.
namespace nvtx {
int RangePushA(const char* message);
int RangePushEx(const nvtxEventAttributes_t* attributes);
int RangePop();
int DomainRangePushEx(nvtxDomainHandle_t domain,
                      const nvtxEventAttributes_t* attributes);
int DomainRangePop(nvtxDomainHandle_t domain);
nvtxRangeId_t RangeStartA(const char* message);
nvtxRangeId_t DomainRangeStartEx(nvtxDomainHandle_t domain,
                                 const nvtxEventAttributes_t* attributes);
void RangeEnd(nvtxRangeId_t id);
void MarkA(const char* message);
nvtxDomainHandle_t DomainCreateA(const char* name);
nvtxStringHandle_t DomainRegisterStringA(nvtxDomainHandle_t domain,
                                         const char* string);
}  // namespace nvtx

}  // namespace rooftrace::inject

#endif  // ROOFTRACE_LIBINJECT_NVTX_INJECTION_H_
