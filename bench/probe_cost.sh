#!/bin/sh
# bench/probe_cost.sh RECORD.json... - what the causal probe adds to each audit
# (issue 16 item 6; docs/audit.md, "Causal probe"): the probe's seconds, its
# replays, the audit's wall time and the probe's share, one line per record,
# then the median share.  The records of tests/gpu/probe_h200.sh are in its
# probe-records.tar.gz.
PY=${PYTHON:-python3}
"$PY" - "$@" <<'PYEOF'
import json, statistics, sys
shares = []
print("record\tprobe_state\treplays\tprobe_s\twall_s\tshare")
for path in sys.argv[1:]:
    try:
        r = json.load(open(path))
    except Exception as exc:
        print("%s\tunreadable: %s" % (path, exc))
        continue
    p = r.get("probe") or {}
    s, w = p.get("seconds"), r.get("wall_s")
    share = s / w if s is not None and w else None
    if share is not None:
        shares.append(share)
    print("%s\t%s\t%s\t%s\t%s\t%s" % (path, p.get("state", "-"), p.get("replays", "-"), s, w,
                                      "%.3f" % share if share is not None else "-"))
if shares:
    print("median share %.3f of %d audits" % (statistics.median(shares), len(shares)))
PYEOF
