"""The Python ScaleLab hands to users is clean: the train_ddp.py `scalelab-cli export pytorch`
writes, and each module of resources/pytorch/ on its own (train_ddp_main.py only as part of
train_ddp.py: it is the script's last part, not a module), compile and pass pyflakes (Debian's
python3-pyflakes); train_ddp.py's parts define no top-level name twice (in the one file a
second definition would silently replace the first); no line is longer than 100 characters.
Usage: check_script_lint.py SCALELAB_CLI RESOURCES_PYTORCH_DIR"""
import ast
import collections
import glob
import os
import py_compile
import subprocess
import sys
import tempfile

from pytorch_checks import skip_without

skip_without("pyflakes")

CLI, RESOURCES = sys.argv[1:3]
LONGEST = 100


def top_level_names(tree):
    """The names the module's own statements bind at its top: functions, classes and plain
    assignments (imports are train_ddp.py's header, bound once)."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            yield node.name
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    yield target.id


problems = []
with tempfile.TemporaryDirectory() as folder:
    export = subprocess.run([CLI, "export", "pytorch", "--model", "resnet8", "--out", folder],
                            capture_output=True, text=True)
    if export.returncode != 0:
        sys.exit(f"FAIL: the export exited {export.returncode}: {export.stderr}")
    script = os.path.join(folder, "train_ddp.py")
    modules = [path for path in sorted(glob.glob(os.path.join(RESOURCES, "*.py")))
               if not path.endswith("train_ddp_main.py")]
    for path in [script, *modules]:
        py_compile.compile(path, doraise=True)
        with open(path) as source:
            text = source.read()
        problems += [f"{os.path.basename(path)}:{number}: {len(line)} characters"
                     for number, line in enumerate(text.splitlines(), start=1)
                     if len(line) > LONGEST]
    flakes = subprocess.run([sys.executable, "-m", "pyflakes", script, *modules],
                            capture_output=True, text=True)
    problems += [line for line in (flakes.stdout + flakes.stderr).splitlines() if line]
    with open(script) as source:
        counts = collections.Counter(top_level_names(ast.parse(source.read())))
    problems += [f"train_ddp.py defines {name} {count} times"
                 for name, count in counts.items() if count > 1]
if problems:
    sys.exit("FAIL:\n" + "\n".join(problems))
print(f"ok: train_ddp.py and {len(modules)} modules compile, pass pyflakes and define each "
      f"name once ({len(counts)} names)")
