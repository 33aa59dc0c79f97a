// A host program that uses NVTX and no CUDA, for libinject's tests.
//
//   nvtx_app [basic|fork|fork-exit|loop N|burst N|kill-self N]
// basic: nested push/pop on main, one range on a worker thread, a domain
//        range with a registered string, a start/end range ended on the
//        worker, a mark. fork: basic, then a forked child emits "child"
//        ranges and exits. loop N: N "step" ranges with short sleeps.
//        quiet: no NVTX call at all. fork-exit: basic, then a forked
//        child emits 3 "child" ranges and ends with _exit() 1 ms later (as
//        Python's fork-started workers do: no atexit, no flush). burst N:
//        N "burst" ranges in a tight loop (no sleep). kill-self N: N
//        "step" ranges in a tight loop, then SIGKILL to itself.
// stdout is deterministic; thread ids go to stderr as "tid NAME=N" lines so
// tests can match them; the exit code is 7 (checked unchanged).
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

void PrintTid(const char* name) {
  fprintf(stderr, "tid %s=%ld\n", name, static_cast<long>(syscall(SYS_gettid)));
}

void Basic() {
  PrintTid("main");
  nvtxRangePushA("outer");
  nvtxRangePushA("inner");
  nvtxMarkA("checkpoint");
  nvtxRangePop();
  nvtxRangeId_t cross = nvtxRangeStartA("cross-thread");
  nvtxRangePop();

  std::thread worker([cross] {
    PrintTid("worker");
    nvtxRangePushA("worker");
    nvtxRangeEnd(cross);
    nvtxRangePop();
  });
  worker.join();

  nvtxDomainHandle_t domain = nvtxDomainCreateA("engine");
  nvtxStringHandle_t step = nvtxDomainRegisterStringA(domain, "decode-step");
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.colorType = NVTX_COLOR_ARGB;
  attr.color = 0xFF00FF00u;
  attr.category = 3;
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = step;
  nvtxDomainRangePushEx(domain, &attr);
  nvtxDomainRangePop(domain);
  printf("basic done\n");
}

// Basic(), then a forked child records three "child" ranges and exits:
// normally, or (abrupt) with _exit() 1 ms later. Returns its wait status.
int ForkChildWithRanges(bool abrupt) {
  Basic();
  fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    PrintTid("child");
    for (int i = 0; i < 3; ++i) {
      nvtxRangePushA("child");
      nvtxRangePop();
    }
    if (abrupt) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      _exit(0);
    }
    printf("child done\n");
    exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "basic";
  if (strcmp(mode, "basic") == 0) {
    Basic();
  } else if (strcmp(mode, "fork") == 0) {
    const int status = ForkChildWithRanges(/*abrupt=*/false);
    nvtxRangePushA("after-fork");
    nvtxRangePop();
    printf("parent saw child exit %d\n", WEXITSTATUS(status));
  } else if (strcmp(mode, "fork-exit") == 0) {
    const int status = ForkChildWithRanges(/*abrupt=*/true);
    printf("parent saw child exit %d\n", WEXITSTATUS(status));
  } else if (strcmp(mode, "burst") == 0 || strcmp(mode, "kill-self") == 0) {
    const int n = argc > 2 ? atoi(argv[2]) : 100;
    const bool kill_self = strcmp(mode, "kill-self") == 0;
    for (int i = 0; i < n; ++i) {
      nvtxRangePushA(kill_self ? "step" : "burst");
      nvtxRangePop();
    }
    printf("%s done %d\n", mode, n);
    fflush(stdout);
    if (kill_self) raise(SIGKILL);
  } else if (strcmp(mode, "quiet") == 0) {
    printf("no NVTX, no CUDA\n");
  } else if (strcmp(mode, "loop") == 0) {
    const int n = argc > 2 ? atoi(argv[2]) : 100;
    for (int i = 0; i < n; ++i) {
      nvtxRangePushA("step");
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      nvtxRangePop();
    }
    printf("loop done %d\n", n);
  }
  return 7;
}
