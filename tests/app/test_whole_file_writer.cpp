// The one way files are written: whole or not at all. A full disk (a file size limit standing
// in for it), a failing writer, and targets that are not regular files (a pipe, a folder, a
// device) each leave what was there before, with the system's reason.

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

#include "file_size_limit.h"
#include "whole_file_writer.h"

using scalelab::write_whole_file;
using scalelab::testing::FileSizeLimit;

namespace {

QByteArray read_all(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray("(unreadable)");
}

void write_text(const QString& path, const QByteArray& text) {
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(text);
}

std::function<bool(QIODevice&)> writing(const QByteArray& bytes) {
    return [bytes](QIODevice& device) { return device.write(bytes) == bytes.size(); };
}

}  // namespace

class TestWholeFileWriter : public QObject {
    Q_OBJECT

  private slots:
    void replacesAFileWhole() {
        QTemporaryDir dir;
        const QString path = dir.filePath("out.csv");
        write_text(path, "old");
        QCOMPARE(write_whole_file(path, writing("new contents")), QString());
        QCOMPARE(read_all(path), QByteArray("new contents"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"out.csv"});
    }

    void aFullDiskLeavesTheOldFile() {
        QTemporaryDir dir;
        const QString path = dir.filePath("out.json");
        write_text(path, "what was there");
        QString reason;
        {
            const FileSizeLimit full{4096};
            reason = write_whole_file(path, writing(QByteArray(1 << 20, 'x')));
        }
        QVERIFY2(reason.contains("too large", Qt::CaseInsensitive), qPrintable(reason));
        QCOMPARE(read_all(path), QByteArray("what was there"));
        // No temporary file is left behind.
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"out.json"});
    }

    void aWriterThatFailsLeavesTheOldFile() {
        QTemporaryDir dir;
        const QString path = dir.filePath("out.csv");
        write_text(path, "kept");
        const QString reason = write_whole_file(path, [](QIODevice& device) {
            device.write("half");
            return false;
        });
        QCOMPARE(reason, QString("the write failed"));
        QCOMPARE(read_all(path), QByteArray("kept"));
    }

    void somethingThatIsNotARegularFileIsNeverReplaced() {
        QTemporaryDir dir;
        const QString fifo = dir.filePath("pipe");
        QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
        QString reason = write_whole_file(fifo, writing("x"));
        QVERIFY2(reason.startsWith("it is not a regular file"), qPrintable(reason));
        struct stat info {};
        QCOMPARE(::stat(QFile::encodeName(fifo).constData(), &info), 0);
        QVERIFY(S_ISFIFO(info.st_mode));

        // A device: /dev/full, the device a full disk is tested with, stays a device.
        reason = write_whole_file(QStringLiteral("/dev/full"), writing("x"));
        QVERIFY2(reason.startsWith("it is not a regular file"), qPrintable(reason));
        QCOMPARE(::stat("/dev/full", &info), 0);
        QVERIFY(S_ISCHR(info.st_mode));

        QDir(dir.path()).mkdir("folder");
        QCOMPARE(write_whole_file(dir.filePath("folder"), writing("x")), QString("it is a folder"));
        QCOMPARE(write_whole_file(dir.filePath("nowhere/out.csv"), writing("x")),
                 QStringLiteral("the folder %1 does not exist")
                     .arg(QDir::toNativeSeparators(dir.filePath("nowhere"))));
        QCOMPARE(write_whole_file(QString(), writing("x")), QString("no file name was given"));
    }
};

QTEST_GUILESS_MAIN(TestWholeFileWriter)
#include "test_whole_file_writer.moc"
