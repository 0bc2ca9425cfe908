#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>

// scalelab-cli run as a user runs it: SCALELAB_CLI_PATH (set by CMake for the test) with
// `args`, stdin an empty pipe rather than a terminal.

namespace scalelab::testing {

struct CliResult {
    int exit_code = -1;
    bool crashed = false;
    QString out;
    QString err;
};

// Waits for the program to end; after `timeout_ms` it is killed and err says "timed out".
inline CliResult run_cli(const QStringList& args, int timeout_ms = 120'000) {
    QProcess process;
    process.start(QStringLiteral(SCALELAB_CLI_PATH), args);
    process.closeWriteChannel();
    CliResult result;
    if (!process.waitForFinished(timeout_ms)) {
        process.kill();
        process.waitForFinished();
        result.err = QStringLiteral("timed out");
        return result;
    }
    result.crashed = process.exitStatus() == QProcess::CrashExit;
    result.exit_code = process.exitCode();
    result.out = QString::fromUtf8(process.readAllStandardOutput());
    result.err = QString::fromUtf8(process.readAllStandardError());
    return result;
}

}  // namespace scalelab::testing
