"""floors.py — tools/floors.txt, the house's floors (lowest first), for the tools that check the house."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def floors():
    """The floors, lowest first: a list of lists of folder names."""
    out = []
    with open(os.path.join(ROOT, "tools", "floors.txt"), encoding="utf-8") as fh:
        for line in fh:
            line = line.split("#", 1)[0].split()
            if line:
                out.append(line)
    return out


def folders():
    """Every source folder, lowest floor first."""
    return [d for fl in floors() for d in fl]
