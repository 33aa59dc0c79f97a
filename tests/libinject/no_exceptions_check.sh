#!/bin/sh
# Fails when an object linked into librooftrace_inject.so was compiled with
# exceptions: such objects carry a .gcc_except_table section (their unwind
# cleanups), objects built with -fno-exceptions do not. Arguments: object
# files and static archives (each archive member is checked).
# Usage: no_exceptions_check.sh OBJDUMP FILE...
objdump=$1
shift
status=0
for f in "$@"; do
  found=$("$objdump" -h "$f" | awk '
    / file format / { member = $1; sub(/:$/, "", member) }
    /\.gcc_except_table/ { print member }' | sort -u)
  if [ -n "$found" ]; then
    for m in $found; do
      echo "$f: $m was compiled with exceptions (.gcc_except_table):" \
           "build it with -fno-exceptions, it is linked into libinject.so"
    done
    status=1
  fi
done
[ $status -eq 0 ] && echo "no object of libinject.so was built with exceptions ($# files)"
exit $status
