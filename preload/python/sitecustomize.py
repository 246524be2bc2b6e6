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


# Timing primitives whose identity is watched (docs/python-provenance.md,
# "Timing primitives"): (module, attribute path).  Looked up in the raw
# dictionaries only (never getattr, never an import), so that looking runs no
# code of the program's.
_KAUDIT_TIMING = (
    ("time", ("perf_counter",)),
    ("time", ("perf_counter_ns",)),
    ("time", ("time",)),
    ("time", ("time_ns",)),
    ("time", ("monotonic",)),
    ("time", ("monotonic_ns",)),
    ("torch.cuda", ("synchronize",)),
    ("torch.cuda", ("Event", "record")),
    ("torch.cuda", ("Event", "elapsed_time")),
    ("torch.cuda", ("Event", "synchronize")),
    ("torch.cuda", ("Stream", "synchronize")),
    ("triton.testing", ("do_bench",)),
)


class _KauditDefiners:
    """Which watched classes each code object's source defined: when a watched
    class (ModelNew, Model) is created, the code that ran its class statement
    (a module's top-level code, exec'd from a string by KernelBench) and every
    code object nested in it are noted with the class's name.  A function is
    then known to come from the candidate's source when its code is among
    them, even when the harness exec's reference and candidate into one
    namespace and the same file name ('<string>')."""

    def __init__(self):
        self.nested = {}    # code object -> set of watched class names its source defines

    def note(self, definer, class_name):
        import types

        stack, seen = [definer], set()
        while stack:
            co = stack.pop()
            if id(co) in seen:
                continue
            seen.add(id(co))
            self.nested.setdefault(co, set()).add(class_name)
            stack.extend(c for c in co.co_consts if type(c) is types.CodeType)

    def of(self, code):
        return self.nested.get(code, ())


def _kaudit_timing_watch(say, definers=None):
    """Return check(when): compares each timing primitive with the object it
    was when last seen and reports every change as a status mark
    'timing-replaced WHEN NAME OLD -> NEW', with ' | beside CLASSES' when the
    new object is a function from the source that defined these watched
    classes (_KauditDefiners).  The analyzer attributes the mark by the
    watched frames open on the reporting thread at that point, or by the
    classes it was defined beside."""
    import functools
    import sys
    import types

    modules = sys.modules
    module_dict = types.ModuleType.__dict__["__dict__"].__get__
    type_dict = type.__dict__["__dict__"].__get__
    type_mro = type.__dict__["__mro__"].__get__
    type_qualname = type.__dict__["__qualname__"].__get__
    plain = (types.FunctionType, types.BuiltinFunctionType, types.MethodDescriptorType,
             types.WrapperDescriptorType, types.ClassMethodDescriptorType)
    missing = object()
    targets = [(m, path, m + "." + ".".join(path)) for m, path in _KAUDIT_TIMING]
    seen = {}  # name -> the object last seen (a strong reference: its id cannot be reused)

    def resolve(module_name, path):
        m = modules.get(module_name)
        if m is None or not isinstance(m, types.ModuleType):
            return missing
        obj = module_dict(m).get(path[0], missing)
        if len(path) == 1 or obj is missing:
            return obj
        if not isinstance(obj, type):
            return missing
        for klass in type_mro(obj):
            d = type_dict(klass)
            if path[1] in d:
                return d[path[1]]
        return missing

    def describe(obj):
        t = type(obj)
        if t in plain or t is staticmethod or t is classmethod:
            if t is staticmethod or t is classmethod:
                obj = obj.__func__
                t = type(obj)
            if t in plain:
                mod = getattr(obj, "__module__", None) if t is types.FunctionType else None
                if mod is None and t is types.BuiltinFunctionType:
                    owner = obj.__self__
                    if isinstance(owner, types.ModuleType):
                        mod = module_dict(owner).get("__name__")
                text = "%s.%s" % (mod, obj.__qualname__) if isinstance(mod, str) else obj.__qualname__
                code = getattr(obj, "__code__", None) if t is types.FunctionType else None
                if code is not None:
                    text += "@%s:%d" % (code.co_filename, code.co_firstlineno)
                return "".join(c if c.isprintable() and not c.isspace() else "_" for c in text)[:240]
        return "<%s-object>" % "".join(c if c.isprintable() and not c.isspace() else "_"
                                       for c in type_qualname(t))[:200]

    def beside(obj):
        # The watched classes defined by the source the new object's code comes
        # from: a replacement made by a candidate module's top-level code, which
        # runs in no watched frame (a harness exec's it), is a function of that
        # source.  Raw lookups only: no code of the program's runs.
        if definers is None:
            return ""
        fn = obj
        for _ in range(4):
            t = type(fn)
            if t is types.MethodType or t is staticmethod or t is classmethod:
                fn = fn.__func__
            elif t is functools.partial:
                fn = fn.func
            else:
                break
        if type(fn) is not types.FunctionType:
            return ""
        return ",".join(sorted(definers.of(fn.__code__)))

    import operator

    is_ = operator.is_
    # fast path: one group per module of plain module attributes, compared all at once in C
    # and a class's own attributes (where torch defines these methods) the same way;
    # anything else (an inherited attribute, a changed class) takes the full look-up
    flat = {}
    for module_name, path, name in targets:
        attrs, classes = flat.setdefault(module_name, ([], {}))
        if path[0] not in attrs:
            attrs.append(path[0])
        if len(path) > 1:
            classes.setdefault(path[0], []).append(path[1])
    flat = tuple((m, tuple(attrs), [missing] * len(attrs),
                  tuple((c, tuple(a), [missing] * len(a)) for c, a in classes.items()))
                 for m, (attrs, classes) in flat.items())

    def check(when):
        for module_name, attrs, last, classes in flat:
            m = modules.get(module_name)
            if m is None:
                continue
            if not isinstance(m, types.ModuleType):
                return full(when)
            d = module_dict(m)
            now = list(map(d.get, attrs))
            if not all(map(is_, now, last)):
                last[:] = now
                return full(when)
            for cls_name, cls_attrs, cls_last in classes:
                cls = d.get(cls_name)
                if not isinstance(cls, type):
                    continue
                now = list(map(type_dict(cls).get, cls_attrs))
                if not all(map(is_, now, cls_last)):
                    cls_last[:] = now
                    return full(when)

    def full(when):
        for module_name, path, name in targets:
            try:
                now = resolve(module_name, path)
                if now is missing:
                    continue
                old = seen.get(name, missing)
                if old is now:
                    continue
                seen[name] = now
                if old is not missing:
                    by = beside(now)
                    say("timing-replaced %s %s %s -> %s%s" % (when, name, describe(old), describe(now),
                                                              " | beside " + by if by else ""))
            except Exception:
                pass

    check("start")
    return check


def _kaudit_operator_sampler(say):
    """Return (enter, leave) for the outermost watched frame of a thread, or
    None.  In sampled calls of each watched function (1, 2, 3, then 64, 256,
    1024, ...: every call early, ever fewer later) enter() switches on PyTorch's NVTX
    operator ranges with input shapes ("aten::topk, ..., sizes = [[...]]") for
    this thread and leave() switches them off, so the analyzer knows which
    operator launched each framework kernel (docs/python-provenance.md,
    "Operators").  Unsampled calls cost a counter.  The profiler is driven
    below torch.autograd.profiler.emit_nvtx, which synchronizes the device on
    entry and exit: that would change the program's timing.  Never when a
    profiler is already on for the thread (the program's own)."""
    import os
    import sys
    from _thread import get_ident

    mode = os.environ.get("KAUDIT_PYTHON_OPERATORS", "sample")
    if mode == "off":
        say("operators off: KAUDIT_PYTHON_OPERATORS=off")
        return None
    every = mode == "all"
    modules = sys.modules
    threads = {}        # thread id -> [watched depth, profiler switched on by us]
    calls = {}          # watched function -> calls so far
    api = []            # [enable, disable, enabled] once resolved; [] until then, [None] if unusable
    spoken = set()

    def tell(key, text):
        if key not in spoken:
            spoken.add(key)
            say(text)

    def sampled(n):
        # 1, 2, 3 (a harness's correctness trials), then 64, 256, 1024, ... (powers of 4):
        # not 4 to 63, where the timed trials of KernelBench and CUDA-L1 fall, so that
        # the ranges' cost stays out of the times they report
        return n <= 3 or (n >= 64 and n & (n - 1) == 0 and (n.bit_length() - 1) % 2 == 0)

    def resolve(torch):
        c = torch._C
        autograd = c._autograd
        prof = getattr(c, "_profiler", autograd)
        config_type = getattr(prof, "ProfilerConfig", None) or autograd.ProfilerConfig
        state = (getattr(prof, "ProfilerState", None) or autograd.ProfilerState).NVTX
        experimental = getattr(prof, "_ExperimentalConfig", None) or autograd._ExperimentalConfig
        config = None
        error = None
        for extra in ((), ("",)):
            try:
                config = config_type(state, True, False, False, False, False, experimental(), *extra)
                break
            except TypeError as exc:
                error = exc
        if config is None:
            raise error
        enable = autograd._enable_profiler
        disable = autograd._disable_profiler
        enabled = autograd._profiler_enabled
        return [lambda: enable(config, set()), disable, enabled]

    def enter(key):
        try:
            switch_on(key)
        except Exception:  # never into the program
            pass

    def leave(key):
        try:
            switch_off(key)
        except Exception:
            pass

    def switch_on(key):
        tid = get_ident()
        st = threads.get(tid)
        if st is None:
            st = threads[tid] = [0, False]
        st[0] += 1
        if st[0] != 1:
            return
        n = calls.get(key, 0) + 1
        calls[key] = n
        if not (every or sampled(n)):
            return
        torch = modules.get("torch")
        if torch is None:
            return
        try:
            if not api:
                api.extend(resolve(torch))
            if api[0] is None or api[2]():
                return
            api[0]()
            st[1] = True
            tell("on", "operators on: NVTX operator ranges with shapes, %s" % (
                "every call" if every else "in calls 1, 2, 3, 64, 256, ... of each watched function"))
        except Exception as exc:
            if not api:
                api.append(None)
            tell("off", "operators off: %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:200]
                                                    if str(exc) else ""))

    def switch_off(key):
        st = threads.get(get_ident())
        if st is None or st[0] <= 0:
            return
        st[0] -= 1
        if st[0] == 0 and st[1]:
            st[1] = False
            try:
                api[1]()
            except Exception as exc:  # the program switched it off itself, or a profiler of its own is on
                tell("lost", "operators lost: %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:200]
                                                          if str(exc) else ""))

    return enter, leave


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

    try:
        definers = _KauditDefiners()
        check = _kaudit_timing_watch(say, definers)
        subinterp_note = "; timing primitives watched" + subinterp_note
    except Exception as exc:
        say("error: timing primitives are not watched: %s" % exc)
        definers = None

        def check(when):
            pass
    else:
        try:
            import atexit
            atexit.register(check, "exit")  # registered first: runs after the program's own handlers
        except Exception:
            pass

    try:
        sampler = _kaudit_operator_sampler(say)
    except Exception as exc:
        say("operators off: %s" % exc)
        sampler = None
    if sampler is None:
        def op_enter(key):
            pass

        op_leave = op_enter
    else:
        op_enter, op_leave = sampler

    def samples(code):
        # plain functions only: not a class body (neither optimized nor new locals),
        # nor a generator or coroutine, which leave their frame without returning
        # (PY_YIELD is not watched) and would keep the ranges on while suspended
        flags = getattr(code, "co_flags", 0)
        return sampler is not None and flags & 3 == 3 and not flags & 0x3A0

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
        op_codes = set()  # watched code objects whose calls may be sampled for operators

        def on_start(code, offset):
            name = names.get(code)
            if name is None:
                if not watched(code.co_qualname, code.co_filename):
                    return DISABLE
                name = names[code] = label(code.co_qualname, code.co_filename)
                if samples(code):
                    op_codes.add(code)
                if definers is not None and not code.co_flags & 3 and code.co_name in watch:
                    # a class body (neither optimized nor new locals): the frame below
                    # it ran the class statement
                    try:
                        f = sys._getframe(1)
                        while f is not None and f.f_code is not code:
                            f = f.f_back
                        if f is not None and f.f_back is not None:
                            definers.note(f.f_back.f_code, code.co_name)
                    except Exception:
                        pass
            check("push")
            push(name)
            if code in op_codes:
                op_enter(code)
            return None

        def on_return(code, offset, value):
            name = names.get(code)
            if name is None:
                return DISABLE
            if code in op_codes:
                op_leave(code)
            check("pop")
            pop(name)
            return None

        def on_unwind(code, offset, exc):
            name = names.get(code)
            if name is not None:
                if code in op_codes:
                    op_leave(code)
                check("pop")
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
            if not samples(code):
                def enter(key):
                    pass

                leave = enter
            else:
                enter, leave = op_enter, op_leave

            @functools.wraps(fn)
            def kaudit_party_frame(*args, **kwargs):
                check("push")
                push(name)
                enter(fn)
                try:
                    return fn(*args, **kwargs)
                finally:
                    leave(fn)
                    check("pop")
                    pop(name)

            return kaudit_party_frame

        def build_class(func, name, *bases, **kwds):
            cls = original_build_class(func, name, *bases, **kwds)
            try:
                body_file = func.__code__.co_filename if hasattr(func, "__code__") else ""
                if isinstance(cls, type) and watched(getattr(cls, "__qualname__", name), body_file):
                    if definers is not None and name in watch:
                        definers.note(sys._getframe(1).f_code, name)  # the code of the class statement
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
