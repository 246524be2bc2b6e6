"""check_ledger.py MANIFEST.tsv LEDGER.jsonl VALIDATORS.json - the demo corpus's
design against what kaudit made of it.

  - every manifest row has one ledger line, with the row's certificate and,
    for each of the seven weak surfaces, the row's decision;
  - `kaudit validators --format json` on the ledger has, for every surface,
    per corpus and pooled, the counts the manifest implies: records,
    decidability, false accepts (FAIL among accepted PASS or FAIL), accepted
    INCONCL, misses (accepted among FAIL), false rejects (rejected among
    PASS), and the outcome columns' totals (C0 accepted PASS, C1 rejected
    FAIL, C2 + C3a + C3b + C3c accepted FAIL).

Exit 1 with every difference listed; 0 when all hold."""
import csv
import json
import sys

SURFACES = ("KernelBench", "robust-kbench", "CUDA-Agent", "KernelGYM", "DeepReinforce", "MusaCoder", "CUDA-L1")


def expected(rows, surface):
    n = len(rows)
    cert = [r["certificate"] for r in rows]
    acc = [r[surface] == "ACCEPT" for r in rows]
    decided = [c in ("PASS", "FAIL") for c in cert]
    return {
        "records": n,
        "decidability": (sum(decided), n),
        "false_accepts": (sum(a and c == "FAIL" for a, c in zip(acc, cert)),
                          sum(a and d for a, d in zip(acc, decided))),
        "accepted_inconcl": sum(a and c == "INCONCL" for a, c in zip(acc, cert)),
        "misses": (sum(a and c == "FAIL" for a, c in zip(acc, cert)), cert.count("FAIL")),
        "false_rejects": (sum(not a and c == "PASS" for a, c in zip(acc, cert)), cert.count("PASS")),
        "C0": sum(a and c == "PASS" for a, c in zip(acc, cert)),
        "C1": sum(not a and c == "FAIL" for a, c in zip(acc, cert)),
        "accepted FAIL codes": sum(a and c == "FAIL" for a, c in zip(acc, cert)),
    }


def got(rate):
    o = rate["outcomes"]
    pair = lambda k: (rate[k]["count"], rate[k]["of"])
    return {
        "records": rate["records"],
        "decidability": pair("decidability"),
        "false_accepts": pair("false_accepts"),
        "accepted_inconcl": rate["accepted_inconcl"],
        "misses": pair("misses"),
        "false_rejects": pair("false_rejects"),
        "C0": o["C0"],
        "C1": o["C1"],
        "accepted FAIL codes": o["C2"] + o["C3a"] + o["C3b"] + o["C3c"],
    }


def main(manifest, ledger, validators):
    with open(manifest, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    problems = []
    lines = {}
    with open(ledger) as f:
        for n, line in enumerate(f, 1):
            l = json.loads(line)
            lines[l["id"]] = l
    for r in rows:
        l = lines.get(r["id"])
        if l is None:
            problems.append(f"{r['id']}: no ledger line")
            continue
        if l.get("certificate") != r["certificate"]:
            problems.append(f"{r['id']}: certificate {l.get('certificate')} ({l.get('certificate_reason')}), "
                            f"manifest {r['certificate']}")
        wd = l.get("weak_decisions") or {}
        for s in SURFACES:
            if wd.get(s) != r[s]:
                problems.append(f"{r['id']}: {s} {wd.get(s)}, manifest {r[s]}")
    with open(validators) as f:
        v = json.load(f)
    rates = {(x["validator"], x["corpus"]): x for x in v["rates"]}
    corpora = sorted({r["corpus"] for r in rows})
    for s in SURFACES:
        for corpus in corpora + ["pooled"]:
            sub = rows if corpus == "pooled" else [r for r in rows if r["corpus"] == corpus]
            rate = rates.get((s, corpus))
            if rate is None:
                problems.append(f"kaudit validators has no row for {s} / {corpus}")
                continue
            want, have = expected(sub, s), got(rate)
            for k in want:
                if want[k] != have[k]:
                    problems.append(f"{s} / {corpus}: {k} {have[k]}, the manifest implies {want[k]}")
    extra = sorted({x["validator"] for x in v["rates"]} - set(SURFACES))
    if extra:
        problems.append(f"kaudit validators scored validators the demo did not ask for: {extra}")
    for p in problems:
        print("MISMATCH:", p)
    print(f"check_ledger: {len(rows)} candidates, {len(SURFACES)} surfaces, {len(corpora)} corpora: "
          f"{len(problems)} difference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
