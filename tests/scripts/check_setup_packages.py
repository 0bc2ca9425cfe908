"""Every Debian package that the build, the tests and the scripts use is one that
scripts/setup.sh installs, or one they depend on: what a fresh Debian 12 machine has after
`scripts/setup.sh` (installed without recommended packages), so that a package installed by
hand on a developer's or CI's machine cannot hide a missing set-up step. Three kinds of use:
- the programs the scripts and tests run (PROGRAMS, each with who runs it);
- the shared libraries the built programs load (ldd);
- the shared libraries PyTorch loads for the checks against it (a product, a convolution and a
  one-process gloo group), in each environment those checks run in (LD_LIBRARY_PATH: OpenBLAS,
  the reference BLAS).
A file from no package is allowed under /usr/local/cuda only (the optional CUDA toolkit).
Usage: check_setup_packages.py SETUP_SH PYTHON LIBRARY_PATH,LIBRARY_PATH... BINARY..."""
import os
import re
import shutil
import subprocess
import sys

# program: who runs it
PROGRAMS = {
    "cmake": "scripts/test.sh, scripts/run.sh",
    "ninja": "the presets' generator",
    "ld.lld": "the release, asan and tsan presets' linker",
    "clang++": "the asan preset (.ci/run, scripts/fuzz.sh)",
    "mpirun": "the mpi_* tests, scripts/bench_mpi_allreduce.sh",
    "xvfb-run": "scripts/bench_ui.sh, bench_table.sh, bench_store.sh",
    "xauth": "xvfb-run, for the display's cookie",
    "Xvfb": "xvfb-run",
    "unshare": "pytorch_export_unresolved_host",
}

SETUP, PYTHON = sys.argv[1:3]
PYTORCH_LIBRARY_PATHS = sys.argv[3].split(",")
BINARIES = sys.argv[4:]


def fail(message):
    sys.exit(f"FAIL: {message}")


def setup_packages():
    listed = subprocess.run(["bash", SETUP, "--list"], capture_output=True, text=True)
    if listed.returncode != 0 or not listed.stdout.split():
        fail(f"{SETUP} --list gave no packages: {listed.stderr}")
    return listed.stdout.split()


def installed_packages():
    """Each installed package's dependency groups (Depends and Pre-Depends; a group is its
    alternatives), the packages providing each virtual name, and the packages every Debian
    machine has (Essential, or of priority required)."""
    fields = "${Package}\t${db:Status-Abbrev}\t${Depends}, ${Pre-Depends}\t${Provides}\t" \
             "${Essential}\t${Priority}\n"
    listing = subprocess.run(["dpkg-query", "-W", "-f", fields], capture_output=True,
                             text=True, check=True).stdout
    depends, providers, base = {}, {}, set()

    def names(text):
        return [re.sub(r"\s*\(.*?\)|:\w+$", "", part).strip() for part in text.split("|")]

    for line in listing.splitlines():
        package, status, dependencies, provides, essential, priority = line.split("\t")
        if not status.startswith("ii"):
            continue
        depends[package] = [names(group) for group in dependencies.split(",") if group.strip()]
        for virtual in provides.split(","):
            if virtual.strip():
                providers.setdefault(names(virtual)[0], []).append(package)
        if essential == "yes" or priority == "required":
            base.add(package)
    return depends, providers, base


def closure(listed, base, depends, providers):
    """The packages that installing `listed` (in one apt command, without recommended packages)
    brings to a machine that has `base`: for each dependency group, a listed package that
    satisfies it if there is one (apt takes what it installs anyway), else the first
    alternative an installed package satisfies."""
    def satisfying(alternative):
        return [alternative] if alternative in depends else providers.get(alternative, [])

    seen, todo = set(), list(listed) + sorted(base)
    while todo:
        package = todo.pop()
        if package in seen or package not in depends:
            continue
        seen.add(package)
        for group in depends[package]:
            chosen = [p for alternative in group for p in satisfying(alternative)
                      if p in listed or p in base]
            if not chosen:
                chosen = next((found for found in map(satisfying, group) if found), [])
            todo.extend(chosen[:1] if chosen else [])
    return seen


def package_of(path):
    """The installed package that owns `path` (dpkg records a file under /lib or /usr/lib as
    its package shipped it; Debian 12 merges the two), or None."""
    real = os.path.realpath(path)
    variants = {path, real}
    for candidate in list(variants):
        variants.add(candidate[4:] if candidate.startswith("/usr/") else "/usr" + candidate)
    for candidate in variants:
        owner = subprocess.run(["dpkg-query", "-S", candidate], capture_output=True, text=True)
        if owner.returncode == 0:
            return owner.stdout.split(":")[0].split(",")[0].strip()
    return None


def libraries_of_binary(binary):
    listing = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    return [match.group(1) for match in re.finditer(r"=> (/\S+)", listing)]


PYTORCH_PROBE = """
import os, tempfile, torch, numpy, torch.distributed as dist
torch.ones(8, 8) @ torch.ones(8, 8)
torch.nn.functional.conv2d(torch.ones(1, 1, 8, 8), torch.ones(2, 1, 3, 3))
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="0", GLOO_SOCKET_IFNAME="lo")
dist.init_process_group("gloo", rank=0, world_size=1,
                        init_method="file://" + tempfile.mktemp())
with open("/proc/self/maps") as maps:
    print("\\n".join(sorted({l.split()[-1] for l in maps if ".so" in l.split()[-1]})))
"""


def libraries_of_pytorch(library_path):
    """What PyTorch loads with LD_LIBRARY_PATH=`library_path`."""
    probe = subprocess.run([PYTHON, "-c", PYTORCH_PROBE], capture_output=True, text=True,
                           env={**os.environ, "LD_LIBRARY_PATH": library_path})
    if probe.returncode != 0:
        fail(f"PyTorch could not run a product, a convolution and a gloo group with "
             f"LD_LIBRARY_PATH={library_path}:\n{probe.stderr}")
    return probe.stdout.split()


def main():
    depends, providers, base = installed_packages()
    brought = closure(set(setup_packages()), base, depends, providers)
    uses = {}
    for program, who in PROGRAMS.items():
        found = shutil.which(program)
        if not found:
            fail(f"{program} ({who}) is not installed: scripts/setup.sh must install it")
        uses[found] = f"{program} ({who})"
    for binary in BINARIES:
        for library in libraries_of_binary(binary):
            uses.setdefault(library, f"{library}, loaded by {os.path.basename(binary)}")
    for library_path in PYTORCH_LIBRARY_PATHS:
        for library in libraries_of_pytorch(library_path):
            uses.setdefault(library, f"{library}, loaded by PyTorch with LD_LIBRARY_PATH="
                                     f"{library_path}")
    problems = []
    for path, use in sorted(uses.items()):
        package = package_of(path)
        if package is None:
            if not os.path.realpath(path).startswith("/usr/local/cuda"):
                problems.append(f"{use} comes from no Debian package")
        elif package not in brought:
            problems.append(f"{use} comes from {package}, which scripts/setup.sh does not "
                            f"install (add it to its packages)")
    if problems:
        fail("\n".join(problems))
    print(f"ok: {len(uses)} programs and libraries, each from one of the {len(brought)} "
          f"packages that scripts/setup.sh's {len(setup_packages())} bring")


main()
