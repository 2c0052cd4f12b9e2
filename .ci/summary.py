"""Sum the pytest runs of one CI run into the log's closing line.

Each pytest run of ``.ci/run`` is tee'd to ``<name>.log``; its own closing
line (``== 1746 passed, 35 skipped, 6 xfailed in 162.31s ==``, or the same
without the rules under ``-q``) is read back here, echoed per run, and summed
into one last line in pytest's own form, so that a reader of CI logs
(human or parser) recognises it as the run's test count::

    ================ 2751 passed, 0 failed, 58 skipped in 812.40s ================

"failed" is always written (pytest omits zero counts) so that the line states
both numbers; the time is the sum of the runs' own times.

Errors count as failed; skipped, xfailed and xpassed as skipped (they are
listed per run above the total). A run whose log has no closing line counts
as one failure: pytest did not finish. Exit status 1 on any failure, or when
no test passed at all.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# pytest's closing line: counts, then " in 12.34s" (optionally "(0:00:12)").
CLOSING = re.compile(r"^=*\s*((?:\d+ [a-z]+(?:, )?)+) in ([\d.]+)s\b")
COUNT = re.compile(r"(\d+) ([a-z]+)")


def closing_counts(log: Path) -> tuple[str, dict[str, int], float] | None:
    """The last pytest closing line of ``log``, its counts and seconds, or None."""
    found = None
    for line in log.read_text(errors="replace").splitlines():
        match = CLOSING.match(line.strip())
        if match:
            counts: dict[str, int] = {}
            for number, word in COUNT.findall(match.group(1)):
                counts[word] = counts.get(word, 0) + int(number)
            found = (line.strip().strip("= "), counts, float(match.group(2)))
    return found


def main(paths: list[str]) -> int:
    passed = failed = skipped = 0
    seconds = 0.0
    for path in map(Path, paths):
        result = closing_counts(path)
        if result is None:
            print(f"{path.stem}: no pytest closing line (run did not finish)")
            failed += 1
            continue
        line, counts, run_seconds = result
        seconds += run_seconds
        print(f"{path.stem}: {line}")
        passed += counts.get("passed", 0)
        failed += counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
        skipped += counts.get("skipped", 0) + counts.get("xfailed", 0) + counts.get("xpassed", 0)
    sys.stdout.flush()
    counts = f"{passed} passed, {failed} failed, {skipped} skipped in {seconds:.2f}s"
    print(f" {counts} ".center(max(80, len(counts) + 4), "="), flush=True)
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
