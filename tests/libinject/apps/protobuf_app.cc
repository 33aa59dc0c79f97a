// A host that links the full libprotobuf itself (the collector's generated
// code) and uses NVTX: under libinject its protobuf must keep working and
// its output stay the same. Exit code 3.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>

#include "proto/rooftrace.pb.h"

int main() {
  nvtxRangePushA("serialize");
  rooftrace::wire::Packet p;
  p.set_sequence(42);
  p.mutable_hello()->set_host("protobuf-host");
  const std::string bytes = p.SerializeAsString();
  rooftrace::wire::Packet back;
  const bool ok = back.ParseFromString(bytes);
  nvtxRangePop();
  printf("protobuf %s: %zu bytes, host %s, sequence %llu\n",
         ok ? "ok" : "FAILED", bytes.size(), back.hello().host().c_str(),
         static_cast<unsigned long long>(back.sequence()));
  return ok ? 3 : 1;
}
