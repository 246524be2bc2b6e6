# tests/gpu/kernelbench_batch.sh - sourced by the GPU scripts that audit
# KernelBench tasks whose candidate hands the work back to the reference's own
# code (audit_h200.sh's batch, weak_h200.sh's kernelbench part, turns_h200.sh).

# kernelbench_batch_refs DIR: every 6th level-1 task and every 12th level-2
# task of DIR (KernelBench's KernelBench/ folder), 16 and 8 at most: a spread
# over the levels, not a choice by size.
kernelbench_batch_refs() {
    ls "$1"/level1/*.py | sort -V | awk 'NR % 6 == 1' | head -16
    ls "$1"/level2/*.py 2>/dev/null | sort -V | awk 'NR % 12 == 1' | head -8
}

# delegating_candidate REF MODULE OUT: writes OUT, a ModelNew that is REF's
# Model (loaded as module MODULE): it runs the reference's own forward.
delegating_candidate() {
    cat >"$3" <<PYEOF
import importlib.util
_spec = importlib.util.spec_from_file_location("$2", "$1")
_ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ref)
class ModelNew(_ref.Model):
    pass
PYEOF
}
