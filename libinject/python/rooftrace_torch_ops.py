"""rooftrace's ops route inside a profiled Python process (docs/libinject.md).

`rooftrace profile --ops torch` puts this folder first on PYTHONPATH; its
sitecustomize.py calls install(). When the program imports torch, torch's
own profiler is started with CPU activity only and record_shapes, on the
thread that imported torch. At the end of a top-level module call, once a
window (ROOFTRACE_OPS_WINDOW_S, 1 s by default) has passed, and at exit, the
operators it recorded are handed to the injection library
(RooftraceSubmitOps), which sends them in the rooftrace stream as ranges of
the domain "rooftrace.torch_ops": start and end on the wire's clock
(CLOCK_MONOTONIC), the thread's kernel id (as CUDA launches carry it), and
the operator's name, a tab, and its inputs as a Kineto trace records them
("Input Dims", "Input type", "Input Strides", "Concrete Inputs"). The
collector costs them with the importer's op models.

The host comes first: every failure turns the route off with one line on
stderr ("rooftrace: ops route off: WHY") and the program runs as bare. It
stays off when torch is missing (nothing is imported), too old to record
input types, already being profiled (torch's profiler enabled, or Kineto's
on-demand daemon asked for with KINETO_USE_DAEMON), or when the injection
library is not loaded. When the program starts torch's profiler itself,
the route hands over first: its window is sent, and it stays off.

Why torch's profiler and not torch's NVTX emission (emit_nvtx with
record_shapes): the profiler gives input types, strides and scalar values,
which the op models need for bytes; emit_nvtx gives sizes only and needs a
CUDA build. CPU activity only: torch never enables CUPTI activity for it
(the injection library is CUPTI's one subscriber; see docs/libinject.md
for the torch versions whose first profiler start still tries to
subscribe, and what happens then).
"""

import atexit
import ctypes
import importlib.abc
import importlib.util
import json
import os
import sys
import threading
import time

_PREFIX = "rooftrace: ops route"
# at::RecordScope::USER_SCOPE: a record_function range (an annotation).
_USER_SCOPE = 7


def _say(line):
    try:
        sys.stderr.write("%s %s\n" % (_PREFIX, line))
        sys.stderr.flush()
    except Exception:  # a closed stderr must not break the host
        pass


class _Route:
    """The route's state: one per process, driven by the importing thread."""

    def __init__(self, torch, submit, window_s):
        self.torch = torch
        self.submit = submit
        self.window_s = window_s
        self.thread = threading.get_ident()
        self.native_tid = threading.get_native_id()
        self.on = False
        self.own_profile = None
        self.creating = False
        self.window_start = 0.0
        self.depth = 0
        self.sent = 0
        self.other_threads = 0
        self.descs = {}
        self.lock = threading.Lock()

    # ---- profiler windows
    def start(self):
        P = self.torch.autograd.profiler
        self.creating = True
        try:
            prof = P.profile(use_cuda=False, record_shapes=True,
                             use_kineto=True)
        finally:
            self.creating = False
        prof.__enter__()
        self.own_profile = prof
        self.seq_tid = None
        # A marker op tells which profiler thread id is this thread's.
        with P.record_function("rooftrace::window"):
            pass
        self.window_start = time.monotonic()
        self.on = True

    def stop_window(self):
        """Ends the current window; returns its events (or [])."""
        P = self.torch.autograd.profiler
        self.on = False
        prof, self.own_profile = self.own_profile, None
        disable = getattr(P, "_disable_profiler", None)
        if disable is not None:
            result = disable()  # the events, without torch's own parsing
        else:
            # A torch without the low-level call: the profile's own exit
            # (it also parses the events, slower) leaves them on it.
            prof.__exit__(None, None, None)
            result = getattr(prof, "kineto_results", None)
        return result.events() if result is not None else []

    def flush(self, restart):
        with self.lock:
            if not self.on:
                return
            try:
                events = self.stop_window()
                lines = self.describe(events)
                if lines:
                    data = "".join(lines).encode("utf-8", "replace")
                    n = self.submit(data, len(data))
                    if n < 0:
                        _say("off: the injection library stands aside "
                             "(no collector session in this process)")
                        return
                    self.sent += n
                if restart:
                    self.start()
            except Exception as e:  # never break the host
                self.on = False
                _say("off: %s: %s" % (type(e).__name__, e))

    def describe(self, events):
        """One 'START END TID DEPTH\\tNAME\\t{ARGS}' line per operator."""
        offset_ns = time.time_ns() - time.monotonic_ns()
        seq_tid = None
        for e in events:
            if e.name() == "rooftrace::window":
                seq_tid = e.start_thread_id()
                break
        has_ns = bool(events) and hasattr(events[0], "start_ns")
        has_strides = bool(events) and hasattr(events[0], "strides")
        has_concrete = bool(events) and hasattr(events[0], "concrete_inputs")
        has_scope = bool(events) and hasattr(events[0], "scope")
        descs = self.descs
        tid = self.native_tid
        lines = []
        for e in events:
            if seq_tid is not None and e.start_thread_id() != seq_tid:
                self.other_threads += 1
                continue
            name = e.name()
            if name == "rooftrace::window":
                continue
            if has_ns:
                begin = e.start_ns() - offset_ns
                end = begin + e.duration_ns()
            else:
                begin = e.start_us() * 1000 - offset_ns
                end = begin + e.duration_us() * 1000
            if begin <= 0:
                continue
            shapes = e.shapes()
            dtypes = e.dtypes()
            strides = e.strides() if has_strides else None
            concrete = e.concrete_inputs() if has_concrete else None
            user = has_scope and int(e.scope()) == _USER_SCOPE
            # Operators repeat with the same inputs (every layer, every
            # step): each distinct one is described once.
            key = (name, str(shapes), str(dtypes), str(strides),
                   str(concrete), user)
            desc = descs.get(key)
            if desc is None:
                desc = _describe(name, shapes, dtypes, strides, concrete, user)
                if len(descs) < 100000:
                    descs[key] = desc
            lines.append("%d %d %d 0\t%s\n" % (begin, end, tid, desc))
        return lines

    # ---- when to end a window: after a top-level module call
    def pre_hook(self, module, inputs):
        if threading.get_ident() == self.thread:
            self.depth += 1

    def post_hook(self, module, inputs, output):
        if threading.get_ident() != self.thread:
            return
        self.depth = max(0, self.depth - 1)
        if (self.depth == 0 and self.on and
                time.monotonic() - self.window_start >= self.window_s):
            self.flush(restart=True)

    def at_exit(self):
        if self.on and threading.get_ident() == self.thread:
            self.flush(restart=False)

    # ---- the program starts torch's profiler itself: hand over
    def yield_to_program(self):
        if self.creating or not self.on:
            return
        self.flush(restart=False)
        _say("off: the program starts torch's profiler itself; its "
             "operators up to now were sent")


def _describe(name, shapes, dtypes, strides, concrete, user):
    """'NAME<TAB>{ARGS}' with a Kineto cpu_op's record_shapes fields."""
    args = {}
    if shapes:
        args["Input Dims"] = shapes
        args["Input type"] = dtypes
        if strides is not None:
            args["Input Strides"] = strides
        if concrete is not None:
            args["Concrete Inputs"] = ["" if c is None else str(c)
                                       for c in concrete]
    if user:
        args["Scope"] = "user"
    text = name.replace("\t", " ") + "\t" + json.dumps(
        args, separators=(",", ":"), default=str)
    return text.replace("\n", " ")


_route = None


def _load_submit():
    path = os.environ.get("ROOFTRACE_INJECT_LIB", "")
    if not path:
        return None, "ROOFTRACE_INJECT_LIB is not set (run under rooftrace " \
                     "profile --ops torch)"
    try:
        lib = ctypes.CDLL(path)
        fn = lib.RooftraceSubmitOps
    except (OSError, AttributeError) as e:
        return None, "the injection library %s cannot be used (%s)" % (
            path, e)
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    fn.restype = ctypes.c_longlong
    return fn, None


def _why_not(torch):
    """Why the route cannot run in this process ('' when it can)."""
    if os.environ.get("KINETO_USE_DAEMON"):
        return ("KINETO_USE_DAEMON is set: Kineto's on-demand profiling owns "
                "the profiler (and CUPTI) in this process")
    autograd = getattr(torch, "autograd", None)
    P = getattr(autograd, "profiler", None)
    if P is None or not hasattr(P, "record_function"):
        return "torch %s has no autograd profiler" % torch.__version__
    try:
        import inspect
        params = inspect.signature(P.profile.__init__).parameters
    except (TypeError, ValueError):
        params = {}
    if "record_shapes" not in params or "use_kineto" not in params:
        return ("torch %s is too old: its profiler records no input types "
                "(1.8 or newer is needed)" % torch.__version__)
    enabled = getattr(autograd, "_profiler_enabled", None)
    if enabled is not None and enabled():
        return "torch's profiler is already running in this process"
    return ""


def _on_torch_imported(torch):
    global _route
    try:
        why = _why_not(torch)
        if why:
            _say("off: " + why)
            return
        submit, why = _load_submit()
        if submit is None:
            _say("off: " + why)
            return
        try:
            window_s = float(os.environ.get("ROOFTRACE_OPS_WINDOW_S", "1"))
        except ValueError:
            window_s = 1.0
        route = _Route(torch, submit, max(0.01, window_s))
        P = torch.autograd.profiler
        original_init = P.profile.__init__

        def init_and_hand_over(self, *args, **kwargs):
            if _route is not None:
                _route.yield_to_program()
            original_init(self, *args, **kwargs)

        P.profile.__init__ = init_and_hand_over
        mm = torch.nn.modules.module
        mm.register_module_forward_pre_hook(route.pre_hook)
        mm.register_module_forward_hook(route.post_hook)
        atexit.register(route.at_exit)
        _route = route
        route.start()
    except Exception as e:  # never break the host
        _route = None
        _say("off: %s: %s" % (type(e).__name__, e))


class _TorchWatcher(importlib.abc.MetaPathFinder):
    """Runs _on_torch_imported once torch's own import has finished."""

    def __init__(self):
        self.busy = False

    def find_spec(self, name, path=None, target=None):
        if name != "torch" or self.busy:
            return None
        self.busy = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy = False
        if spec is None or spec.loader is None or \
                not hasattr(spec.loader, "exec_module"):
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        exec_module = spec.loader.exec_module

        def exec_then_start(module):
            exec_module(module)
            _on_torch_imported(module)

        spec.loader.exec_module = exec_then_start
        return spec


def install():
    """Called by sitecustomize.py: watch for torch when the route is asked."""
    if os.environ.get("ROOFTRACE_OPS", "") != "torch":
        return
    if "torch" in sys.modules:
        _on_torch_imported(sys.modules["torch"])
        return
    sys.meta_path.insert(0, _TorchWatcher())
