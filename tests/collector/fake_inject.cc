// Stands in for librooftrace_inject.so in profile tests: loads, does nothing.
extern "C" int rooftrace_fake_inject_marker() { return 1; }
