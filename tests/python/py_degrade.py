"""py_degrade.py SITECUSTOMIZE MODE - run kaudit's sitecustomize by hand in an
interpreter made to look unsupported (run under `kaudit run --no-python`, so
the real one did not run first):
  free_threaded   sys._is_gil_enabled() returns False
  old_python      sys.version_info says 3.9
The trace must say that provenance is off and why; nothing may be printed."""
import runpy
import sys

mode = sys.argv[2]
if mode == "free_threaded":
    sys._is_gil_enabled = lambda: False
elif mode == "old_python":
    sys.version_info = (3, 9, 18, "final", 0)
runpy.run_path(sys.argv[1], run_name="sitecustomize")
print("done", mode)
