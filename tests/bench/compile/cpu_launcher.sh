#!/usr/bin/env bash
# A compiler launcher that records the CPU time of every compile and link it runs:
#   cmake -DCMAKE_CXX_COMPILER_LAUNCHER=tests/bench/compile/cpu_launcher.sh ...
# appends one line per command to $BUILD_CPU_LOG (default /tmp/build-cpu.log):
#   <user+sys CPU seconds> <wall seconds> <output file>
# tests/bench/compile/compile_cpu.py sums such a log per kind of object. Only a measuring aid:
# the objects are the same as without it.
log=${BUILD_CPU_LOG:-/tmp/build-cpu.log}
out=-
prev=
for a in "$@"; do
  if [[ $prev == -o ]]; then out=$a; fi
  prev=$a
done
exec /usr/bin/time -a -o "$log" -f "%U %S %e $out" "$@"
