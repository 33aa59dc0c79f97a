#include "libinject/nvtx_injection.h"

#include <pthread.h>

#include <cwchar>
#include <mutex>
#include <string>
#include <unordered_map>

#include "libinject/clock.h"
#include "libinject/process.h"
#include "libinject/thread_state.h"
#include "proto/field_numbers.h"

namespace rooftrace::inject {

namespace {

// Message of an event: its interned id (0 when it has none).
struct Message {
  uint64_t iid = 0;
};

std::string WideToUtf8(const wchar_t* w) {
  std::string out;
  for (; w != nullptr && *w != 0; ++w) {
    const uint32_t c = static_cast<uint32_t>(*w);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

uint64_t InternMessage(Producer* s, const nvtxEventAttributes_t* a) {
  if (a == nullptr) return 0;
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return a->message.ascii != nullptr ? s->Intern(a->message.ascii) : 0;
    case NVTX_MESSAGE_TYPE_UNICODE:
      return a->message.unicode != nullptr
                 ? s->Intern(WideToUtf8(a->message.unicode))
                 : 0;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      return reinterpret_cast<uintptr_t>(a->message.registered);
    default:
      return 0;
  }
}

uint64_t DomainIid(nvtxDomainHandle_t domain) {
  return reinterpret_cast<uintptr_t>(domain);
}

uint32_t ColorOf(const nvtxEventAttributes_t* a) {
  return (a != nullptr && a->colorType == NVTX_COLOR_ARGB) ? a->color : 0;
}

uint32_t CategoryOf(const nvtxEventAttributes_t* a) {
  return a != nullptr ? a->category : 0;
}

int Push(uint64_t domain_iid, uint64_t name_iid, uint32_t category,
         uint32_t color) {
  ThreadState& t = CurrentThread();
  uint32_t depth = 0;  // ranges of the same domain already open
  for (uint32_t i = 0; i < t.frame_count; ++i) {
    if (t.frames[i].domain_iid == domain_iid) ++depth;
  }
  if (t.frame_count >= static_cast<uint32_t>(kMaxNvtxDepth)) {
    ++t.overflow;
    return static_cast<int>(depth + t.overflow - 1);
  }
  Producer* s = CurrentProducer();
  NvtxFrame& f = t.frames[t.frame_count];
  f.range_id = s != nullptr ? s->NextRangeId() : 0;
  f.domain_iid = domain_iid;
  f.name_iid = name_iid;
  f.start_ns = MonotonicNs();
  f.parent_range_id = t.InnermostRangeId();
  f.depth = depth;
  f.category = category;
  f.color_argb = color;
  ++t.frame_count;
  return static_cast<int>(depth);
}

int Pop(uint64_t domain_iid) {
  const uint64_t now = MonotonicNs();
  ThreadState& t = CurrentThread();
  if (t.overflow > 0) {
    --t.overflow;
    return static_cast<int>(kMaxNvtxDepth + t.overflow);
  }
  // Innermost open range of this domain; ranges of other domains opened
  // inside it stay open (NVTX stacks are per domain).
  int index = -1;
  for (int i = static_cast<int>(t.frame_count) - 1; i >= 0; --i) {
    if (t.frames[i].domain_iid == domain_iid) {
      index = i;
      break;
    }
  }
  if (index < 0) return -1;  // NVTX: pop without push
  const NvtxFrame f = t.frames[index];
  for (uint32_t i = static_cast<uint32_t>(index) + 1; i < t.frame_count; ++i) {
    t.frames[i - 1] = t.frames[i];
  }
  --t.frame_count;
  Producer* s = CurrentProducer();
  if (s != nullptr && f.range_id != 0) {
    NvtxRangeRecord r{};
    r.range_id = f.range_id;
    r.domain_iid = f.domain_iid;
    r.name_iid = f.name_iid;
    r.start_ns = f.start_ns;
    r.end_ns = now;
    r.parent_range_id = f.parent_range_id;
    r.thread_id = t.tid;
    r.end_thread_id = t.tid;
    r.kind = wire::enums::kRangePushPop;
    r.depth = f.depth;
    r.category = f.category;
    r.color_argb = f.color_argb;
    s->EmitRange(r);
  }
  return static_cast<int>(f.depth);
}

// Start/end ranges: may end on another thread.
struct OpenRange {
  uint64_t domain_iid;
  uint64_t name_iid;
  uint64_t start_ns;
  uint32_t thread_id;
  uint32_t category;
  uint32_t color;
};
std::mutex g_open_mu;
std::unordered_map<uint64_t, OpenRange>* g_open_ranges =
    new std::unordered_map<uint64_t, OpenRange>();  // never destroyed

// fork() while another thread holds g_open_mu would leave it locked in the
// child forever (only the forking thread exists there): the lock is taken
// around fork, and the child starts with no open range (the parent's belong
// to the parent's producer; the child gets its own).
void OpenRangesForkPrepare() { g_open_mu.lock(); }
void OpenRangesForkParent() { g_open_mu.unlock(); }
void OpenRangesForkChild() {
  g_open_mu.unlock();
  g_open_ranges->clear();
}

// Registered before the table is first used (no fork can find it locked
// before that).
void RegisterOpenRangesForkHandlers() {
  static const bool registered =
      pthread_atfork(&OpenRangesForkPrepare, &OpenRangesForkParent,
                     &OpenRangesForkChild) == 0;
  (void)registered;
}

nvtxRangeId_t Start(uint64_t domain_iid, uint64_t name_iid, uint32_t category,
                    uint32_t color) {
  Producer* s = CurrentProducer();
  if (s == nullptr) return 0;
  const uint64_t id = s->NextRangeId();
  OpenRange r{domain_iid, name_iid, MonotonicNs(), CurrentThread().tid,
              category, color};
  RegisterOpenRangesForkHandlers();
  std::lock_guard<std::mutex> lock(g_open_mu);
  (*g_open_ranges)[id] = r;
  return id;
}

void Mark(uint64_t domain_iid, uint64_t name_iid) {
  Producer* s = CurrentProducer();
  if (s == nullptr) return;
  NvtxMarkRecord m{};
  m.domain_iid = domain_iid;
  m.name_iid = name_iid;
  m.timestamp_ns = MonotonicNs();
  m.thread_id = CurrentThread().tid;
  s->EmitMark(m);
}

uint64_t InternA(const char* text) {
  Producer* s = CurrentProducer();
  return (s != nullptr && text != nullptr) ? s->Intern(text) : 0;
}

uint64_t InternW(const wchar_t* text) {
  Producer* s = CurrentProducer();
  return (s != nullptr && text != nullptr) ? s->Intern(WideToUtf8(text)) : 0;
}

uint64_t InternEx(const nvtxEventAttributes_t* a) {
  Producer* s = CurrentProducer();
  return s != nullptr ? InternMessage(s, a) : 0;
}

// ---- the handlers as NVTX calls them

void NVTX_API HMarkEx(const nvtxEventAttributes_t* a) { Mark(0, InternEx(a)); }
void NVTX_API HMarkA(const char* m) { Mark(0, InternA(m)); }
void NVTX_API HMarkW(const wchar_t* m) { Mark(0, InternW(m)); }
nvtxRangeId_t NVTX_API HRangeStartEx(const nvtxEventAttributes_t* a) {
  return Start(0, InternEx(a), CategoryOf(a), ColorOf(a));
}
nvtxRangeId_t NVTX_API HRangeStartA(const char* m) {
  return Start(0, InternA(m), 0, 0);
}
nvtxRangeId_t NVTX_API HRangeStartW(const wchar_t* m) {
  return Start(0, InternW(m), 0, 0);
}
void NVTX_API HRangeEnd(nvtxRangeId_t id) { nvtx::RangeEnd(id); }
int NVTX_API HRangePushEx(const nvtxEventAttributes_t* a) {
  return Push(0, InternEx(a), CategoryOf(a), ColorOf(a));
}
int NVTX_API HRangePushA(const char* m) { return Push(0, InternA(m), 0, 0); }
int NVTX_API HRangePushW(const wchar_t* m) { return Push(0, InternW(m), 0, 0); }
int NVTX_API HRangePop() { return Pop(0); }
void NVTX_API HNameCategoryA(uint32_t, const char*) {}
void NVTX_API HNameCategoryW(uint32_t, const wchar_t*) {}
void NVTX_API HNameOsThreadA(uint32_t, const char*) {}
void NVTX_API HNameOsThreadW(uint32_t, const wchar_t*) {}

void NVTX_API HDomainMarkEx(nvtxDomainHandle_t d,
                            const nvtxEventAttributes_t* a) {
  Mark(DomainIid(d), InternEx(a));
}
nvtxRangeId_t NVTX_API HDomainRangeStartEx(nvtxDomainHandle_t d,
                                           const nvtxEventAttributes_t* a) {
  return Start(DomainIid(d), InternEx(a), CategoryOf(a), ColorOf(a));
}
void NVTX_API HDomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) {
  nvtx::RangeEnd(id);
}
int NVTX_API HDomainRangePushEx(nvtxDomainHandle_t d,
                                const nvtxEventAttributes_t* a) {
  return Push(DomainIid(d), InternEx(a), CategoryOf(a), ColorOf(a));
}
int NVTX_API HDomainRangePop(nvtxDomainHandle_t d) { return Pop(DomainIid(d)); }
nvtxResourceHandle_t NVTX_API HDomainResourceCreate(nvtxDomainHandle_t,
                                                    nvtxResourceAttributes_t*) {
  // Resources are not recorded; a non-null handle keeps apps happy.
  static char dummy;
  return reinterpret_cast<nvtxResourceHandle_t>(&dummy);
}
void NVTX_API HDomainResourceDestroy(nvtxResourceHandle_t) {}
void NVTX_API HDomainNameCategoryA(nvtxDomainHandle_t, uint32_t, const char*) {}
void NVTX_API HDomainNameCategoryW(nvtxDomainHandle_t, uint32_t,
                                   const wchar_t*) {}
nvtxStringHandle_t NVTX_API HDomainRegisterStringA(nvtxDomainHandle_t,
                                                   const char* s) {
  return reinterpret_cast<nvtxStringHandle_t>(
      static_cast<uintptr_t>(InternA(s)));
}
nvtxStringHandle_t NVTX_API HDomainRegisterStringW(nvtxDomainHandle_t,
                                                   const wchar_t* s) {
  return reinterpret_cast<nvtxStringHandle_t>(
      static_cast<uintptr_t>(InternW(s)));
}
nvtxDomainHandle_t NVTX_API HDomainCreateA(const char* name) {
  return reinterpret_cast<nvtxDomainHandle_t>(
      static_cast<uintptr_t>(InternA(name)));
}
nvtxDomainHandle_t NVTX_API HDomainCreateW(const wchar_t* name) {
  return reinterpret_cast<nvtxDomainHandle_t>(
      static_cast<uintptr_t>(InternW(name)));
}
void NVTX_API HDomainDestroy(nvtxDomainHandle_t) {}
void NVTX_API HInitialize(const void*) {}

template <typename Fn>
void Set(NvtxFunctionTable table, unsigned int size, unsigned int cbid, Fn fn) {
  if (table != nullptr && cbid < size && table[cbid] != nullptr) {
    *table[cbid] = reinterpret_cast<NvtxFunctionPointer>(fn);
  }
}

}  // namespace

namespace nvtx {
int RangePushA(const char* m) { return HRangePushA(m); }
int RangePushEx(const nvtxEventAttributes_t* a) { return HRangePushEx(a); }
int RangePop() { return HRangePop(); }
int DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return HDomainRangePushEx(d, a);
}
int DomainRangePop(nvtxDomainHandle_t d) { return HDomainRangePop(d); }
nvtxRangeId_t RangeStartA(const char* m) { return HRangeStartA(m); }
nvtxRangeId_t DomainRangeStartEx(nvtxDomainHandle_t d,
                                 const nvtxEventAttributes_t* a) {
  return HDomainRangeStartEx(d, a);
}
void RangeEnd(nvtxRangeId_t id) {
  const uint64_t now = MonotonicNs();
  OpenRange r;
  {
    std::lock_guard<std::mutex> lock(g_open_mu);
    auto it = g_open_ranges->find(id);
    if (it == g_open_ranges->end()) return;
    r = it->second;
    g_open_ranges->erase(it);
  }
  Producer* s = CurrentProducer();
  if (s == nullptr) return;
  NvtxRangeRecord rec{};
  rec.range_id = id;
  rec.domain_iid = r.domain_iid;
  rec.name_iid = r.name_iid;
  rec.start_ns = r.start_ns;
  rec.end_ns = now;
  rec.thread_id = r.thread_id;
  rec.end_thread_id = CurrentThread().tid;
  rec.kind = wire::enums::kRangeStartEnd;
  rec.category = r.category;
  rec.color_argb = r.color;
  s->EmitRange(rec);
}
void MarkA(const char* m) { HMarkA(m); }
nvtxDomainHandle_t DomainCreateA(const char* name) {
  return HDomainCreateA(name);
}
nvtxStringHandle_t DomainRegisterStringA(nvtxDomainHandle_t d,
                                         const char* s) {
  return HDomainRegisterStringA(d, s);
}
}  // namespace nvtx

int InstallNvtxHandlers(NvtxGetExportTableFunc_t get_export_table) {
  if (get_export_table == nullptr) return 0;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(
      get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->GetModuleFunctionTable == nullptr) {
    return 0;
  }
  NvtxFunctionTable core = nullptr;
  unsigned int core_size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core,
                                         &core_size) ||
      core == nullptr) {
    return 0;
  }
  Set(core, core_size, NVTX_CBID_CORE_MarkEx, &HMarkEx);
  Set(core, core_size, NVTX_CBID_CORE_MarkA, &HMarkA);
  Set(core, core_size, NVTX_CBID_CORE_MarkW, &HMarkW);
  Set(core, core_size, NVTX_CBID_CORE_RangeStartEx, &HRangeStartEx);
  Set(core, core_size, NVTX_CBID_CORE_RangeStartA, &HRangeStartA);
  Set(core, core_size, NVTX_CBID_CORE_RangeStartW, &HRangeStartW);
  Set(core, core_size, NVTX_CBID_CORE_RangeEnd, &HRangeEnd);
  Set(core, core_size, NVTX_CBID_CORE_RangePushEx, &HRangePushEx);
  Set(core, core_size, NVTX_CBID_CORE_RangePushA, &HRangePushA);
  Set(core, core_size, NVTX_CBID_CORE_RangePushW, &HRangePushW);
  Set(core, core_size, NVTX_CBID_CORE_RangePop, &HRangePop);
  Set(core, core_size, NVTX_CBID_CORE_NameCategoryA, &HNameCategoryA);
  Set(core, core_size, NVTX_CBID_CORE_NameCategoryW, &HNameCategoryW);
  Set(core, core_size, NVTX_CBID_CORE_NameOsThreadA, &HNameOsThreadA);
  Set(core, core_size, NVTX_CBID_CORE_NameOsThreadW, &HNameOsThreadW);

  NvtxFunctionTable core2 = nullptr;
  unsigned int core2_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2,
                                        &core2_size) &&
      core2 != nullptr) {
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainMarkEx, &HDomainMarkEx);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx,
        &HDomainRangeStartEx);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, &HDomainRangeEnd);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx,
        &HDomainRangePushEx);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &HDomainRangePop);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainResourceCreate,
        &HDomainResourceCreate);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainResourceDestroy,
        &HDomainResourceDestroy);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryA,
        &HDomainNameCategoryA);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryW,
        &HDomainNameCategoryW);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA,
        &HDomainRegisterStringA);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW,
        &HDomainRegisterStringW);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &HDomainCreateA);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, &HDomainCreateW);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, &HDomainDestroy);
    Set(core2, core2_size, NVTX_CBID_CORE2_Initialize, &HInitialize);
  }
  // Tell NVTX which tool version attached (required by the protocol).
  const auto* version = static_cast<const NvtxExportTableVersionInfo*>(
      get_export_table(NVTX_ETID_VERSIONINFO));
  if (version != nullptr && version->SetInjectionNvtxVersion != nullptr) {
    version->SetInjectionNvtxVersion(NVTX_VERSION);
  }
  return 1;
}

}  // namespace rooftrace::inject
