"""The operator sampler's bookkeeping (preload/python/sitecustomize.py,
_kaudit_operator_sampler): which calls switch PyTorch's NVTX operator ranges
on, that nested watched frames and a profiler the program runs itself are
left alone, and that a failure is said once.

PyTorch's profiler entry points are replaced by recorders here: what is
tested is our schedule and nesting, not PyTorch (python_operators.sh runs
the sampler on real PyTorch too).  Usage: operator_sampler_check.py SITECUSTOMIZE
"""
import importlib.util
import sys
import types

spec = importlib.util.spec_from_file_location("kaudit_site", sys.argv[1])
site = importlib.util.module_from_spec(spec)
spec.loader.exec_module(site)   # not under kaudit run: installs nothing

failures = []


def expect(what, cond):
    if not cond:
        failures.append(what)


class Profiler:
    def __init__(self, config_args=7, fail=None):
        self.events = []
        self.on = False
        self.program_on = False
        self.fail = fail
        autograd = types.SimpleNamespace()
        prof = types.SimpleNamespace()
        outer = self

        class ProfilerConfig:
            def __init__(self, *args):
                if len(args) != config_args:
                    raise TypeError("takes %d arguments" % config_args)
                self.args = args

        prof.ProfilerConfig = ProfilerConfig
        prof.ProfilerState = types.SimpleNamespace(NVTX="NVTX")
        prof._ExperimentalConfig = lambda: "experimental"

        def enable(config, scopes):
            if outer.fail:
                raise RuntimeError(outer.fail)
            assert config.args[0] == "NVTX" and config.args[1] is True
            outer.on = True
            outer.events.append("on")

        def disable():
            outer.on = False
            outer.events.append("off")

        autograd._enable_profiler = enable
        autograd._disable_profiler = disable
        autograd._profiler_enabled = lambda: outer.on or outer.program_on
        self.torch = types.ModuleType("torch")
        self.torch._C = types.SimpleNamespace(_autograd=autograd, _profiler=prof)


def sampler(profiler):
    said = []
    sys.modules["torch"] = profiler.torch
    enter, leave = site._kaudit_operator_sampler(said.append)
    return enter, leave, said


# 1. the schedule: calls 1, 2, 3, 64, 256 of one function, each switched off on leaving
p = Profiler()
enter, leave, said = sampler(p)
on_calls = []
for n in range(1, 301):
    before = len(p.events)
    enter("forward")
    if p.on:
        on_calls.append(n)
    leave("forward")
    expect("off after call %d" % n, not p.on)
expect("sampled calls 1, 2, 3, 64, 256 (got %s)" % on_calls, on_calls == [1, 2, 3, 64, 256])
expect("said on once (%s)" % said, said.count(said[0]) == 1 and said[0].startswith("operators on:"))

# 2. a second function has its own count
enter("helper")
expect("first call of another function sampled", p.on)
leave("helper")

# 3. nested watched frames: only the outermost switches, and does not count the inner ones
p = Profiler()
enter, leave, said = sampler(p)
enter("forward")
enter("inner")
expect("inner frame keeps it on", p.on)
leave("inner")
expect("leaving the inner frame keeps it on", p.on)
leave("forward")
expect("leaving the outer frame switches off", not p.on and p.events == ["on", "off"])
enter("inner")
expect("inner's first call as outermost is sampled", p.on)
leave("inner")

# 4. the program's own profiler: never switched on over it, never switched off
p = Profiler()
enter, leave, said = sampler(p)
p.program_on = True
enter("forward")
leave("forward")
expect("nothing done under the program's profiler (%s)" % p.events, p.events == [])

# 5. a ProfilerConfig that takes a trace id (newer PyTorch)
p = Profiler(config_args=8)
enter, leave, said = sampler(p)
enter("forward")
expect("eight-argument ProfilerConfig works", p.on)
leave("forward")

# 6. a failure is said once and changes nothing
p = Profiler(fail="Can't use NVTX profiler - PyTorch was compiled without CUDA")
enter, leave, said = sampler(p)
for _ in range(3):
    enter("forward")
    leave("forward")
expect("failure said once (%s)" % said, len(said) == 1 and said[0].startswith("operators off: RuntimeError: Can't use"))

# 7. an exception inside PyTorch's entry points (even one whose str() raises) never reaches the program
class Nasty(Exception):
    def __str__(self):
        raise RuntimeError("str failed")


p = Profiler()
enter, leave, said = sampler(p)


def nasty_enable(config, activities):
    raise Nasty()


p.torch._C._autograd._enable_profiler = nasty_enable
try:
    enter("forward")
    leave("forward")
    ok = True
except BaseException as exc:  # noqa: B902
    ok = False
expect("an exception from PyTorch stays inside the sampler", ok)

# 8. off by the environment
import os
os.environ["KAUDIT_PYTHON_OPERATORS"] = "off"
said = []
expect("off by KAUDIT_PYTHON_OPERATORS=off", site._kaudit_operator_sampler(said.append) is None
       and said == ["operators off: KAUDIT_PYTHON_OPERATORS=off"])
os.environ["KAUDIT_PYTHON_OPERATORS"] = "all"
p = Profiler()
enter, leave, said = sampler(p)
count = 0
for _ in range(5):
    enter("forward")
    count += p.on
    leave("forward")
expect("every call with KAUDIT_PYTHON_OPERATORS=all", count == 5)

for f in failures:
    print("FAIL:", f)
print("operator sampler: %d failures" % len(failures))
sys.exit(1 if failures else 0)
