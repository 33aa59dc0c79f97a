"""rooftrace's Python startup hook (rooftrace profile --ops torch).

Python imports the first sitecustomize on its path at startup; rooftrace
puts this folder first. It starts the ops route (rooftrace_torch_ops.py),
then runs the sitecustomize that would have run without us (the next one
on the path), so a host's own startup customisation still happens. Neither
ever stops the program: an error is one line on stderr, as Python's own
site module reports a failing sitecustomize.
"""

import importlib
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))

try:
    sys.path.insert(0, _here)
    import rooftrace_torch_ops
    rooftrace_torch_ops.install()
except Exception as e:  # never break the host
    sys.stderr.write("rooftrace: ops route off: %s: %s\n"
                     % (type(e).__name__, e))


def _chain():
    """Imports the next sitecustomize on sys.path, if there is one."""
    ours = sys.modules.get("sitecustomize")
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path
                   if os.path.abspath(p or ".") != _here]
    del sys.modules["sitecustomize"]
    try:
        importlib.import_module("sitecustomize")
    except ImportError as e:
        if e.name != "sitecustomize":
            sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for "
                             "traceback:\n%s: %s\n" % (type(e).__name__, e))
    except Exception as e:
        sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for "
                         "traceback:\n%s: %s\n" % (type(e).__name__, e))
    finally:
        sys.path[:] = saved
        if "sitecustomize" not in sys.modules and ours is not None:
            sys.modules["sitecustomize"] = ours


_chain()
