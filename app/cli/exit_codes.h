#pragma once

namespace scalelab::cli {

// The exit codes scripts can rely on (docs/cli.md, "Exit codes").
enum ExitCode : int {
    exit_ok = 0,           // finished, or reached the target accuracy
    exit_failed = 1,       // the run failed (a bug, or the machine)
    exit_bad_input = 2,    // a flag, config file or dataset to fix; nothing was run
    exit_diverged = 3,     // the loss became NaN or infinite
    exit_cancelled = 130,  // Ctrl-C, as a shell reports a process stopped by SIGINT
    exit_terminated = 143  // SIGTERM (kill, systemd, Slurm): cancelled and recorded as for Ctrl-C
};

}  // namespace scalelab::cli
