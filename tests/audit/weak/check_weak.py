"""check_weak.py TSV RECORDS_DIR - compares each row of the weak surfaces'
controls (tests/audit/weak/controls.tsv) with the record RECORDS_DIR/NAME.json
that `kaudit audit --weak-surfaces all` wrote: the semantic verdict, every
surface's decision, and the row's reasons (SURFACE=substring, ';'-separated)
must hold.  Prints one line per row; exit 1 on any mismatch."""
import json
import os
import sys

SURFACES = ("KernelBench", "robust-kbench", "CUDA-Agent", "KernelGYM", "DeepReinforce", "MusaCoder", "CUDA-L1")


def main(tsv, records):
    bad = 0
    rows = 0
    with open(tsv) as f:
        header = f.readline().rstrip("\n").split("\t")
        if tuple(header[4:11]) != SURFACES:
            print(f"{tsv}: line 1: the surface columns are {header[4:11]}, expected {list(SURFACES)}")
            return 99
        for lineno, line in enumerate(f, 2):
            cols = line.rstrip("\n").split("\t")
            if not cols[0]:
                continue
            rows += 1
            name, semantic, want = cols[0], cols[3], dict(zip(SURFACES, cols[4:11]))
            reasons = [r.split("=", 1) for r in cols[11].split(";") if r] if len(cols) > 11 else []
            problems = []
            try:
                with open(os.path.join(records, name + ".json")) as rf:
                    rec = json.load(rf)
            except (OSError, ValueError) as exc:
                print(f"{name:24s} MISMATCH: no record ({exc})")
                bad += 1
                continue
            got_sem = rec["axes"]["semantic"]["verdict"]
            if got_sem != semantic:
                problems.append(f"semantic {got_sem}, want {semantic}")
            ws = rec.get("weak_surfaces") or {}
            if sorted(ws) != sorted(SURFACES):
                problems.append(f"surfaces {sorted(ws)}, want all seven")
            for s in SURFACES:
                got = ws.get(s, {}).get("decision")
                if got != want[s]:
                    problems.append(f"{s} {got} ({ws.get(s, {}).get('reason')}), want {want[s]}")
            for s, text in reasons:
                reason = ws.get(s, {}).get("reason", "")
                if text not in reason:
                    problems.append(f"{s}'s reason '{reason}' lacks '{text}'")
            decisions = " ".join(("A" if ws.get(s, {}).get("decision") == "ACCEPT" else "R") for s in SURFACES)
            print(f"{name:24s} {got_sem:13s} {decisions}  " + ("ok" if not problems else "MISMATCH: " + "; ".join(problems)))
            bad += bool(problems)
    print(f"check_weak: {rows - bad} of {rows} rows as expected")
    return 1 if bad or not rows else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
