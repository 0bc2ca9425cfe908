// same_file and the guarded files: two spellings of one file are one file, two files are two,
// and a run store's journals are guarded before they exist.

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

#include "guarded_files.h"
#include "run_store.h"
#include "same_file.h"
#include "whole_file_writer.h"

using namespace scalelab;

class TestSameFile : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    QString at(const QString& name) const { return dir_.filePath(name); }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        QVERIFY(QDir(dir_.path()).mkdir("sub"));
        QFile file(at("a"));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("a");
        file.close();
        QFile other(at("b"));
        QVERIFY(other.open(QIODevice::WriteOnly));
        QVERIFY(QFile::link(at("a"), at("link")));
        QVERIFY(QFile::link(at("missing"), at("dangling")));
        QVERIFY(::link(QFile::encodeName(at("a")), QFile::encodeName(at("hard"))) == 0);
    }

    void spellings_of_one_file_are_one_file_data() {
        QTest::addColumn<QString>("one");
        QTest::addColumn<QString>("other");
        QTest::newRow("itself") << "a"
                                << "a";
        QTest::newRow("./ and ..") << "a"
                                   << "sub/../a";
        QTest::newRow("a symbolic link") << "link"
                                         << "a";
        QTest::newRow("a hard link") << "hard"
                                     << "a";
        QTest::newRow("not there yet, spelt twice") << "new"
                                                    << "sub/../new";
        QTest::newRow("a dangling link and where it points") << "dangling"
                                                             << "missing";
    }
    void spellings_of_one_file_are_one_file() {
        QFETCH(QString, one);
        QFETCH(QString, other);
        QVERIFY(same_file(at(one), at(other)));
    }

    void different_files_are_different_data() {
        QTest::addColumn<QString>("one");
        QTest::addColumn<QString>("other");
        QTest::newRow("two files") << "a"
                                   << "b";
        QTest::newRow("one there, one not") << "a"
                                            << "new";
        QTest::newRow("same name, other folder") << "new"
                                                 << "sub/new";
    }
    void different_files_are_different() {
        QFETCH(QString, one);
        QFETCH(QString, other);
        QVERIFY(!same_file(at(one), at(other)));
    }

    // While a store is open, every whole-file write to one of its files is refused, the
    // journals included before SQLite makes them; once it is closed, they are files again.
    void an_open_store_guards_its_files() {
        const QString store_path = at("runs.sqlite");
        {
            const std::unique_ptr<RunStore> store = RunStore::open(store_path);
            for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
                const QString reason = write_whole_file(
                    store_path + suffix, [](QIODevice& out) { return out.write("x") == 1; });
                QVERIFY2(reason.contains("run store"), qPrintable(QString(suffix) + ": " + reason));
            }
            QVERIFY(guarded_file_at(at("sub/../runs.sqlite-wal"), run_store_files(store_path)));
        }
        QCOMPARE(write_whole_file(at("runs.sqlite-journal"),
                                  [](QIODevice& out) { return out.write("x") == 1; }),
                 QString());
    }
};

QTEST_GUILESS_MAIN(TestSameFile)
#include "test_same_file.moc"
