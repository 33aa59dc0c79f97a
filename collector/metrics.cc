#include "collector/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <exception>
#include <utility>

namespace rooftrace {
namespace {

// The host part of "HOST:PORT" ("" for a bare port).
std::string HostOf(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  return colon == std::string::npos ? "" : listen.substr(0, colon);
}

bool IsLoopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1" ||
         host == "[::1]" || host.rfind("127.", 0) == 0;
}

template <typename T>
prometheus::Family<T>* Build(prometheus::detail::Builder<T> builder,
                             const char* name, const char* help,
                             prometheus::Registry* registry) {
  return &builder.Name(name).Help(help).Register(*registry);
}

}  // namespace

void CollectorMetrics::Sums::Add(const Sums& o) {
  seconds += o.seconds;
  flops += o.flops;
  bytes += o.bytes;
  roof_seconds += o.roof_seconds;
  launches += o.launches;
}

StatusOr<std::unique_ptr<CollectorMetrics>> CollectorMetrics::Start(
    const MetricsOptions& options) {
  std::unique_ptr<CollectorMetrics> m(new CollectorMetrics());
  m->options_ = options;
  std::string host = HostOf(options.listen);
  const std::string port = options.listen.substr(
      options.listen.rfind(':') == std::string::npos
          ? 0
          : options.listen.rfind(':') + 1);
  if (port.empty() || port.find_first_not_of("0123456789") !=
                          std::string::npos) {
    return InvalidArgument("--metrics-listen '" + options.listen +
                           "': give HOST:PORT or PORT, e.g. 127.0.0.1:9464");
  }
  if (host.empty()) host = "127.0.0.1";
  if (!IsLoopback(host) && options.token.empty()) {
    return InvalidArgument(
        "--metrics-listen " + options.listen +
        ": a non-loopback address needs the collector's token (scrapes "
        "give it as the basic-auth password): pass --token-file or set "
        "ROOFTRACE_TOKEN, or listen on 127.0.0.1");
  }
  if (options.top == 0) {
    return InvalidArgument("--metrics-top 0: give at least 1 family");
  }
  m->registry_ = std::make_shared<prometheus::Registry>();
  prometheus::Registry* r = m->registry_.get();
  m->seconds_ = Build(prometheus::BuildCounter(),
                      "rooftrace_kernel_seconds_total",
                      "GPU time of the family's kernels", r);
  m->launches_ = Build(prometheus::BuildCounter(),
                       "rooftrace_kernel_launches_total",
                       "kernels of the family executed", r);
  m->flops_ = Build(prometheus::BuildCounter(), "rooftrace_kernel_flops_total",
                    "FLOPs of the family's kernels (known ones)", r);
  m->bytes_ = Build(prometheus::BuildCounter(),
                    "rooftrace_kernel_dram_bytes_total",
                    "DRAM bytes of the family's kernels (known ones)", r);
  m->dropped_ = Build(prometheus::BuildCounter(),
                      "rooftrace_producer_records_dropped_total",
                      "records the producers lost before sending", r);
  m->windows_ = Build(prometheus::BuildCounter(), "rooftrace_windows_total",
                      "windows (runs) the collector has stored", r);
  m->achieved_ = Build(prometheus::BuildGauge(),
                       "rooftrace_window_achieved_flops_per_second",
                       "FLOPs over kernel time in the last ended window", r);
  m->bandwidth_ = Build(prometheus::BuildGauge(),
                        "rooftrace_window_dram_bytes_per_second",
                        "DRAM bytes over kernel time in the last window", r);
  m->roof_ = Build(prometheus::BuildGauge(), "rooftrace_window_roof_percent",
                   "kernel-time-weighted % of roof in the last window", r);
  m->window_run_ = Build(prometheus::BuildGauge(), "rooftrace_window_run_id",
                         "store run id of the last ended window", r);
  // civetweb (inside prometheus-cpp) reports a bind failure by throwing:
  // caught here, at the library's boundary.
  try {
    m->exposer_ = std::make_unique<prometheus::Exposer>(
        (host.find(':') != std::string::npos && host[0] != '['
             ? "[" + host + "]"
             : host) +
            ":" + port,
        2);
  } catch (const std::exception& e) {
    return InvalidArgument("--metrics-listen " + options.listen +
                           ": cannot listen (" + e.what() +
                           "): pick a free port or an address of this host");
  }
  if (!options.token.empty()) {
    const std::string token = options.token;
    m->exposer_->RegisterAuth(
        [token](const std::string&, const std::string& password) {
          return password == token;
        },
        "rooftrace");
  }
  m->exposer_->RegisterCollectable(m->registry_);
  const std::vector<int> ports = m->exposer_->GetListeningPorts();
  m->bound_ = host + ":" + std::to_string(ports.empty() ? 0 : ports.front());
  return m;
}

CollectorMetrics::~CollectorMetrics() = default;

void CollectorMetrics::OnKernel(const ObservedKernel& k) {
  Sums s;
  s.seconds = static_cast<double>(k.row->duration_ns) * 1e-9;
  s.launches = 1;
  s.flops = static_cast<double>(k.row->flops.value_or(0));
  s.bytes = static_cast<double>(k.row->dram_bytes.value_or(0));
  s.roof_seconds = k.row->fraction_of_roof.value_or(0) * s.seconds;
  pending_[Key(std::string(k.host), std::string(k.device),
               std::string(k.family), std::string(k.phase))]
      .Add(s);
}

const std::string& CollectorMetrics::FamilyLabel(const std::string& family) {
  static const std::string kOther = "other";
  return admitted_.contains(family) ? family : kOther;
}

CollectorMetrics::Series& CollectorMetrics::SeriesOf(const Key& key) {
  auto it = counters_.find(key);
  if (it != counters_.end()) return it->second;
  const prometheus::Labels labels = {{"host", std::get<0>(key)},
                                     {"device", std::get<1>(key)},
                                     {"family", std::get<2>(key)},
                                     {"phase", std::get<3>(key)}};
  Series s{&seconds_->Add(labels), &launches_->Add(labels),
           &flops_->Add(labels), &bytes_->Add(labels)};
  return counters_.emplace(key, s).first->second;
}

void CollectorMetrics::OnWriteEnd() {
  if (pending_.empty()) return;
  // Admission by kernel time so far, while slots remain.
  for (const auto& [key, sums] : pending_) {
    family_seconds_[std::get<2>(key)] += sums.seconds;
  }
  if (admitted_.size() < options_.top) {
    std::vector<std::pair<double, std::string>> ranked;
    for (const auto& [family, seconds] : family_seconds_) {
      if (!admitted_.contains(family)) ranked.emplace_back(-seconds, family);
    }
    std::sort(ranked.begin(), ranked.end());
    for (const auto& [neg, family] : ranked) {
      if (admitted_.size() >= options_.top) break;
      admitted_.insert(family);
    }
  }
  for (const auto& [key, sums] : pending_) {
    const Key labelled(std::get<0>(key), std::get<1>(key),
                       FamilyLabel(std::get<2>(key)), std::get<3>(key));
    Series& s = SeriesOf(labelled);
    s.seconds->Increment(sums.seconds);
    s.launches->Increment(static_cast<double>(sums.launches));
    s.flops->Increment(sums.flops);
    s.bytes->Increment(sums.bytes);
    window_[labelled].Add(sums);
  }
  pending_.clear();
}

void CollectorMetrics::OnWindowEnd(uint64_t, int64_t run_id,
                                   const ImportStats& stats) {
  OnWriteEnd();
  // The gauges describe one window: the last one's series go, so a family
  // absent now leaves no stale figure behind.
  for (size_t i = 0; i < window_gauges_.size(); i += 3) {
    achieved_->Remove(window_gauges_[i]);
    bandwidth_->Remove(window_gauges_[i + 1]);
    roof_->Remove(window_gauges_[i + 2]);
  }
  window_gauges_.clear();
  for (const auto& [key, sums] : window_) {
    if (sums.seconds <= 0) continue;
    const prometheus::Labels labels = {{"host", std::get<0>(key)},
                                       {"device", std::get<1>(key)},
                                       {"family", std::get<2>(key)},
                                       {"phase", std::get<3>(key)}};
    prometheus::Gauge& a = achieved_->Add(labels);
    a.Set(sums.flops / sums.seconds);
    prometheus::Gauge& b = bandwidth_->Add(labels);
    b.Set(sums.bytes / sums.seconds);
    prometheus::Gauge& f = roof_->Add(labels);
    f.Set(100.0 * sums.roof_seconds / sums.seconds);
    window_gauges_.insert(window_gauges_.end(), {&a, &b, &f});
  }
  window_.clear();
  for (int kind = 1; kind < kNumRecordKinds; ++kind) {
    const uint64_t n = stats.producer_dropped[kind];
    prometheus::Counter& c =
        dropped_->Add({{"kind", std::string(RecordKindKey(kind))}});
    if (n > 0) c.Increment(static_cast<double>(n));
  }
  windows_->Add({}).Increment();
  window_run_->Add({}).Set(static_cast<double>(run_id));
}

}  // namespace rooftrace
