#include "cli/rooftrace.h"

int main(int argc, char** argv) { return rooftrace::RooftraceMain(argc, argv); }
