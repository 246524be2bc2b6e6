"""kaudit's Python-side provenance (docs/python-provenance.md).

`kaudit run` puts this directory first on PYTHONPATH, so every Python process
it traces imports this module at startup (how ddtrace-run and coverage get into
unmodified programs).  It tells the preload library, through two C functions
the library exports, when a thread enters and leaves code of the parties a
contract can name (KernelBench: `ModelNew`, `Model`), so that every vendor call
and kernel launch made meanwhile on that thread can be attributed, even when
the harness exec's sources from strings and marks nothing.

It must change nothing the program computes or prints: every failure is
swallowed and reported to the trace, never to the program.  It never holds a
lock and never calls back into Python from C, so it cannot deadlock.

Mechanisms:
  Python 3.12+   sys.monitoring: PY_START for a code object whose qualified
                 name names a watched party pushes a range, PY_RETURN and
                 PY_UNWIND pop it; every other code object gets DISABLE on
                 first sight and costs nothing afterwards.  No object is changed.
  Python 3.10-11 builtins.__build_class__ is wrapped: when a class with a
                 watched name is created, the plain functions of its body are
                 replaced by wrappers (functools.wraps) that push and pop.
  otherwise      off (free-threaded builds, older versions), with the reason
                 in the trace.
Afterwards the program's own sitecustomize, if any, is run.
"""


def _kaudit_install():
    import os
    import sys

    try:
        import ctypes
    except Exception:  # no ctypes: nothing can reach the preload
        return None
    try:
        lib = ctypes.PyDLL(None)
        push = lib.kaudit_python_push
        pop = lib.kaudit_python_pop
        status = lib.kaudit_python_status
    except (AttributeError, OSError):
        return None  # not under kaudit run (the preload is not loaded)
    push.argtypes = [ctypes.c_char_p]
    push.restype = None
    pop.argtypes = [ctypes.c_char_p]
    pop.restype = None
    status.argtypes = [ctypes.c_char_p]
    status.restype = None

    def say(text):
        try:
            status(text.encode("utf-8", "replace"))
        except Exception:
            pass

    entries = [w.strip() for w in os.environ.get("KAUDIT_PYTHON_WATCH", "ModelNew,Model").split(",") if w.strip()]
    # Entries with a '/' or ending in .py name source files; the rest, class or function names.
    watch_files = tuple(w for w in entries if "/" in w or w.endswith(".py"))
    watch = frozenset(w for w in entries if w not in watch_files)
    version = "%d.%d.%d" % sys.version_info[:3]

    def watched(qualname, filename):
        for part in qualname.split("."):
            if part in watch:
                return True
        return bool(watch_files) and filename.endswith(watch_files)

    def label(qualname, filename):
        # "qualname (file)": the analyzer maps qualname components to the contract's
        # symbols and the file to the parties' paths
        return ("%s (%s)" % (qualname, filename)).encode("utf-8", "replace")

    gil_check = getattr(sys, "_is_gil_enabled", None)
    if gil_check is not None and not gil_check():
        say("off: free-threaded build (GIL disabled), Python %s" % version)
        return None
    try:
        import _interpreters  # noqa: F401  (3.13: sub-interpreters exist)
        subinterp_note = "; sub-interpreters are not followed"
    except Exception:
        subinterp_note = ""

    if sys.version_info >= (3, 12) and hasattr(sys, "monitoring"):
        mon = sys.monitoring
        tool = None
        for candidate in (4, 3, 5):
            try:
                mon.use_tool_id(candidate, "kaudit")
                tool = candidate
                break
            except ValueError:
                continue
        if tool is None:
            say("off: every sys.monitoring tool id is taken, Python %s" % version)
            return None
        events = mon.events
        DISABLE = mon.DISABLE
        names = {}  # code object -> encoded qualname, for watched code only

        def on_start(code, offset):
            name = names.get(code)
            if name is None:
                if not watched(code.co_qualname, code.co_filename):
                    return DISABLE
                name = names[code] = label(code.co_qualname, code.co_filename)
            push(name)
            return None

        def on_return(code, offset, value):
            name = names.get(code)
            if name is None:
                return DISABLE
            pop(name)
            return None

        def on_unwind(code, offset, exc):
            name = names.get(code)
            if name is not None:
                pop(name)

        mon.register_callback(tool, events.PY_START, on_start)
        mon.register_callback(tool, events.PY_RETURN, on_return)
        mon.register_callback(tool, events.PY_UNWIND, on_unwind)
        mon.set_events(tool, events.PY_START | events.PY_RETURN | events.PY_UNWIND)
        say("on: sys.monitoring tool %d, Python %s, watching %s%s"
            % (tool, version, ",".join(sorted(watch) + list(watch_files)), subinterp_note))
        return True

    if sys.version_info >= (3, 10):
        import builtins
        import functools

        original_build_class = builtins.__build_class__

        def wrap(fn):
            code = getattr(fn, "__code__", None)
            name = label(fn.__qualname__, code.co_filename if code else "?")

            @functools.wraps(fn)
            def kaudit_party_frame(*args, **kwargs):
                push(name)
                try:
                    return fn(*args, **kwargs)
                finally:
                    pop(name)

            return kaudit_party_frame

        def build_class(func, name, *bases, **kwds):
            cls = original_build_class(func, name, *bases, **kwds)
            try:
                body_file = func.__code__.co_filename if hasattr(func, "__code__") else ""
                if isinstance(cls, type) and watched(getattr(cls, "__qualname__", name), body_file):
                    for attr, value in list(vars(cls).items()):
                        if type(value).__name__ == "function":
                            setattr(cls, attr, wrap(value))
            except Exception as exc:
                say("error: could not wrap class %s: %s" % (name, exc))
            return cls

        builtins.__build_class__ = build_class
        say("on: class wrapping (__build_class__), Python %s, watching %s%s"
            % (version, ",".join(sorted(watch) + list(watch_files)), subinterp_note))
        return True

    say("off: Python %s is older than 3.10" % version)
    return None


def _kaudit_chain():
    """Run the sitecustomize this one shadows, if there is one."""
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


try:
    _kaudit_install()
except Exception:  # never let the audit break the program
    pass
_kaudit_chain()
