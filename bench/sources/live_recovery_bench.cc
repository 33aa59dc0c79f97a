// Where the recovery of a dead producer's live buffer spends its time
// (#37.14): reading the buffer, re-encoding its records, decoding them into
// a session, and storing that session as a run. Prints figures; never a
// timed test.
//
//   test_producer --dead 3000000          (ROOFTRACE_SPOOL_DIR=DIR: leaves
//                                          DIR/rooftrace-*.live)
//   live_recovery_bench DIR/rooftrace-*.live [runs]
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "bench/support/bench_clock.h"
#include "pipeline/recorder.h"
#include "proto/framing.h"
#include "proto/live_buffer.h"
#include "sources/rft/live_recovery.h"
#include "sources/rft/wire_session.h"
#include "store/store.h"

namespace rooftrace {
namespace {

struct Phase {
  double cpu = 0, wall = 0;
};

template <typename Fn>
Phase Time(Fn&& fn) {
  const double c = bench::CpuSeconds(), w = bench::WallSeconds();
  fn();
  return {bench::CpuSeconds() - c, bench::WallSeconds() - w};
}

void Print(const char* what, const Phase& p) {
  printf("  %-34s %7.3f s wall %7.3f s cpu\n", what, p.wall, p.cpu);
}

int Run(const std::string& path, int runs) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    fprintf(stderr, "live_recovery_bench: %s: cannot read it\n", path.c_str());
    return 2;
  }
  for (int r = 0; r < runs; ++r) {
    printf("run %d of %d: %s\n", r + 1, runs, path.c_str());
    inject::LiveContents live;
    inject::LiveReadResult result = inject::LiveReadResult::kOwnerAlive;
    Status read;
    Print("read the buffer (ReadLiveBuffer)", Time([&] {
            read = inject::ReadLiveBuffer(path, st.st_uid, 0, 0, &live,
                                          &result);
          }));
    if (!read.ok() || result != inject::LiveReadResult::kRead) {
      fprintf(stderr, "live_recovery_bench: %s\n",
              read.ok() ? "its producer still runs" : read.message().c_str());
      return 2;
    }
    std::string frames;
    inject::RecoveryCounts counts;
    Print("re-encode (EncodeRecovered)", Time([&] {
            counts = inject::EncodeRecovered(live, 1, 2, 4096, &frames);
          }));
    printf("  %llu records, %zu bytes of frames\n",
           static_cast<unsigned long long>(counts.total()), frames.size());
    WireSession ws(path);
    Print("whole recovery (RecoverOrphanLiveBuffer)", Time([&] {
            auto rec = RecoverOrphanLiveBuffer(path, st.st_uid, 0, &ws);
            if (!rec.ok()) fprintf(stderr, "%s\n", rec.status().message().c_str());
          }));
    const std::string store =
        (std::filesystem::temp_directory_path() /
         ("live_recovery_bench_" + std::to_string(getpid()) + ".sqlite"))
            .string();
    Print("store the session (AddSession+Finish)", Time([&] {
            RecorderOptions ro;
            ro.origin = "bench";
            auto rec = CreateStoreRecorder(ro, store,
                                           Store::Durability::kScratch);
            if (!rec.ok()) return;
            (void)(*rec)->AddSession(&ws.session());
            (void)(*rec)->Finish();
          }));
    unlink(store.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace rooftrace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: live_recovery_bench FILE.live [runs]\n");
    return 2;
  }
  return rooftrace::Run(argv[1], argc > 2 ? atoi(argv[2]) : 3);
}
