#include "libinject/kernel_filter.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>

namespace rooftrace::inject {

namespace {

// "_Z5scalePffi" -> "scale(float*, float, int)"; "" when `name` is not a
// mangled C++ name.
std::string Demangle(const std::string& name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string result = (status == 0 && out != nullptr) ? out : "";
  std::free(out);
  return result;
}

Status Compile(const char* variable, const std::string& pattern, regex_t* re) {
  const int rc = regcomp(re, pattern.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc == 0) return OkStatus();
  char why[256];
  regerror(rc, re, why, sizeof why);
  return InvalidArgument(
      std::string(variable) + "='" + pattern +
      "' is not a valid POSIX extended regular expression (" + why +
      "): fix the pattern, e.g. " + variable + "='gemm|attention'");
}

}  // namespace

KernelFilter::Regex::~Regex() {
  if (compiled) regfree(&re);
}

bool KernelFilter::Regex::Search(const std::string& text) const {
  // regexec fails only when it runs out of memory (REG_ESPACE): treated as
  // no match.
  return regexec(&re, text.c_str(), 0, nullptr, 0) == 0;
}

KernelFilter::~KernelFilter() = default;

StatusOr<std::unique_ptr<KernelFilter>> KernelFilter::Create(
    const KernelFilterConfig& config) {
  if (config.sample_every == 0) {
    return InvalidArgument("sample_every must be at least 1");
  }
  std::unique_ptr<KernelFilter> f(new KernelFilter(config));
  const struct {
    const char* variable;
    const std::string& pattern;
    Regex* regex;
  } patterns[] = {
      {"ROOFTRACE_KERNEL_INCLUDE", config.kernel_include, &f->include_},
      {"ROOFTRACE_KERNEL_EXCLUDE", config.kernel_exclude, &f->exclude_},
      {"ROOFTRACE_NVTX_INCLUDE", config.nvtx_include, &f->nvtx_},
  };
  for (const auto& p : patterns) {
    if (p.pattern.empty()) continue;
    RT_RETURN_IF_ERROR(Compile(p.variable, p.pattern, &p.regex->re));
    p.regex->compiled = true;
  }
  if (config.exclude_communication) {
    RT_RETURN_IF_ERROR(Compile("kCommunicationPattern", kCommunicationPattern,
                               &f->communication_.re));
    f->communication_.compiled = true;
  }
  f->any_name_condition_ = f->include_.compiled || f->exclude_.compiled ||
                           f->communication_.compiled;
  if (config.signature_first != 0 || config.signature_every != 0) {
    f->signature_slots_.reset(new SignatureSlot[kSignatureSlots]);
  }
  return f;
}

Selection KernelFilter::NameVerdict(std::string_view name) {
  std::lock_guard<std::mutex> lock(name_cache_mu_);
  auto it = name_cache_.find(name);
  if (it != name_cache_.end()) return it->second;
  std::string key(name);
  // A pattern matches when it is found in the mangled or the demangled name
  // ("gemm" and "scale\(float" both work).
  const std::string demangled = Demangle(key);
  auto found = [&](const Regex& re) {
    return re.Search(key) || (!demangled.empty() && re.Search(demangled));
  };
  Selection verdict = Selection::kSelected;
  if ((include_.compiled && !found(include_)) ||
      (exclude_.compiled && found(exclude_))) {
    verdict = Selection::kFilteredName;
  } else if (communication_.compiled && found(communication_)) {
    verdict = Selection::kFilteredCommunication;
  }
  name_cache_.emplace(std::move(key), verdict);
  return verdict;
}

bool KernelFilter::NvtxMatches(std::string_view path) const {
  if (path.empty()) return false;
  // NVTX paths change per launch: not cached. The copy reuses this
  // thread's buffer.
  thread_local std::string text;
  text.assign(path);
  return nvtx_.Search(text);
}

uint64_t KernelFilter::CountSignatureLaunch(uint64_t signature,
                                           bool* unsettled) {
  // Linear probing from the signature's hash; a free slot is claimed with
  // a compare-and-swap, so two threads seeing a new signature agree.
  for (size_t i = 0; i < kSignatureSlots; ++i) {
    SignatureSlot& slot =
        signature_slots_[(signature + i) & (kSignatureSlots - 1)];
    uint64_t key = slot.key.load(std::memory_order_acquire);
    if (key == 0) {
      if (slot.key.compare_exchange_strong(key, signature,
                                           std::memory_order_acq_rel)) {
        signatures_.fetch_add(1, std::memory_order_relaxed);
        key = signature;
      }
    }
    if (key == signature) {
      *unsettled = slot.unsettled.load(std::memory_order_relaxed);
      return slot.launches.fetch_add(1, std::memory_order_relaxed) + 1;
    }
  }
  return 0;
}

bool KernelFilter::MarkUnsettled(uint64_t signature) {
  if (signature_slots_ == nullptr || signature == 0) return false;
  for (size_t i = 0; i < kSignatureSlots; ++i) {
    SignatureSlot& slot =
        signature_slots_[(signature + i) & (kSignatureSlots - 1)];
    const uint64_t key = slot.key.load(std::memory_order_acquire);
    if (key == 0) return false;
    if (key != signature) continue;
    if (slot.unsettled.exchange(true, std::memory_order_relaxed)) return false;
    signatures_unsettled_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  return false;
}

bool KernelFilter::SignatureSampled(uint64_t ordinal, bool unsettled) const {
  const uint64_t first = config_.signature_first;
  if (ordinal <= first) return true;
  uint64_t every = config_.signature_every;
  if (unsettled && every != 0) every = std::max<uint64_t>(1, every / 10);
  return every != 0 && (ordinal - first) % every == 0;
}

Selection KernelFilter::Decide(const LaunchInfo& launch) {
  if (launch.in_graph_or_capture) {
    filtered_graph_.fetch_add(1, std::memory_order_relaxed);
    return Selection::kFilteredGraph;
  }
  if (any_name_condition_) {
    const Selection verdict = NameVerdict(launch.kernel_name);
    if (verdict == Selection::kFilteredName) {
      filtered_name_.fetch_add(1, std::memory_order_relaxed);
      return verdict;
    }
    if (verdict == Selection::kFilteredCommunication) {
      filtered_communication_.fetch_add(1, std::memory_order_relaxed);
      return verdict;
    }
  }
  if (nvtx_.compiled && !NvtxMatches(launch.nvtx_path)) {
    filtered_nvtx_.fetch_add(1, std::memory_order_relaxed);
    return Selection::kFilteredNvtx;
  }
  if (signature_slots_ != nullptr && launch.signature != 0) {
    bool unsettled = false;
    const uint64_t ordinal = CountSignatureLaunch(launch.signature, &unsettled);
    if (ordinal != 0 && !SignatureSampled(ordinal, unsettled)) {
      filtered_signature_.fetch_add(1, std::memory_order_relaxed);
      return Selection::kFilteredSignature;
    }
  }
  const uint64_t index = candidates_.fetch_add(1, std::memory_order_relaxed);
  if (index % config_.sample_every != 0) {
    filtered_sample_.fetch_add(1, std::memory_order_relaxed);
    return Selection::kFilteredSample;
  }
  if (config_.max_kernels == 0) {
    selected_.fetch_add(1, std::memory_order_relaxed);
    return Selection::kSelected;
  }
  // Claim a slot; none is left once the limit is reached.
  uint64_t n = selected_.load(std::memory_order_relaxed);
  do {
    if (n >= config_.max_kernels) {
      filtered_max_.fetch_add(1, std::memory_order_relaxed);
      return Selection::kFilteredMax;
    }
  } while (
      !selected_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
  return Selection::kSelected;
}

FilterStats KernelFilter::Stats() const {
  FilterStats s;
  s.selected = selected_.load(std::memory_order_relaxed);
  s.filtered_name = filtered_name_.load(std::memory_order_relaxed);
  s.filtered_communication =
      filtered_communication_.load(std::memory_order_relaxed);
  s.filtered_nvtx = filtered_nvtx_.load(std::memory_order_relaxed);
  s.filtered_sample = filtered_sample_.load(std::memory_order_relaxed);
  s.filtered_max = filtered_max_.load(std::memory_order_relaxed);
  s.filtered_graph = filtered_graph_.load(std::memory_order_relaxed);
  s.filtered_signature = filtered_signature_.load(std::memory_order_relaxed);
  s.signatures = signatures_.load(std::memory_order_relaxed);
  s.signatures_unsettled =
      signatures_unsettled_.load(std::memory_order_relaxed);
  return s;
}

bool KernelFilter::Exhausted() const {
  return config_.max_kernels != 0 &&
         selected_.load(std::memory_order_relaxed) >= config_.max_kernels;
}

namespace {

// FNV-1a, 64 bits: stable across runs and processes, so a signature means
// the same launch shape everywhere.
struct Fnv {
  uint64_t h = 0xcbf29ce484222325ull;
  void Bytes(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) {
      h ^= b[i];
      h *= 0x100000001b3ull;
    }
  }
  template <typename T>
  void Value(T v) {
    Bytes(&v, sizeof v);
  }
};

}  // namespace

uint64_t KernelSignature(std::string_view name, const uint32_t grid[3],
                         const uint32_t block[3], uint32_t dynamic_smem,
                         const GemmRecord* gemm) {
  Fnv f;
  f.Bytes(name.data(), name.size());
  for (int i = 0; i < 3; ++i) f.Value(grid[i]);
  for (int i = 0; i < 3; ++i) f.Value(block[i]);
  f.Value(dynamic_smem);
  if (gemm != nullptr) {
    for (int64_t v : {gemm->m, gemm->n, gemm->k, gemm->batch}) f.Value(v);
    for (int32_t v : {gemm->a_type, gemm->b_type, gemm->c_type, gemm->d_type,
                      gemm->compute_type}) {
      f.Value(v);
    }
    f.Value(gemm->trans_a);
    f.Value(gemm->trans_b);
  }
  return f.h == 0 ? 1 : f.h;
}

}  // namespace rooftrace::inject
