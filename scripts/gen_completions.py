"""Write bash, zsh and fish completion scripts for every pk tool into completions/.

The scripts come from the tools' Click definitions (Click's own completion protocol: at each
<TAB> the shell asks the tool, which also completes live topic and group names). Run after
adding or renaming a tool; tests/test_completions.py fails while the checked-in files are stale.

    python scripts/gen_completions.py [OUTPUT_DIR]
"""

from __future__ import annotations

import importlib
import os
import sys
import tomllib

from click.shell_completion import get_completion_class

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHELLS = {"bash": "bash", "zsh": "zsh", "fish": "fish"}


def tools() -> dict[str, str]:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]["scripts"]


def render(prog: str, target: str, shell: str) -> str:
    module_name, _ = target.split(":")
    command = importlib.import_module(module_name).cli
    complete_var = f"_{prog.replace('-', '_').upper()}_COMPLETE"
    return get_completion_class(shell)(command, {}, prog, complete_var).source()


def main(out_dir: str) -> None:
    for prog, target in sorted(tools().items()):
        for shell, ext in SHELLS.items():
            folder = os.path.join(out_dir, shell)
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, f"{prog}.{ext}"), "w") as f:
                f.write(render(prog, target, shell))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "completions"))
