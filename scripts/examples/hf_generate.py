#!/usr/bin/env python3
"""The bundled example workload: Llama-style generation with HF transformers.

A decoder built from a `transformers` LlamaConfig with random weights (nothing
is downloaded), bf16 on the GPU, greedy `model.generate` for each batch size:
prompt 512 tokens, 64 new tokens.

The true phase of every forward step is written to a side file (--truth), not
as NVTX, so rooftrace's classifier cannot read the answer: for each step, the
host CLOCK_MONOTONIC interval of the model's forward call (when its kernels
were launched), its phase (prefill: the whole prompt; decode: one new token
per sequence) and its token count (batch x tokens in the step). The
generated token ids are hashed to stdout so runs with and without rooftrace
can be compared for identical output.

Usage: hf_generate.py [--batch-sizes 1,8,32] [--prompt 512] [--new-tokens 64]
                      [--truth truth.json] [--layers 8] [--warmup 1]
                      [--repeat 1] [--torch-profiler]

--repeat N times the generate call N times per batch size (generate_ms is
the median; the extra calls' steps are recorded with run 'repeat'). Each
call's cost is recorded three ways (wall ms, ms of CPU time of the
generating thread, GPU ms between CUDA events): generate_ms,
generate_cpu_ms, generate_gpu_ms (medians) and their *_all lists. An
overhead comparison alternates bare and traced processes
(scripts/gpu-check.sh overhead, docs/overhead.md), not one sample against
another. --torch-profiler
runs everything under torch.profiler with CUDA activities (Kineto, which
also sits on CUPTI): the cost CUPTI's own tracing adds, to compare
rooftrace's overhead with.
"""
import argparse
import contextlib
import hashlib
import json
import os
import statistics
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch-sizes", default="1,8,32",
                   help="comma-separated batch sizes (default 1,8,32)")
    p.add_argument("--prompt", type=int, default=512, help="prompt tokens")
    p.add_argument("--new-tokens", type=int, default=64, help="tokens to generate")
    p.add_argument("--layers", type=int, default=8, help="decoder layers")
    p.add_argument("--hidden", type=int, default=2048, help="hidden size")
    p.add_argument("--intermediate", type=int, default=5632, help="MLP size")
    p.add_argument("--heads", type=int, default=16, help="attention heads")
    p.add_argument("--kv-heads", type=int, default=8, help="key/value heads")
    p.add_argument("--vocab", type=int, default=32000, help="vocabulary size")
    p.add_argument("--warmup", type=int, default=1,
                   help="untimed warm-up generate calls per batch size (their "
                        "steps are recorded with run 'warmup')")
    p.add_argument("--truth", default="", help="write the true phases here (JSON)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=1,
                   help="timed generate calls per batch size; generate_ms is "
                        "their median (default 1)")
    p.add_argument("--deterministic", action="store_true",
                   help="deterministic cuBLAS and PyTorch kernels "
                        "(CUBLAS_WORKSPACE_CONFIG, use_deterministic_algorithms): "
                        "without it batches > 1 gave other token ids from one "
                        "bare run to the next on the H100")
    p.add_argument("--compile", action="store_true",
                   help="static KV cache and torch.compile(mode="
                        "\"reduce-overhead\"): the forward steps run as CUDA "
                        "graphs (sampling mode's graph workload)")
    p.add_argument("--torch-profiler", action="store_true",
                   help="run under torch.profiler with CUDA activities "
                        "(CUPTI's own tracing cost, for comparison)")
    p.add_argument("--torch-trace", default="",
                   help="run under torch.profiler with CPU and CUDA "
                        "activities and record_shapes, and write its trace "
                        "here (Chrome JSON, for rooftrace import: the ops "
                        "route's comparison)")
    args = p.parse_args()
    if args.repeat < 1:
        p.error("--repeat must be 1 or more")
    return args


class StepRecorder:
    """Forward pre/post hooks on the top-level model: one record per step."""

    def __init__(self, prompt_len):
        self.prompt_len = prompt_len
        self.steps = []
        self.label = "run"
        self.batch = 0
        self._open = None

    def pre(self, module, args, kwargs):
        ids = kwargs.get("input_ids")
        if ids is None and args:
            ids = args[0]
        batch, tokens = (ids.shape[0], ids.shape[1]) if ids is not None else (0, 0)
        self._open = {
            "start_ns": time.monotonic_ns(),
            "batch": int(batch),
            "tokens_per_sequence": int(tokens),
        }

    def post(self, module, args, kwargs, output):
        if self._open is None:
            return
        step = self._open
        self._open = None
        step["end_ns"] = time.monotonic_ns()
        step["token_count"] = step["batch"] * step["tokens_per_sequence"]
        if step["tokens_per_sequence"] > 1:
            step["phase"] = "prefill"
        else:
            step["phase"] = "decode"
        step["run"] = self.label
        step["index"] = len(self.steps)
        self.steps.append(step)


def timed_generate(torch, model, kwargs):
    """One generate call, synchronized: its output, CLOCK_MONOTONIC start and
    end, and its cost three ways: wall ms; ms of CPU time of this (the
    generating) thread, which a VM's stolen time and other processes do not
    inflate; GPU ms between CUDA events recorded on the current stream just
    before and after (the GPU's span of the call)."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    c0 = time.thread_time_ns()
    t0 = time.monotonic_ns()
    start.record()
    with torch.inference_mode():
        out = model.generate(**kwargs)
    end.record()
    torch.cuda.synchronize()
    t1 = time.monotonic_ns()
    c1 = time.thread_time_ns()
    return out, t0, t1, {"wall_ms": (t1 - t0) / 1e6, "cpu_ms": (c1 - c0) / 1e6,
                         "gpu_ms": start.elapsed_time(end)}


def generate_all(args, torch, model, rec):
    """Warm-up, timed and repeated generate calls for each batch size."""
    batches = [int(b) for b in args.batch_sizes.split(",") if b]
    runs = []
    digest = hashlib.sha256()
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    for batch in batches:
        prompt = torch.randint(1, args.vocab, (batch, args.prompt), generator=gen)
        prompt = prompt.to("cuda")
        attention = torch.ones_like(prompt)
        kwargs = dict(input_ids=prompt, attention_mask=attention, do_sample=False,
                      max_new_tokens=args.new_tokens,
                      min_new_tokens=args.new_tokens)
        rec.label = "warmup"
        with torch.inference_mode():
            for _ in range(args.warmup):
                model.generate(**kwargs)
        torch.cuda.synchronize()
        rec.label = f"batch{batch}"
        first = len(rec.steps)
        out, t0, t1, cost = timed_generate(torch, model, kwargs)
        last = len(rec.steps) - 1
        tokens = out[:, args.prompt:].cpu()
        costs = [cost]
        rec.label = "repeat"
        for _ in range(args.repeat - 1):
            costs.append(timed_generate(torch, model, kwargs)[3])
        times = [c["wall_ms"] for c in costs]
        cpu = [c["cpu_ms"] for c in costs]
        gpu = [c["gpu_ms"] for c in costs]
        digest.update(tokens.numpy().tobytes())
        runs.append({
            "label": f"batch{batch}", "batch": batch, "prompt": args.prompt,
            "new_tokens": args.new_tokens, "generate_start_ns": t0,
            "generate_end_ns": t1, "generate_ms": statistics.median(times),
            "generate_ms_all": times,
            "generate_cpu_ms": statistics.median(cpu),
            "generate_cpu_ms_all": cpu,
            "generate_gpu_ms": statistics.median(gpu),
            "generate_gpu_ms_all": gpu,
            "first_step": first, "last_step": last,
        })
        print(f"batch {batch}: generate {statistics.median(times):.1f} ms "
              f"wall, {statistics.median(cpu):.1f} ms CPU of the generating "
              f"thread, {statistics.median(gpu):.1f} ms GPU "
              f"(median of {len(times)}), "
              f"{last + 1 - first} forward steps, "
              f"token ids sha256 so far {digest.hexdigest()[:16]}", flush=True)

    return runs, digest


def main():
    args = parse_args()
    if args.deterministic:
        # Read by cuBLAS when it starts: before torch touches the GPU.
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    if not torch.cuda.is_available():
        print("hf_generate.py: no CUDA device visible to PyTorch; this example "
              "needs an NVIDIA GPU", file=sys.stderr)
        return 2

    torch.manual_seed(args.seed)
    if args.deterministic:
        torch.use_deterministic_algorithms(True)
    config = LlamaConfig(
        vocab_size=args.vocab,
        hidden_size=args.hidden,
        intermediate_size=args.intermediate,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        max_position_embeddings=args.prompt + args.new_tokens + 16,
        torch_dtype="bfloat16",
    )
    model = LlamaForCausalLM(config).to(device="cuda", dtype=torch.bfloat16).eval()
    # Random weights would often emit EOS early; generate exactly new_tokens.
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 0

    if args.compile:
        # A static cache keeps the decode step's shapes fixed, so each one
        # replays the same CUDA graph instead of recompiling.
        model.generation_config.cache_implementation = "static"
        model.forward = torch.compile(model.forward, mode="reduce-overhead")

    rec = StepRecorder(args.prompt)
    model.register_forward_pre_hook(rec.pre, with_kwargs=True)
    model.register_forward_hook(rec.post, with_kwargs=True)

    profiler = contextlib.nullcontext()
    if args.torch_profiler:
        profiler = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CUDA])
    elif args.torch_trace:
        profiler = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU,
                        torch.profiler.ProfilerActivity.CUDA],
            record_shapes=True)
    with profiler:
        runs, digest = generate_all(args, torch, model, rec)
    if args.torch_trace:
        profiler.export_chrome_trace(args.torch_trace)

    print(f"generated token ids sha256: {digest.hexdigest()}", flush=True)
    if args.truth:
        with open(args.truth, "w") as f:
            json.dump({
                "workload": "hf_generate.py",
                "clock": "CLOCK_MONOTONIC ns of this host (time.monotonic_ns)",
                "pid": os.getpid(),
                "config": {k: getattr(args, k) for k in
                           ("prompt", "new_tokens", "layers", "hidden",
                            "intermediate", "heads", "kv_heads", "vocab")},
                "token_ids_sha256": digest.hexdigest(),
                "runs": runs,
                "steps": rec.steps,
            }, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
