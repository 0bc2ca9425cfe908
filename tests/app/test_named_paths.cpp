// Every file of the repository that the README, CONTRIBUTING.md, the docs and scalelab-cli's
// help name (scripts/gpu/check.sh, docs/errors.md, engine/train/trainer.h, ...) exists, so that a
// file moved or renamed leaves no stale pointer for a user to follow; and every command they show
// is one that runs: each scalelab-cli command, its subcommand and its flags are in that command's
// help, each --preset is in CMakePresets.json. The files are read where they are
// (SCALELAB_SOURCE_DIR); the last tests show that the checks do fail on a stale path, flag or
// preset.

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QtTest>

#include <algorithm>
#include <string>
#include <utility>

#include "cli/bench_allreduce_options.h"
#include "cli/bench_options.h"
#include "cli/bench_sgemm_options.h"
#include "cli/export_command.h"
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

// The documents checked: the README, CONTRIBUTING.md and every Markdown file of docs/.
QStringList documents() {
    QStringList documents{QStringLiteral("README.md"), QStringLiteral("CONTRIBUTING.md")};
    for (const QString& name :
         QDir(source_path(QStringLiteral("docs"))).entryList({QStringLiteral("*.md")}))
        documents.append(QStringLiteral("docs/") + name);
    return documents;
}

// The code a Markdown text shows: each line of a fenced block (a line ending in a backslash
// joined with the next, as the shell does) and each inline code span (which may run over the
// lines of its paragraph).
QStringList code_of(const QString& text) {
    static const QRegularExpression span(QStringLiteral("`([^`]+)`"));
    QStringList code;
    QString paragraph, continued;
    bool fenced = false;
    const auto end_paragraph = [&] {
        for (auto match = span.globalMatch(paragraph); match.hasNext();)
            code.append(match.next().captured(1));
        paragraph.clear();
    };
    for (const QString& line : text.split('\n')) {
        if (line.trimmed().startsWith(QStringLiteral("```"))) {
            end_paragraph();
            fenced = !fenced;
            continue;
        }
        if (fenced) {
            continued += line;
            if (continued.endsWith('\\'))
                continued.chop(1);
            else
                code.append(std::exchange(continued, QString()));
        } else if (line.trimmed().isEmpty()) {
            end_paragraph();
        } else {
            paragraph += line + ' ';
        }
    }
    end_paragraph();
    return code;
}

// The help that lists the flags of the command in `words` (what follows "scalelab-cli"), and
// how many of the words name the command; an empty help for a command that does not exist.
std::pair<std::string, int> help_of(const QStringList& words) {
    const QString command = words.value(0);
    const QString sub = words.value(1);
    if (command == QStringLiteral("train"))
        return {train_help(), 1};
    if (command == QStringLiteral("lesson"))
        return {lesson_help(),
                sub == QStringLiteral("list") || sub == QStringLiteral("run") ? 2 : 1};
    if (command == QStringLiteral("export"))  // export pytorch takes the train flags and --out
        return {sub == QStringLiteral("pytorch") ? export_help() + train_help() : "",
                sub == QStringLiteral("pytorch") ? 2 : 1};
    if (command == QStringLiteral("devices") || command == QStringLiteral("fields"))
        return {"--help", 1};  // their one flag (cli/devices_command.h, cli/fields_command.h)
    if (command == QStringLiteral("bench")) {
        if (sub == QStringLiteral("train"))
            return {bench_help(), 2};
        if (sub == QStringLiteral("sgemm"))
            return {bench_sgemm_help(), 2};
        if (sub == QStringLiteral("allreduce"))
            return {bench_allreduce_help(), 2};
        return {sub.startsWith(QStringLiteral("--")) || sub.isEmpty() ? bench_help() : "", 1};
    }
    if (command == QStringLiteral("runs")) {
        const std::pair<const char*, RunsAction> actions[] = {{"list", RunsAction::List},
                                                              {"show", RunsAction::Show},
                                                              {"export", RunsAction::Export},
                                                              {"import", RunsAction::Import},
                                                              {"delete", RunsAction::Delete}};
        for (const auto& [name, action] : actions)
            if (sub == QLatin1String(name))
                return {runs_help(action), 2};
        return {sub.startsWith(QStringLiteral("--")) || sub.isEmpty() ? runs_usage() : "", 1};
    }
    if (command == QStringLiteral("--help") || command == QStringLiteral("--version"))
        return {"--help --version", 0};
    return {"", 0};
}

// The scalelab-cli commands in `code` that would not run: a command or subcommand that does not
// exist, or a flag that is not in its help; and every --preset that CMakePresets.json lacks.
QStringList stale_commands(const QString& where, const QString& code) {
    static const QRegularExpression separator(QStringLiteral(R"(\s(?:\||;|&&|#)\s|\$\(|\))"));
    static const QRegularExpression flag(QStringLiteral(R"(^\[?\K--[a-z][a-z0-9-]*)"));
    static const QRegularExpression preset(QStringLiteral(R"(--preset\s+([\w-]+))"));
    QStringList stale;
    for (const QString& command : code.split(separator)) {
        QStringList words = command.split(' ', Qt::SkipEmptyParts);
        const auto cli = std::find_if(words.begin(), words.end(), [](const QString& word) {
            return word == QStringLiteral("scalelab-cli") ||
                   word.endsWith(QStringLiteral("/scalelab-cli"));
        });
        if (cli == words.end() || cli + 1 == words.end())
            continue;
        words.erase(words.begin(), cli + 1);
        const auto [help, named] = help_of(words);
        if (help.empty()) {
            stale.append(where + ": no command " + words.mid(0, 2).join(' '));
            continue;
        }
        const QString help_text = QString::fromStdString(help);
        for (const QString& word : words.mid(named)) {
            const QString name = flag.match(word).captured();
            if (!name.isEmpty() && name != QStringLiteral("--help") &&
                !help_text.contains(QRegularExpression(QRegularExpression::escape(name) +
                                                       QStringLiteral(R"((?![\w-]))"))))
                stale.append(where + ": " + name + " is not a flag of scalelab-cli " +
                             words.mid(0, named).join(' '));
        }
    }
    static const QString presets = read_text(QStringLiteral("CMakePresets.json"));
    for (auto match = preset.globalMatch(code); match.hasNext();) {
        const QString name = match.next().captured(1);
        if (!presets.contains(QStringLiteral("\"name\": \"%1\"").arg(name)))
            stale.append(where + ": no preset " + name);
    }
    return stale;
}

}  // namespace

class TestNamedPaths : public QObject {
    Q_OBJECT

  private slots:
    void theReadmeAndTheDocsNameOnlyFilesThatExist() {
        QVERIFY(documents().size() > 2);
        QStringList missing;
        for (const QString& document : documents()) {
            const QString text = read_text(document);
            QVERIFY2(!text.isEmpty(), qPrintable(document));
            missing += missing_paths(document, text);
        }
        QVERIFY2(missing.isEmpty(), qPrintable(missing.join('\n')));
    }

    void theReadmeAndTheDocsShowOnlyCommandsThatRun() {
        QStringList stale;
        int commands = 0;
        for (const QString& document : documents())
            for (const QString& code : code_of(read_text(document))) {
                commands += code.contains(QStringLiteral("scalelab-cli "));
                stale += stale_commands(document, code);
            }
        QVERIFY2(commands >= 20, "the docs show fewer scalelab-cli commands than they did");
        QVERIFY2(stale.isEmpty(), qPrintable(stale.join('\n')));
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

    // The check finds a command in a code block or span and fails on a flag, a subcommand or a
    // preset that is not there.
    void aStaleCommandIsFound() {
        const QString text = QStringLiteral(
            "Run `scalelab-cli runs list --json`, `scalelab-cli lesson run 3 [--seeds N]` or\n"
            "`scalelab-cli bench sgemm\n--threads 1,2`:\n\n"
            "```sh\n"
            "scalelab-cli train --model cnn \\\n"
            "    --no-such-flag | grep epoch   # --not-a-flag either\n"
            "build/release/app/scalelab-cli runs rename 3\n"
            "cmake --preset release && ctest --preset nightly\n"
            "```\n");
        const QStringList code = code_of(text);
        QCOMPARE(code,
                 QStringList({QStringLiteral("scalelab-cli runs list --json"),
                              QStringLiteral("scalelab-cli lesson run 3 [--seeds N]"),
                              QStringLiteral("scalelab-cli bench sgemm --threads 1,2"),
                              QStringLiteral("scalelab-cli train --model cnn     --no-such-flag "
                                             "| grep epoch   # --not-a-flag either"),
                              QStringLiteral("build/release/app/scalelab-cli runs rename 3"),
                              QStringLiteral("cmake --preset release && ctest --preset nightly")}));
        QStringList stale;
        for (const QString& piece : code)
            stale += stale_commands(QStringLiteral("text"), piece);
        QCOMPARE(stale, QStringList({QStringLiteral("text: --seeds is not a flag of scalelab-cli "
                                                    "lesson run"),
                                     QStringLiteral("text: --no-such-flag is not a flag of "
                                                    "scalelab-cli train"),
                                     QStringLiteral("text: no command runs rename"),
                                     QStringLiteral("text: no preset nightly")}));
    }
};

QTEST_APPLESS_MAIN(TestNamedPaths)
#include "test_named_paths.moc"
