"""A CPU torch workload for the ops route's cost (ops_route_bench.sh).

A small transformer-like block (linear, silu, linear, layer_norm, softmax
over a score matrix) run for ITERS forward passes; prints the loop's wall
and process CPU time and how many torch operators one pass runs, counted
with torch's own profiler in a separate pass before the timed loop (so the
count is the same whether or not the ops route runs).
"""
import os
import sys
import time

import torch

ITERS = int(os.environ.get("OPS_BENCH_ITERS", "300"))
torch.manual_seed(0)
torch.set_num_threads(1)


class Block(torch.nn.Module):
    def __init__(self, d=256, h=1024):
        super().__init__()
        self.up = torch.nn.Linear(d, h)
        self.down = torch.nn.Linear(h, d)
        self.norm = torch.nn.LayerNorm(d)

    def forward(self, x):
        s = torch.softmax(x @ x.transpose(-1, -2) / 16.0, dim=-1)
        x = self.norm(x + s @ x)
        return self.norm(x + self.down(torch.nn.functional.silu(self.up(x))))


model = torch.nn.Sequential(*[Block() for _ in range(4)])
x = torch.randn(8, 256)
with torch.no_grad():
    model(x)  # warm-up
    ops_per_pass = -1
    if os.environ.get("ROOFTRACE_OPS") != "torch":
        # Counted only when the route is off: two profilers cannot run.
        with torch.autograd.profiler.profile() as p:
            model(x)
        ops_per_pass = len(p.function_events)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for _ in range(ITERS):
        y = model(x)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
print("iters=%d ops_per_pass=%d wall_s=%.6f cpu_s=%.6f sum=%.4f"
      % (ITERS, ops_per_pass, wall, cpu, float(y.sum())))
sys.stdout.flush()
