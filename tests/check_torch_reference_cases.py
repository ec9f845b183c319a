"""ctest tools.torch_reference_cases_are_the_binarys: tools/torch_reference.py's cases against the
listing of the cubench it reads them from, so the two never drift apart:
  - every name its --list prints is a name the binary lists, or (torch_cases.TORCH_IN_PLACE_OF,
    NAMED_AS_FAMILY) a listed configuration's with "torch" in its variant's place or another
    family's name;
  - every configuration the binary lists of a family the reference covers has its case or a
    reason in --left-out (never both, never neither);
  - a covered family the binary lists nothing of is one this build is known to leave out
    (--absent FAMILY=WHY, from the build's options: CPU-only LibTorch, no cuDNN), and said so.

    tools/pyrun ../tests/check_torch_reference_cases.py BINARY [--absent FAMILY=WHY ...]

Runs without a GPU or PyTorch. Exit status 1, one line per fault, where the two disagree.
"""
import collections
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(HERE, "..", "tools")
sys.path.insert(0, TOOLS)
from cubench_tools import axes_listing, torch_cases  # noqa: E402

SUFFIX = "/manual_time"


def reference(binary, flag):
    """The lines torch_reference.py prints for --list or --left-out."""
    done = subprocess.run([sys.executable, os.path.join(TOOLS, "torch_reference.py"), flag,
                           "--out", os.devnull, "--cubench-binary", binary],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"torch_reference.py {flag} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout.splitlines()


def faults_of(rows, names, left_out, absent_ok):
    """What does not agree, one line each (empty: they agree)."""
    faults = []
    listed = {r.name for r in rows}
    covered = [r for r in rows if r.family in torch_cases.RULES]
    stands_for = {}  # a reference name -> the covered configurations it stands beside
    for r in covered:
        stands_for.setdefault(torch_cases.reference_name(r), []).append(r)
    for name in names:
        if name not in listed and name not in stands_for:
            faults.append(f"torch_reference.py's {name} is no name cubench lists, nor one its "
                          "naming tables make of one")
        elif name in listed and not any(r.name == name for r in stands_for.get(name, [])):
            faults.append(f"torch_reference.py's {name} is a configuration of cubench's it does "
                          "not stand beside (of a family it does not cover, or one it names "
                          "otherwise)")
    for name, count in collections.Counter(names).items():
        if count > 1:
            faults.append(f"torch_reference.py lists {name} {count} times")
    made = set(names)
    for r in covered:
        has_case, why = torch_cases.reference_name(r) in made, left_out.get(r.name)
        if has_case and why is not None:
            faults.append(f"{r.name} has a case and is also left out ({why})")
        elif not has_case and not why:
            faults.append(f"{r.name} (family {r.family}) has no case and no reason in --left-out")
    for name in left_out:
        if name not in listed:
            faults.append(f"--left-out names {name}, which cubench does not list")
    families = {r.family for r in rows}
    for family in torch_cases.RULES:
        if family not in families and family not in absent_ok:
            faults.append(f"cubench lists no {family} configuration, and this build is not known "
                          "to leave the family out")
        if family in families and family in absent_ok:
            faults.append(f"cubench lists {family}, which this build was said to leave out "
                          f"({absent_ok[family]})")
    return faults


def main(argv):
    if not argv:
        sys.exit("usage: check_torch_reference_cases.py BINARY [--absent FAMILY=WHY ...]")
    binary, absent_ok, rest = argv[0], {}, argv[1:]
    while rest:
        if rest[0] != "--absent" or len(rest) < 2 or "=" not in rest[1]:
            sys.exit(f"check_torch_reference_cases.py: want --absent FAMILY=WHY, got {rest[0]}")
        family, why = rest[1].split("=", 1)
        absent_ok[family] = why
        rest = rest[2:]
    rows = axes_listing.run(binary)
    names = [line.removesuffix(SUFFIX) for line in reference(binary, "--list")]
    left_out = {}
    for line in reference(binary, "--left-out"):
        name, _, why = line.partition("\t")
        left_out[name.removesuffix(SUFFIX)] = why
    faults = faults_of(rows, names, left_out, absent_ok)
    for fault in faults:
        print(fault, file=sys.stderr)
    if faults:
        return 1
    covered = {r.family for r in rows if r.family in torch_cases.RULES}
    print(f"{len(names)} torch_reference.py cases, each a name of cubench's (or of its naming "
          f"tables); {len(left_out)} configurations of its {len(covered)} families here left out, "
          "each saying why:")
    for why in sorted(set(left_out.values())):
        print(f"  {sum(w == why for w in left_out.values())}: {why}")
    for family in torch_cases.RULES:
        if family not in covered:
            print(f"not in this build, so not checked here: {family} ({absent_ok[family]})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
