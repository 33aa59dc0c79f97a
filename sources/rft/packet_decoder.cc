#include "sources/rft/packet_decoder.h"

#include <cstring>

#include "proto/field_numbers.h"
#include "proto/wire_reader.h"

namespace rooftrace {
namespace {

namespace f = wire::fields;
using wire::WireReader;

// libprotobuf's conversions of a varint to the declared field type.
inline uint32_t U32(uint64_t v) { return static_cast<uint32_t>(v); }
inline int32_t I32(uint64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(v));
}
inline int64_t I64(uint64_t v) { return static_cast<int64_t>(v); }

// Reads one message whose fields are all varints but for those `on_other`
// takes: `on_varint(field, value)` returns false for a field it does not
// know; `on_other(field, wire_type, bytes)` likewise. Every unknown field,
// and every known one sent with the wrong wire type, counts once (as
// libprotobuf keeps them in the message's unknown field set).
template <typename OnVarint, typename OnOther>
bool ReadMessage(std::string_view bytes, int depth, uint64_t* unknown,
                 OnVarint on_varint, OnOther on_other) {
  WireReader r(bytes, depth);
  uint32_t field, wt;
  uint64_t v = 0;
  std::string_view b;
  while (r.Next(&field, &wt, &v, &b)) {
    const bool known = wt == wire::kWireVarint ? on_varint(field, v)
                                               : on_other(field, wt, b);
    if (!known) ++*unknown;
  }
  return r.ok();
}

constexpr auto kNoOther = [](uint32_t, uint32_t, std::string_view) {
  return false;
};

bool DecodeKernel(std::string_view bytes, int depth, uint64_t* unknown,
                  KernelRecord* k) {
  namespace kf = f::kernel;
  return ReadMessage(
      bytes, depth, unknown,
      [k](uint32_t field, uint64_t v) {
        switch (field) {
          case kf::kCorrelationId: k->correlation_id = v; break;
          case kf::kStartNs: k->start_ns = v; break;
          case kf::kEndNs: k->end_ns = v; break;
          case kf::kDeviceId: k->device_id = U32(v); break;
          case kf::kContextId: k->context_id = U32(v); break;
          case kf::kStreamId: k->stream_id = U32(v); break;
          case kf::kNameIid: k->name_iid = v; break;
          case kf::kGridX: k->grid[0] = U32(v); break;
          case kf::kGridY: k->grid[1] = U32(v); break;
          case kf::kGridZ: k->grid[2] = U32(v); break;
          case kf::kBlockX: k->block[0] = U32(v); break;
          case kf::kBlockY: k->block[1] = U32(v); break;
          case kf::kBlockZ: k->block[2] = U32(v); break;
          case kf::kClusterX: k->cluster[0] = U32(v); break;
          case kf::kClusterY: k->cluster[1] = U32(v); break;
          case kf::kClusterZ: k->cluster[2] = U32(v); break;
          case kf::kRegistersPerThread: k->registers_per_thread = U32(v); break;
          case kf::kStaticSharedMemoryBytes:
            k->static_shared_memory_bytes = U32(v);
            break;
          case kf::kDynamicSharedMemoryBytes:
            k->dynamic_shared_memory_bytes = U32(v);
            break;
          case kf::kGraphId: k->graph_id = U32(v); break;
          case kf::kGraphNodeId: k->graph_node_id = v; break;
          default: return false;
        }
        return true;
      },
      kNoOther);
}

bool DecodeLaunch(std::string_view bytes, int depth, uint64_t* unknown,
                  LaunchRecord* l) {
  namespace lf = f::launch;
  return ReadMessage(
      bytes, depth, unknown,
      [l](uint32_t field, uint64_t v) {
        switch (field) {
          case lf::kCorrelationId: l->correlation_id = v; break;
          case lf::kThreadId: l->thread_id = U32(v); break;
          case lf::kApiStartNs: l->api_start_ns = v; break;
          case lf::kApiEndNs: l->api_end_ns = v; break;
          case lf::kNvtxRangeId: l->nvtx_range_id = v; break;
          case lf::kKind: l->kind = I32(v); break;
          case lf::kGemmCallId: l->gemm_call_id = v; break;
          case lf::kCbid: break;  // known, not kept
          default: return false;
        }
        return true;
      },
      kNoOther);
}

bool DecodeMemcpy(std::string_view bytes, int depth, uint64_t* unknown,
                  MemcpyRecord* m) {
  namespace mf = f::memcpy_record;
  return ReadMessage(
      bytes, depth, unknown,
      [m](uint32_t field, uint64_t v) {
        switch (field) {
          case mf::kCorrelationId: m->correlation_id = v; break;
          case mf::kStartNs: m->start_ns = v; break;
          case mf::kEndNs: m->end_ns = v; break;
          case mf::kBytes: m->bytes = v; break;
          case mf::kKind: m->kind = I32(v); break;
          case mf::kDeviceId: m->device_id = U32(v); break;
          case mf::kContextId: m->context_id = U32(v); break;
          case mf::kStreamId: m->stream_id = U32(v); break;
          case mf::kSrcKind: m->src_kind = I32(v); break;
          case mf::kDstKind: m->dst_kind = I32(v); break;
          case mf::kMemsetValue:
          case mf::kGraphId:
          case mf::kDstDeviceId: break;  // known, not kept
          default: return false;
        }
        return true;
      },
      kNoOther);
}

// Appends the call's correlation ids to `links` (the caller sets call_id
// once the message is read: the field may come before the ids).
bool DecodeGemm(std::string_view bytes, int depth, uint64_t* unknown,
                GemmRecord* g, std::vector<GemmLink>* links) {
  namespace gf = f::gemm;
  bool packed_ok = true;
  const bool ok = ReadMessage(
      bytes, depth, unknown,
      [g, links](uint32_t field, uint64_t v) {
        switch (field) {
          case gf::kCallId: g->call_id = v; break;
          case gf::kApi: g->api = I32(v); break;
          case gf::kM: g->m = I64(v); break;
          case gf::kN: g->n = I64(v); break;
          case gf::kK: g->k = I64(v); break;
          case gf::kBatch: g->batch = I64(v); break;
          case gf::kTransA: g->trans_a = I32(v); break;
          case gf::kTransB: g->trans_b = I32(v); break;
          case gf::kAType: g->a_type = I32(v); break;
          case gf::kBType: g->b_type = I32(v); break;
          case gf::kCType: g->c_type = I32(v); break;
          case gf::kDType: g->d_type = I32(v); break;
          case gf::kComputeType: g->compute_type = I32(v); break;
          case gf::kLda: g->lda = I64(v); break;
          case gf::kLdb: g->ldb = I64(v); break;
          case gf::kLdc: g->ldc = I64(v); break;
          case gf::kAPtr: g->a_ptr = v; break;
          case gf::kBPtr: g->b_ptr = v; break;
          case gf::kCPtr: g->c_ptr = v; break;
          case gf::kDPtr: g->d_ptr = v; break;
          case gf::kEpilogue: g->epilogue = U32(v); break;
          case gf::kStartNs: g->start_ns = v; break;
          case gf::kEndNs: g->end_ns = v; break;
          case gf::kThreadId: g->thread_id = U32(v); break;
          case gf::kStatus: g->status = I32(v); break;
          case gf::kPrecision: g->precision = I32(v); break;
          case gf::kStrideA:
          case gf::kStrideB:
          case gf::kStrideC: break;  // known, not kept
          case gf::kCorrelationIds: links->push_back({v, 0}); break;
          default: return false;
        }
        return true;
      },
      [links, &packed_ok](uint32_t field, uint32_t wt, std::string_view b) {
        if (field != gf::kCorrelationIds || wt != wire::kWireBytes) {
          return false;
        }
        uint64_t v;
        while (!b.empty()) {
          if (!WireReader::ReadPackedVarint(&b, &v)) {
            packed_ok = false;
            break;
          }
          links->push_back({v, 0});
        }
        return true;
      });
  return ok && packed_ok;
}

bool DecodeNvtxRange(std::string_view bytes, int depth, uint64_t* unknown,
                     NvtxRecord* n) {
  namespace nf = f::nvtx_range;
  return ReadMessage(
      bytes, depth, unknown,
      [n](uint32_t field, uint64_t v) {
        switch (field) {
          case nf::kRangeId: n->range_id = v; break;
          case nf::kDomainIid: n->domain_iid = v; break;
          case nf::kNameIid: n->name_iid = v; break;
          case nf::kStartNs: n->start_ns = v; break;
          case nf::kEndNs: n->end_ns = v; break;
          case nf::kThreadId: n->thread_id = U32(v); break;
          case nf::kEndThreadId: n->end_thread_id = U32(v); break;
          case nf::kParentRangeId: n->parent_range_id = v; break;
          case nf::kKind: n->kind = I32(v); break;
          case nf::kDepth: n->depth = U32(v); break;
          case nf::kCategory:
          case nf::kColorArgb: break;  // known, not kept
          default: return false;
        }
        return true;
      },
      kNoOther);
}

// A message whose fields are all varints numbered 1..`last_field` and that
// the collector does not keep (NVTX marks): checked and counted only.
bool SkipVarintMessage(std::string_view bytes, int depth, uint64_t* unknown,
                       uint32_t last_field) {
  return ReadMessage(
      bytes, depth, unknown,
      [last_field](uint32_t field, uint64_t) {
        return field >= 1 && field <= last_field;
      },
      kNoOther);
}

bool DecodeCounters(std::string_view bytes, int depth, uint64_t* unknown,
                    CounterRecord* c) {
  namespace cf = f::kernel_counters;
  bool nested_ok = true;
  const bool ok = ReadMessage(
      bytes, depth, unknown,
      [c](uint32_t field, uint64_t v) {
        switch (field) {
          case cf::kCorrelationId: c->correlation_id = v; break;
          case cf::kDramReadBytes: c->dram_read_bytes = v; break;
          case cf::kDramWriteBytes: c->dram_write_bytes = v; break;
          case cf::kGpuTimeNs: c->gpu_time_ns = v; break;
          case cf::kDeviceId:
          case cf::kPasses:
          case cf::kRangeIndex: break;  // known, not kept
          default: return false;
        }
        return true;
      },
      [c, depth, unknown, &nested_ok](uint32_t field, uint32_t wt,
                                      std::string_view b) {
        if (wt != wire::kWireBytes) return false;
        if (field == cf::kFlops) {
          int32_t precision = 0;
          uint64_t flops = 0;
          nested_ok &= ReadMessage(
              b, depth + 1, unknown,
              [&](uint32_t pf, uint64_t v) {
                if (pf == f::precision_flops::kPrecision) {
                  precision = I32(v);
                } else if (pf == f::precision_flops::kFlops) {
                  flops = v;
                } else {
                  return false;
                }
                return true;
              },
              kNoOther);
          if (precision >= 0 && precision < kNumPrecisions) {
            c->flops[precision] += flops;
          }
          c->has_flops = true;
          return true;
        }
        if (field == cf::kMetrics) {
          nested_ok &= ReadMessage(
              b, depth + 1, unknown,
              [](uint32_t mf, uint64_t) {
                return mf == f::metric_value::kMetricIid;
              },
              [](uint32_t mf, uint32_t mwt, std::string_view) {
                return mf == f::metric_value::kValue &&
                       mwt == wire::kWireFixed64;
              });
          return true;
        }
        return false;
      });
  return ok && nested_ok;
}

// One PmSample: varints and doubles (fixed64), read with a reader of its
// own (ReadMessage hands fixed64 values to no callback).
bool DecodePmSample(std::string_view bytes, int depth, uint64_t* unknown,
                    PmSampleRecord* s) {
  namespace pf = f::pm_sample;
  WireReader r(bytes, depth);
  uint32_t field, wt;
  uint64_t v = 0;
  std::string_view b;
  while (r.Next(&field, &wt, &v, &b)) {
    bool known = false;
    if (wt == wire::kWireVarint) {
      known = true;
      switch (field) {
        case pf::kDeviceId: s->device_id = U32(v); break;
        case pf::kStartNs: s->start_ns = v; break;
        case pf::kEndNs: s->end_ns = v; break;
        default: known = false;
      }
    } else if (wt == wire::kWireFixed64 && field >= pf::kDramReadBytes &&
               field <= pf::kSmCycles) {
      double d;
      std::memcpy(&d, &v, sizeof d);
      s->values[field - pf::kDramReadBytes] = d;
      known = true;
    }
    if (!known) ++*unknown;
  }
  return r.ok();
}

// Decodes the repeated record fields of one batch message. `decode(field,
// bytes)` returns 1 for a record decoded, 0 for a field it does not take,
// -1 for a malformed record.
template <typename Decode>
bool ReadBatch(std::string_view bytes, uint64_t* unknown, Decode decode) {
  WireReader r(bytes, 1);
  uint32_t field, wt;
  uint64_t v = 0;
  std::string_view b;
  while (r.Next(&field, &wt, &v, &b)) {
    const int got = wt == wire::kWireBytes ? decode(field, b) : 0;
    if (got < 0) return false;
    if (got == 0) ++*unknown;
  }
  return r.ok();
}

// Counts one data field adds to its packet's digest.
struct DataCounts {
  uint64_t unknown_fields = 0;
  uint64_t nvtx_marks = 0;
  uint64_t pm_samples = 0;
  std::array<uint64_t, kNumRecordKinds> received{};
};

bool DecodeData(uint32_t data_case, std::string_view bytes,
                SessionRecords* rec, DataCounts* d) {
  uint64_t* unknown = &d->unknown_fields;
  auto& received = d->received;
  switch (data_case) {
    case f::packet::kKernelBatch:
      return ReadBatch(bytes, unknown, [&](uint32_t field, std::string_view b) {
        if (field == f::kernel_batch::kKernels) {
          ++received[wire::enums::kRecordKernel];
          return DecodeKernel(b, 2, unknown, &rec->kernels.emplace_back())
                     ? 1 : -1;
        }
        if (field == f::kernel_batch::kLaunches) {
          ++received[wire::enums::kRecordLaunch];
          return DecodeLaunch(b, 2, unknown, &rec->launches.emplace_back())
                     ? 1 : -1;
        }
        return 0;
      });
    case f::packet::kMemcpyBatch:
      return ReadBatch(bytes, unknown, [&](uint32_t field, std::string_view b) {
        if (field != f::memcpy_batch::kMemcpys) return 0;
        ++received[wire::enums::kRecordMemcpy];
        return DecodeMemcpy(b, 2, unknown, &rec->memcpys.emplace_back()) ? 1
                                                                         : -1;
      });
    case f::packet::kGemmBatch:
      return ReadBatch(bytes, unknown, [&](uint32_t field, std::string_view b) {
        if (field != f::gemm_batch::kGemms) return 0;
        ++received[wire::enums::kRecordGemm];
        const size_t first_link = rec->gemm_links.size();
        GemmRecord& g = rec->gemms.emplace_back();
        if (!DecodeGemm(b, 2, unknown, &g, &rec->gemm_links)) return -1;
        for (size_t i = first_link; i < rec->gemm_links.size(); ++i) {
          rec->gemm_links[i].call_id = g.call_id;
        }
        return 1;
      });
    case f::packet::kNvtxBatch:
      return ReadBatch(bytes, unknown, [&](uint32_t field, std::string_view b) {
        if (field == f::nvtx_batch::kRanges) {
          ++received[wire::enums::kRecordNvtxRange];
          return DecodeNvtxRange(b, 2, unknown, &rec->nvtx.emplace_back())
                     ? 1 : -1;
        }
        if (field == f::nvtx_batch::kMarks) {
          ++received[wire::enums::kRecordNvtxMark];
          ++d->nvtx_marks;
          return SkipVarintMessage(b, 2, unknown, f::nvtx_mark::kThreadId)
                     ? 1 : -1;
        }
        return 0;
      });
    case f::packet::kCounterBatch:
      return ReadBatch(bytes, unknown, [&](uint32_t field, std::string_view b) {
        if (field != f::counter_batch::kCounters) return 0;
        ++received[wire::enums::kRecordCounters];
        return DecodeCounters(b, 2, unknown, &rec->counters.emplace_back())
                   ? 1 : -1;
      });
    case f::packet::kPmSampleBatch:
      return ReadBatch(bytes, unknown, [&](uint32_t field, std::string_view b) {
        if (field != f::pm_sample_batch::kSamples) return 0;
        ++d->pm_samples;
        return DecodePmSample(b, 2, unknown, &rec->pm_samples.emplace_back())
                   ? 1 : -1;
      });
    default:
      return true;
  }
}

bool DecodeInternedString(std::string_view bytes, uint64_t* unknown,
                          PacketDigest* d) {
  uint64_t iid = 0;
  std::string_view str;
  bool utf8 = true;
  const bool ok = ReadMessage(
      bytes, 1, unknown,
      [&iid](uint32_t field, uint64_t v) {
        if (field != f::interned_string::kIid) return false;
        iid = v;
        return true;
      },
      [&](uint32_t field, uint32_t wt, std::string_view b) {
        if (field != f::interned_string::kStr || wt != wire::kWireBytes) {
          return false;
        }
        utf8 &= IsValidUtf8(b);
        str = b;
        return true;
      });
  if (!ok || !utf8) return false;
  d->strings.emplace_back(iid, str);
  return true;
}

// Rolls the record vectors back to their sizes at construction unless
// Keep() is called: a malformed packet leaves nothing behind.
class Rollback {
 public:
  explicit Rollback(SessionRecords* r)
      : r_(r),
        kernels_(r->kernels.size()),
        launches_(r->launches.size()),
        memcpys_(r->memcpys.size()),
        gemms_(r->gemms.size()),
        links_(r->gemm_links.size()),
        nvtx_(r->nvtx.size()),
        counters_(r->counters.size()),
        pm_samples_(r->pm_samples.size()) {}
  ~Rollback() {
    if (keep_) return;
    r_->kernels.resize(kernels_);
    r_->launches.resize(launches_);
    r_->memcpys.resize(memcpys_);
    r_->gemms.resize(gemms_);
    r_->gemm_links.resize(links_);
    r_->nvtx.resize(nvtx_);
    r_->counters.resize(counters_);
    r_->pm_samples.resize(pm_samples_);
  }
  void Keep() { keep_ = true; }

 private:
  SessionRecords* r_;
  size_t kernels_, launches_, memcpys_, gemms_, links_, nvtx_, counters_,
      pm_samples_;
  bool keep_ = false;
};

}  // namespace

bool IsValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int n;
    unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
    } else {
      return false;
    }
    if (end - p <= n) return false;
    if (p[1] < lo || p[1] > hi) return false;
    for (int i = 2; i <= n; ++i) {
      if (p[i] < 0x80 || p[i] > 0xBF) return false;
    }
    p += n + 1;
  }
  return true;
}

PacketDecode DecodeRecordPacket(std::string_view payload,
                                SessionRecords* records,
                                PacketDigest* d) {
  d->sequence = 0;
  d->unknown_fields = 0;
  d->nvtx_marks = 0;
  d->received.fill(0);
  d->strings.clear();
  d->data_parts.clear();

  // Pass 1: the packet's own fields. Of its `data` oneof, the last member
  // set wins and occurrences of one member merge (libprotobuf's rules).
  uint32_t data_case = 0;
  size_t first_kept = 0;  // data_parts from here on are the kept member's
  WireReader r(payload);
  uint32_t field, wt;
  uint64_t v = 0;
  std::string_view b;
  while (r.Next(&field, &wt, &v, &b)) {
    switch (field) {
      case f::packet::kSequence:
        if (wt != wire::kWireVarint) break;
        d->sequence = v;
        continue;
      case f::packet::kTimestampNs:
        if (wt != wire::kWireVarint) break;
        continue;
      case f::packet::kInternedStrings:
        if (wt != wire::kWireBytes) break;
        if (!DecodeInternedString(b, &d->unknown_fields, d)) {
          return PacketDecode::kMalformed;
        }
        continue;
      case f::packet::kHello:
      case f::packet::kDevice:
      case f::packet::kStats:
      case f::packet::kGoodbye:
      case f::packet::kHelloReply:
      case f::packet::kConnectionAuth:
        if (wt != wire::kWireBytes) break;
        return PacketDecode::kNotHot;
      case f::packet::kKernelBatch:
      case f::packet::kMemcpyBatch:
      case f::packet::kGemmBatch:
      case f::packet::kNvtxBatch:
      case f::packet::kCounterBatch:
      case f::packet::kPmSampleBatch:
        if (wt != wire::kWireBytes) break;
        if (field != data_case) first_kept = d->data_parts.size();
        data_case = field;
        d->data_parts.emplace_back(field, b);
        continue;
      default:
        break;
    }
    ++d->unknown_fields;
  }
  if (!r.ok()) return PacketDecode::kMalformed;

  // Pass 2: the records of the kept member; replaced ones are only checked.
  for (size_t i = 0; i < first_kept; ++i) {
    DataCounts ignored;
    const bool ok = DecodeData(d->data_parts[i].first,
                               d->data_parts[i].second, &d->replaced,
                               &ignored);
    d->replaced = SessionRecords();
    if (!ok) return PacketDecode::kMalformed;
  }
  Rollback rollback(records);
  DataCounts counts;
  for (size_t i = first_kept; i < d->data_parts.size(); ++i) {
    if (!DecodeData(data_case, d->data_parts[i].second, records, &counts)) {
      return PacketDecode::kMalformed;
    }
  }
  rollback.Keep();
  d->unknown_fields += counts.unknown_fields;
  d->nvtx_marks = counts.nvtx_marks;
  d->pm_samples = counts.pm_samples;
  d->received = counts.received;
  return PacketDecode::kDecoded;
}

}  // namespace rooftrace
