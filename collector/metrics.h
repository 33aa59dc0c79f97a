// `collect --metrics-listen`: per-kernel-family roofline figures as
// Prometheus metrics on /metrics, from the rows the collector stores
// (a WindowObserver on its WindowSink). Served by prometheus-cpp (Debian's
// prometheus-cpp-dev): its registry writes the exposition format and its
// embedded HTTP server answers scrapes on their own threads.
//
// Series (labels host, device, family, phase):
//   rooftrace_kernel_seconds_total, rooftrace_kernel_launches_total,
//   rooftrace_kernel_flops_total, rooftrace_kernel_dram_bytes_total
//     counters, moved at the end of each store write;
//   rooftrace_window_achieved_flops_per_second,
//   rooftrace_window_dram_bytes_per_second, rooftrace_window_roof_percent
//     gauges of the last ended window (replaced at each window's end);
//   rooftrace_producer_records_dropped_total{kind} and
//   rooftrace_windows_total, rooftrace_window_run_id.
// Cardinality is bounded: `top` families get their own series, admitted
// by kernel time at the end of each write while slots remain; every other
// family's figures go to family="other". A family keeps its series once
// admitted (a counter never moves between series, so sums stay exact and
// every counter only grows).
//
// Security as the collector's listener: loopback unless a non-loopback
// host is named, and that needs the collector's token; with a token every
// scrape must give it as the password of HTTP basic auth.
//
// Thread-safety: On*() come from the collector's server thread; scrapes
// read the registry on the HTTP server's threads (prometheus-cpp's metrics
// are atomic and its families lock).
#ifndef ROOFTRACE_COLLECTOR_METRICS_H_
#define ROOFTRACE_COLLECTOR_METRICS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "base/status.h"
#include "collector/window_sink.h"

namespace prometheus {
class Exposer;
class Registry;
class Counter;
class Gauge;
template <typename T>
class Family;
}  // namespace prometheus

namespace rooftrace {

struct MetricsOptions {
  std::string listen;  // "HOST:PORT" or "PORT" (loopback)
  size_t top = 50;     // families with series of their own
  std::string token;   // required as the basic-auth password if set
};

class CollectorMetrics : public WindowObserver {
 public:
  // Binds `options.listen`; errors name the address and the fix.
  static StatusOr<std::unique_ptr<CollectorMetrics>> Start(
      const MetricsOptions& options);
  ~CollectorMetrics() override;

  // "127.0.0.1:9464": where scrapes go (the port bound when 0 was asked).
  const std::string& bound() const { return bound_; }

  void OnKernel(const ObservedKernel& kernel) override;
  void OnWriteEnd() override;
  void OnWindowEnd(uint64_t index, int64_t run_id,
                   const ImportStats& stats) override;

  // Series per kernel-figure metric now (host x device x family x phase).
  size_t series() const { return counters_.size(); }
  // Whether `family` has series of its own (else it is counted as other).
  bool admitted(const std::string& family) const {
    return admitted_.contains(family);
  }

 private:
  CollectorMetrics() = default;
  struct Sums {
    double seconds = 0, flops = 0, bytes = 0, roof_seconds = 0;
    uint64_t launches = 0;
    void Add(const Sums& o);
  };
  // host, device, family, phase
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  struct Series {
    prometheus::Counter *seconds, *launches, *flops, *bytes;
  };
  // The family label `family` is counted under: its own or "other".
  const std::string& FamilyLabel(const std::string& family);
  Series& SeriesOf(const Key& key);

  MetricsOptions options_;
  std::string bound_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  prometheus::Family<prometheus::Counter>*seconds_ = nullptr,
      *launches_ = nullptr, *flops_ = nullptr, *bytes_ = nullptr,
      *dropped_ = nullptr, *windows_ = nullptr;
  prometheus::Family<prometheus::Gauge>*achieved_ = nullptr,
      *bandwidth_ = nullptr, *roof_ = nullptr, *window_run_ = nullptr;
  std::map<Key, Sums> pending_;   // this write's, by the family's own name
  std::map<Key, Sums> window_;    // this window's, by family label
  std::map<Key, Series> counters_;
  // The last window's gauges: achieved, bandwidth, roof, per series.
  std::vector<prometheus::Gauge*> window_gauges_;
  std::map<std::string, double> family_seconds_;   // kernel time so far
  std::set<std::string> admitted_;
};

}  // namespace rooftrace

#endif  // ROOFTRACE_COLLECTOR_METRICS_H_
