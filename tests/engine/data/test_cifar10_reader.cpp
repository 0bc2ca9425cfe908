// CIFAR-10 binary reader: a round trip of files written here, and missing or broken files.

#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>
#include <unistd.h>

#include "data/cifar10_reader.h"
#include "data_test_files.h"
#include "error.h"

using namespace scalelab;
using namespace scalelab::data;
using namespace scalelab::data::testing;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

const char* const kTrain[5] = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                               "data_batch_4.bin", "data_batch_5.bin"};
const int kRecordsPerTrainFile[5] = {2, 1, 3, 1, 2};

// Writes a complete small CIFAR-10 folder: 9 training records over the five files, 2 test
// records. Pixels and labels are pattern(..., salt) with salt = file number.
void write_cifar(const std::string& dir) {
    QVERIFY(QDir().mkpath(QString::fromStdString(dir)));
    for (int f = 0; f < 5; ++f) {
        const std::size_t n = std::size_t(kRecordsPerTrainFile[f]);
        QVERIFY(write_plain(dir + "/" + kTrain[f],
                            cifar_records(pattern(n, 100 + f, 10), pattern(n * 3072, f))));
    }
    QVERIFY(write_plain(dir + "/test_batch.bin",
                        cifar_records(pattern(2, 105, 10), pattern(2 * 3072, 5))));
}

std::string expect_error(const std::string& dir, ErrorKind kind) {
    try {
        load_cifar10(dir);
    } catch (const Error& e) {
        if (e.kind() == kind) {
            return e.what();
        }
        qWarning("wrong error kind %d: %s", int(e.kind()), e.what());
        return "";
    }
    qWarning("no error thrown");
    return "";
}

}  // namespace

class TestCifar10Reader : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir tmp_;
    std::string path(const std::string& name) const {
        return (tmp_.path() + "/").toStdString() + name;
    }

    void check_round_trip(const TrainTest& tt) {
        QCOMPARE(tt.train.channels, 3);
        QCOMPARE(tt.train.height, 32);
        QCOMPARE(tt.train.width, 32);
        QCOMPARE(tt.train.classes, 10);
        QCOMPARE(tt.train.count(), std::size_t(9));
        QCOMPARE(tt.test.count(), std::size_t(2));
        QCOMPARE(tt.test.channels, 3);
        // Training records in file order, each file's records in order.
        Bytes labels, pixels;
        for (int f = 0; f < 5; ++f) {
            const std::size_t n = std::size_t(kRecordsPerTrainFile[f]);
            const Bytes l = pattern(n, 100 + f, 10), p = pattern(n * 3072, f);
            labels.insert(labels.end(), l.begin(), l.end());
            pixels.insert(pixels.end(), p.begin(), p.end());
        }
        QVERIFY(tt.train.labels == labels);
        QVERIFY(tt.train.images == pixels);
        QVERIFY(tt.test.labels == pattern(2, 105, 10));
        QVERIFY(tt.test.images == pattern(2 * 3072, 5));
    }

  private slots:
    void initTestCase() { QVERIFY(tmp_.isValid()); }

    void roundTrip() {
        write_cifar(path("ok"));
        check_round_trip(load_cifar10(path("ok")));
    }

    // The official tarball unpacks into cifar-10-batches-bin/; naming its parent works too.
    void acceptsTarballSubfolder() {
        write_cifar(path("parent/cifar-10-batches-bin"));
        check_round_trip(load_cifar10(path("parent")));
    }

    void sizeNotWholeRecords_data() {
        QTest::addColumn<int>("extra");
        QTest::newRow("one byte more") << 1;
        QTest::newRow("one byte less") << -1;
        QTest::newRow("half a record") << -1536;
    }
    void sizeNotWholeRecords() {
        QFETCH(int, extra);
        const std::string dir = path(std::string("size-") + QTest::currentDataTag());
        write_cifar(dir);
        Bytes b = cifar_records(pattern(3, 1, 10), pattern(3 * 3072, 1));
        b.resize(std::size_t(std::ptrdiff_t(b.size()) + extra), 0);
        const std::string file = dir + "/data_batch_3.bin";
        QVERIFY(write_plain(file, b));
        const std::string msg = expect_error(dir, ErrorKind::DatasetCorrupt);
        QVERIFY2(contains(msg, file), msg.c_str());
        QVERIFY2(contains(msg, std::to_string(b.size()) + " bytes"), msg.c_str());
        QVERIFY2(contains(msg, "3073"), msg.c_str());
    }

    void emptyFile() {
        const std::string dir = path("empty-file");
        write_cifar(dir);
        QVERIFY(write_plain(dir + "/test_batch.bin", {}));
        const std::string msg = expect_error(dir, ErrorKind::DatasetCorrupt);
        QVERIFY2(contains(msg, dir + "/test_batch.bin") && contains(msg, "0 bytes"), msg.c_str());
    }

    void badLabel() {
        const std::string dir = path("bad-label");
        write_cifar(dir);
        Bytes b = cifar_records({1, 2, 3}, pattern(3 * 3072, 1));
        b[2 * 3073] = 10;  // third record's label
        const std::string file = dir + "/test_batch.bin";
        QVERIFY(write_plain(file, b));
        const std::string msg = expect_error(dir, ErrorKind::DatasetCorrupt);
        QVERIFY2(contains(msg, file), msg.c_str());
        QVERIFY2(contains(msg, "label 10 in record 2"), msg.c_str());
    }

    void missingFiles() {
        const std::string dir = path("missing");
        write_cifar(dir);
        QVERIFY(QFile::remove(QString::fromStdString(dir + "/data_batch_3.bin")));
        QVERIFY(QFile::remove(QString::fromStdString(dir + "/test_batch.bin")));
        const std::string msg = expect_error(dir, ErrorKind::DatasetMissing);
        QVERIFY2(contains(msg, dir), msg.c_str());
        QVERIFY2(contains(msg, "data_batch_3.bin, test_batch.bin"), msg.c_str());
        QVERIFY2(!contains(msg, "lacks data_batch_1.bin"), msg.c_str());
        QVERIFY2(contains(msg, "--data"), msg.c_str());
    }

    void unreadableFilesAreNamed() {
        QVERIFY(write_plain(path("a-file"), {1, 2, 3}));
        const std::string not_a_folder = expect_error(path("a-file"), ErrorKind::DatasetMissing);
        QVERIFY2(contains(not_a_folder, "the cifar10 folder '" + path("a-file") +
                                            "' is not a folder; name the folder of "
                                            "the CIFAR-10 binary version"),
                 not_a_folder.c_str());

        if (geteuid() == 0)
            QSKIP("root may read a file without read permission");
        const std::string dir = path("locked");
        write_cifar(dir);
        const std::string file = dir + "/test_batch.bin";
        QCOMPARE(::chmod(file.c_str(), 0), 0);
        const std::string msg = expect_error(dir, ErrorKind::DatasetMissing);
        QCOMPARE(QString::fromStdString(msg),
                 QString::fromStdString("cannot open '" + file + "'; check that it is readable"));
    }

    // A FIFO or a folder where a file belongs, and a folder that cannot be read, were reported
    // as files the folder lacks.
    void somethingElseWhereAFileBelongsIsNamed() {
        const std::string dir = path("fifo");
        write_cifar(dir);
        const std::string test = dir + "/test_batch.bin";
        QVERIFY(QFile::remove(QString::fromStdString(test)));
        QCOMPARE(::mkfifo(test.c_str(), 0600), 0);
        QCOMPARE(QString::fromStdString(expect_error(dir, ErrorKind::DatasetMissing)),
                 QString::fromStdString("dataset file '" + test +
                                        "' is a FIFO (named pipe), not a regular file; check the "
                                        "path"));

        const std::string loop = path("link-to-itself");
        QCOMPARE(::symlink(loop.c_str(), loop.c_str()), 0);
        QVERIFY(contains(expect_error(loop, ErrorKind::DatasetMissing),
                         "the cifar10 folder '" + loop +
                             "' cannot be read (Too many levels of symbolic links); check its "
                             "permissions and the path"));
    }

    void missingFolder() {
        const std::string dir = path("nowhere");
        const std::string msg = expect_error(dir, ErrorKind::DatasetMissing);
        QVERIFY2(contains(msg, dir) && contains(msg, "does not exist"), msg.c_str());
        const std::string none = expect_error("", ErrorKind::DatasetMissing);
        QVERIFY2(contains(none, "--data"), none.c_str());
    }
};

QTEST_APPLESS_MAIN(TestCifar10Reader)
#include "test_cifar10_reader.moc"
