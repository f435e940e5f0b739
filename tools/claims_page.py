"""Write docs/claims.md ("What each paper claims and what lexprobe finds") from a main-job run's findings.

    python tools/claims_page.py RUN_DIR      # e.g. runs/main, after `bash tools/main.sh`

It copies the run's findings into benchmarks/main-job-findings.json (the record the page is built from; the docs
test rebuilds the page from it and fails when the two differ) and writes the page.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lexprobe.runs.claims_page import claims_page
from lexprobe.runs.report import PAPERS

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "benchmarks" / "main-job-findings.json"
PAGE = ROOT / "docs" / "claims.md"


def page_from_record(record: dict) -> str:
    return claims_page(record["findings"], PAPERS, source=record["source"])


def main(run_dir: str) -> None:
    report = json.loads((Path(run_dir) / "report.json").read_text(encoding="utf-8"))
    stages = ", ".join(s["key"] for s in report["sections"] if s["status"] == "done")
    record = {"source": f"the main job's run `{Path(run_dir).name}` (stages {stages}; the record: "
                        "`benchmarks/main-job-findings.json`)",
              "findings": report["findings"]}
    RECORD.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    PAGE.write_text(page_from_record(record), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)} and {RECORD.relative_to(ROOT)}: {len(record['findings'])} findings")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
