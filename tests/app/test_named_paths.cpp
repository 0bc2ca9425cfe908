// Every file of the repository that the README, the docs and scalelab-cli's help name
// (scripts/gpu/check.sh, docs/errors.md, engine/train/trainer.h, ...) exists, so that a file
// moved or renamed leaves no stale pointer for a user to follow. The files are read where they
// are (SCALELAB_SOURCE_DIR); the last test shows that the check does fail on a stale path.

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QtTest>

#include <string>

#include "cli/bench_allreduce_options.h"
#include "cli/bench_options.h"
#include "cli/bench_sgemm_options.h"
#include "cli/lesson_options.h"
#include "cli/runs_options.h"
#include "cli/train_options.h"

using namespace scalelab::cli;

namespace {

QString source_path(const QString& relative) {
    return QDir(QStringLiteral(SCALELAB_SOURCE_DIR)).filePath(relative);
}

QString read_text(const QString& relative) {
    QFile file(source_path(relative));
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

// The paths `text` names under the repository's top folders, each once: a word that starts with
// one of them and a slash, up to its last letter or digit ("scripts/gpu/check.sh", not the
// sentence's full stop after it).
QStringList named_paths(const QString& text) {
    static const QRegularExpression path(QStringLiteral(
        R"((?<![\w./-])((?:app|cmake|docs|engine|resources|scripts|tests|ui)/[\w./-]*\w))"));
    QStringList paths;
    for (auto match = path.globalMatch(text); match.hasNext();)
        paths.append(match.next().captured(1));
    paths.removeDuplicates();
    return paths;
}

// The named paths that are not in the repository, each with where it was named.
QStringList missing_paths(const QString& where, const QString& text) {
    QStringList missing;
    for (const QString& path : named_paths(text))
        if (!QFileInfo::exists(source_path(path)))
            missing.append(where + ": " + path);
    return missing;
}

QString cli_help_text() {
    std::string text = train_help() + bench_help() + bench_sgemm_help() + bench_allreduce_help() +
                       lesson_help() + runs_usage();
    for (RunsAction action : {RunsAction::List, RunsAction::Show, RunsAction::Export,
                              RunsAction::Import, RunsAction::Delete})
        text += runs_help(action);
    return QString::fromStdString(text);
}

}  // namespace

class TestNamedPaths : public QObject {
    Q_OBJECT

  private slots:
    void theReadmeAndTheDocsNameOnlyFilesThatExist() {
        QStringList documents{QStringLiteral("README.md")};
        for (const QString& name :
             QDir(source_path(QStringLiteral("docs"))).entryList({QStringLiteral("*.md")}))
            documents.append(QStringLiteral("docs/") + name);
        QVERIFY(documents.size() > 1);
        QStringList missing;
        for (const QString& document : documents) {
            const QString text = read_text(document);
            QVERIFY2(!text.isEmpty(), qPrintable(document));
            missing += missing_paths(document, text);
        }
        QVERIFY2(missing.isEmpty(), qPrintable(missing.join('\n')));
    }

    void theCliHelpNamesOnlyFilesThatExist() {
        const QString help = cli_help_text();
        QVERIFY(named_paths(help).contains(QStringLiteral("scripts/gpu/check.sh")));
        const QStringList missing = missing_paths(QStringLiteral("scalelab-cli help"), help);
        QVERIFY2(missing.isEmpty(), qPrintable(missing.join('\n')));
    }

    // The check finds a path in running text and fails on one that is not there.
    void aStalePathIsFound() {
        const QString text = QStringLiteral(
            "run scripts/gpu_check.sh (see docs/errors.md, E-RUN-OUT-OF-MEMORY), not "
            "my_scripts/x.sh.");
        QCOMPARE(named_paths(text), QStringList({QStringLiteral("scripts/gpu_check.sh"),
                                                 QStringLiteral("docs/errors.md")}));
        QCOMPARE(missing_paths(QStringLiteral("text"), text),
                 QStringList{QStringLiteral("text: scripts/gpu_check.sh")});
    }
};

QTEST_APPLESS_MAIN(TestNamedPaths)
#include "test_named_paths.moc"
