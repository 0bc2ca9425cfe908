// A run store in trouble, as the store and scalelab-cli meet it: damaged pages, a read-only
// file or folder, a lock held by another program. What can be read is read, nothing is written
// to it, and each message says what is wrong and what to do.

#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <grp.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "cli_process.h"
#include "run_store.h"
#include "sqlite_file.h"

using namespace scalelab;
using scalelab::testing::file_bytes;
using scalelab::testing::run_cli;
using scalelab::testing::SqliteFile;

namespace {

constexpr int page_size = 4096;

// A finished run of `steps` steps with a training loss at each.
std::int64_t add_run(RunStore& store, const QString& name, int steps) {
    const std::int64_t id = store.create_run(RunSpec{}, name);
    RunInfo info;
    info.global_batch = 128;
    store.mark_started(id, info);
    std::vector<MetricRow> rows;
    for (int step = 1; step <= steps; ++step)
        rows.push_back(MetricRow{.step = step,
                                 .epoch = 1,
                                 .wall_time = 0.01 * step,
                                 .metric = Metric::TrainLoss,
                                 .value = 1.0 / step});
    store.append_metrics(id, rows);
    store.mark_ended(id, RunState::Finished, {});
    return id;
}

// Runs 1 and 3 short, run 2 long: its rows fill the pages in the middle of the file (the
// metrics table is clustered by run), and one of them is overwritten with bytes that are no
// page SQLite knows.
void make_damaged_store(const QString& path) {
    {
        const std::unique_ptr<RunStore> store = RunStore::open(path);
        add_run(*store, QStringLiteral("short one"), 20);
        add_run(*store, QStringLiteral("long one"), 20'000);
        add_run(*store, QStringLiteral("short two"), 20);
    }
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadWrite));
    const qint64 pages = file.size() / page_size;
    QVERIFY(pages > 40);
    QVERIFY(file.seek(pages / 2 * page_size));
    file.write(QByteArray(page_size, char(0x55)));
}

// scalelab-cli as a user without root's right to write anything: tests run as root, for whom
// a read-only file or folder is writable. nobody (65534) it is, then, running a copy of the
// program in `folder` (nobody may not enter the build folder, under /root in CI, say).
testing::CliResult run_cli_unprivileged(const QString& folder, const QStringList& args) {
    if (::geteuid() != 0)
        return run_cli(args);
    const QString program = QDir(folder).filePath(QStringLiteral("scalelab-cli"));
    if (!QFileInfo::exists(program) && !QFile::copy(QStringLiteral(SCALELAB_CLI_PATH), program))
        return {};
    QFile::setPermissions(program, QFile::ReadOwner | QFile::ExeOwner | QFile::ReadGroup |
                                       QFile::ExeGroup | QFile::ReadOther | QFile::ExeOther);
    QProcess process;
    process.setChildProcessModifier([] {
        if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)
            ::_exit(99);
    });
    process.start(program, args);
    process.closeWriteChannel();
    testing::CliResult result;
    if (!process.waitForFinished(60'000))
        return result;
    result.exit_code = process.exitCode();
    result.out = QString::fromUtf8(process.readAllStandardOutput());
    result.err = QString::fromUtf8(process.readAllStandardError());
    return result;
}

}  // namespace

class TestStoreTrouble : public QObject {
    Q_OBJECT

    QTemporaryDir folder_;

    QString path(const char* name) const { return folder_.filePath(QLatin1String(name)); }

  private slots:
    void aDamagedStoreNamesTheRunsStillReadable() {
        const QString store_path = path("damaged.sqlite");
        make_damaged_store(store_path);
        const QByteArray bytes = file_bytes(store_path);

        // Recording into it, or changing it, is refused, naming what can still be read.
        try {
            RunStore::open(store_path);
            QFAIL("a damaged store opened for recording");
        } catch (const StoreError& error) {
            QCOMPARE(error.kind(), StoreError::Kind::Corrupt);
            QVERIFY2(QString::fromUtf8(error.what())
                         .contains(QStringLiteral(
                             "runs 1 and 3 can still be read in full, run 2 cannot")),
                     error.what());
        }

        // Read as it is: the list, whole runs, and an error (never a short curve) for run 2.
        const std::unique_ptr<RunStore> store = RunStore::open(store_path, StoreAccess::Read);
        QVERIFY(store->damage());
        QCOMPARE(store->damage()->readable_runs, (std::vector<std::int64_t>{1, 3}));
        QCOMPARE(store->damage()->unreadable_runs, (std::vector<std::int64_t>{2}));
        QCOMPARE(store->list_runs().size(), std::size_t(3));
        QCOMPARE(store->load_record(3).curve(Metric::TrainLoss).size(), std::size_t(20));
        QVERIFY_THROWS_EXCEPTION(StoreError, store->load_record(2));
        QVERIFY_THROWS_EXCEPTION(StoreError, store->rename(1, QStringLiteral("renamed")));
        QCOMPARE(file_bytes(store_path), bytes);
    }

    void theCliReportsADamagedStoreWithExit2AndNeverTrainsIntoIt() {
        const QString store_path = path("damaged-cli.sqlite");
        make_damaged_store(store_path);
        const QByteArray bytes = file_bytes(store_path);
        const QString damage =
            QStringLiteral("runs 1 and 3 can still be read in full, run 2 cannot");

        const testing::CliResult list = run_cli({"runs", "list", "--store", store_path});
        QCOMPARE(list.exit_code, 2);
        QVERIFY2(list.out.contains(QStringLiteral("long one")), qPrintable(list.out));
        QVERIFY2(list.err.contains(damage), qPrintable(list.err));

        // The readable runs export whole; run 2 is not written in part.
        const QString exported = path("rescued.scalelab.json");
        const testing::CliResult rescue =
            run_cli({"runs", "export", "1", "3", "--store", store_path, "-o", exported});
        QCOMPARE(rescue.exit_code, 2);
        QVERIFY2(rescue.err.contains(damage), qPrintable(rescue.err));
        QVERIFY(file_bytes(exported).contains("short two"));
        const QString partial = path("partial.scalelab.json");
        const testing::CliResult whole =
            run_cli({"runs", "export", "2", "--store", store_path, "-o", partial});
        QCOMPARE(whole.exit_code, 2);
        QVERIFY(!QFileInfo::exists(partial));

        const testing::CliResult train = run_cli({"train", "--store", store_path, "--dataset",
                                                  "synthetic", "--model", "mlp", "--epochs", "1"});
        QCOMPARE(train.exit_code, 2);
        QVERIFY2(train.err.contains(damage), qPrintable(train.err));
        QVERIFY2(!train.out.contains(QStringLiteral("epoch 1")), qPrintable(train.out));
        QCOMPARE(file_bytes(store_path), bytes);
    }

    // A store may be read where it cannot be written; the message for a change names what is
    // read-only: the file, or the folder where SQLite keeps its journal files.
    void aReadOnlyStoreIsReadAndWhatIsReadOnlyIsNamed() {
        QVERIFY(QFile::setPermissions(folder_.path(), QFile::ReadOwner | QFile::WriteOwner |
                                                          QFile::ExeOwner | QFile::ReadOther |
                                                          QFile::ExeOther));
        QTemporaryDir shared(folder_.filePath(QStringLiteral("shared-XXXXXX")));
        const QString file_store = shared.filePath(QStringLiteral("file.sqlite"));
        const QString locked_folder = shared.filePath(QStringLiteral("locked"));
        const QString folder_store = locked_folder + QStringLiteral("/folder.sqlite");
        // One from before schema 3, which cannot be upgraded: read as it is.
        const QString older_store = shared.filePath(QStringLiteral("older.sqlite"));
        QVERIFY(QDir().mkpath(locked_folder));
        for (const QString& store_path : {file_store, folder_store, older_store}) {
            const std::unique_ptr<RunStore> store = RunStore::open(store_path);
            add_run(*store, QStringLiteral("kept"), 30);
        }
        {
            const SqliteFile file(older_store);
            file.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN group_id"));
            file.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN other_programs_share"));
            file.exec(QStringLiteral("PRAGMA user_version = 2"));
        }
        const QFile::Permissions everyone_reads =
            QFile::ReadOwner | QFile::ReadGroup | QFile::ReadOther;
        const QFile::Permissions everyone_enters =
            everyone_reads | QFile::ExeOwner | QFile::ExeGroup | QFile::ExeOther;
        const QFile::Permissions everyone_writes =
            everyone_enters | QFile::WriteOwner | QFile::WriteGroup | QFile::WriteOther;
        QVERIFY(QFile::setPermissions(shared.path(), everyone_writes));
        QVERIFY(QFile::setPermissions(file_store, everyone_reads));
        QVERIFY(QFile::setPermissions(older_store, everyone_reads));
        const QByteArray older_bytes = file_bytes(older_store);
        QVERIFY(QFile::setPermissions(folder_store, everyone_reads | QFile::WriteOwner |
                                                        QFile::WriteGroup | QFile::WriteOther));
        QVERIFY(QFile::setPermissions(locked_folder, everyone_enters));

        for (const QString& store_path : {file_store, folder_store, older_store}) {
            const testing::CliResult list =
                run_cli_unprivileged(shared.path(), {"runs", "list", "--store", store_path});
            QCOMPARE(list.exit_code, 0);
            QVERIFY2(list.out.contains(QStringLiteral("kept")), qPrintable(list.err));
        }
        const testing::CliResult older_show =
            run_cli_unprivileged(shared.path(), {"runs", "show", "1", "--store", older_store});
        QCOMPARE(older_show.exit_code, 0);
        QVERIFY2(older_show.out.contains(QStringLiteral("kept")), qPrintable(older_show.err));
        QCOMPARE(file_bytes(older_store), older_bytes);
        const testing::CliResult file_delete = run_cli_unprivileged(
            shared.path(), {"runs", "delete", "1", "--yes", "--store", file_store});
        QCOMPARE(file_delete.exit_code, 2);
        QVERIFY2(file_delete.err.contains(
                     QStringLiteral("%1 is read-only: make it writable").arg(file_store)),
                 qPrintable(file_delete.err));
        const testing::CliResult folder_delete = run_cli_unprivileged(
            shared.path(), {"runs", "delete", "1", "--yes", "--store", folder_store});
        QCOMPARE(folder_delete.exit_code, 2);
        QVERIFY2(folder_delete.err.contains(
                     QStringLiteral("its folder %1 is read-only").arg(locked_folder)),
                 qPrintable(folder_delete.err));
        QVERIFY2(folder_delete.err.contains(QStringLiteral("make the folder writable")),
                 qPrintable(folder_delete.err));
        QVERIFY(QFile::setPermissions(locked_folder, everyone_writes));
    }

    // An import takes the store's lock before it reads the file: a held lock is reported, not
    // the file's problems after reading it all.
    void aHeldLockIsReportedBeforeTheFileIsRead() {
        const QString store_path = path("locked.sqlite");
        RunStore::open(store_path);
        const QString file = path("broken.scalelab.json");
        QFile broken(file);
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("{ not json");
        broken.close();

        const SqliteFile other(store_path);
        other.exec(QStringLiteral("BEGIN IMMEDIATE"));
        const testing::CliResult import = run_cli({"runs", "import", file, "--store", store_path});
        other.exec(QStringLiteral("ROLLBACK"));
        QCOMPARE(import.exit_code, 2);
        QVERIFY2(import.err.contains(QStringLiteral("is locked by another program")),
                 qPrintable(import.err));
        QVERIFY2(!import.err.contains(QStringLiteral("not valid JSON")), qPrintable(import.err));
    }
};

QTEST_GUILESS_MAIN(TestStoreTrouble)
#include "test_store_trouble.moc"
