// IDX reader: round trips of files written here (plain and gzip), and every way a file can be
// missing or broken, checking the error kind and that the message names the file.

#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>
#include <unistd.h>

#include <functional>

#include "data/idx_reader.h"
#include "data_test_files.h"
#include "error.h"

using namespace scalelab;
using namespace scalelab::data;
using namespace scalelab::data::testing;

namespace {

// Runs `f`, which must throw scalelab::Error of `kind`; returns the message ("" if it did not).
std::string expect_error(const std::function<void()>& f, ErrorKind kind) {
    try {
        f();
    } catch (const Error& e) {
        if (e.kind() != kind) {
            qWarning("wrong error kind %d: %s", int(e.kind()), e.what());
            return "";
        }
        return e.what();
    }
    qWarning("no error thrown");
    return "";
}

// expect_error's message as a QString, for QCOMPARE to show both sides when they differ.
QString error_text(const std::function<void()>& f, ErrorKind kind) {
    return QString::fromStdString(expect_error(f, kind));
}

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

}  // namespace

class TestIdxReader : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir tmp_;
    // Files are numbered, not named after the data tag: a tag like "truncated" in the path
    // would satisfy the check that the message says "truncated".
    int files_ = 0;
    std::string path(const std::string& name) const {
        return (tmp_.path() + "/").toStdString() + name;
    }

    // Writes the four files of a small IDX dataset into `dir` (train: 7 images, test: 3).
    void write_folder(const std::string& dir, bool gzip_train, bool gzip_test) {
        QVERIFY(QDir().mkpath(QString::fromStdString(dir)));
        auto write = [](const std::string& p, const Bytes& b, bool gz) {
            return gz ? write_gzip(p + ".gz", b) : write_plain(p, b);
        };
        QVERIFY(write(dir + "/train-images-idx3-ubyte", idx_images(7, 4, 5, pattern(7 * 20, 1)),
                      gzip_train));
        QVERIFY(write(dir + "/train-labels-idx1-ubyte", idx_labels(pattern(7, 2, 10)), gzip_train));
        QVERIFY(write(dir + "/t10k-images-idx3-ubyte", idx_images(3, 4, 5, pattern(3 * 20, 3)),
                      gzip_test));
        QVERIFY(write(dir + "/t10k-labels-idx1-ubyte", idx_labels(pattern(3, 4, 10)), gzip_test));
    }

  private slots:
    void initTestCase() { QVERIFY(tmp_.isValid()); }

    void roundTrip_data() {
        QTest::addColumn<bool>("gzip");
        QTest::newRow("plain") << false;
        QTest::newRow("gzip") << true;
    }
    void roundTrip() {
        QFETCH(bool, gzip);
        const Bytes pixels = pattern(11 * 6 * 9, 7);
        const Bytes labels = pattern(11, 8, 10);
        const std::string images_path = path(gzip ? "rt-img.gz" : "rt-img");
        const std::string labels_path = path(gzip ? "rt-lbl.gz" : "rt-lbl");
        auto write = gzip ? write_gzip : write_plain;
        QVERIFY(write(images_path, idx_images(11, 6, 9, pixels)));
        QVERIFY(write(labels_path, idx_labels(labels)));
        if (gzip) {  // make sure the file on disk really is compressed
            const Bytes raw = read_all(images_path);
            QVERIFY(raw.size() >= 2 && raw[0] == 0x1f && raw[1] == 0x8b);
        }

        const Dataset d = read_idx(images_path, labels_path);
        QCOMPARE(d.channels, 1);
        QCOMPARE(d.height, 6);
        QCOMPARE(d.width, 9);
        QCOMPARE(d.classes, 10);
        QCOMPARE(d.count(), std::size_t(11));
        QVERIFY(d.images == pixels);
        QVERIFY(d.labels == labels);
    }

    // The form is told by the content: gzip data under a plain name, plain data under ".gz".
    void detectsGzipByMagicNotName() {
        const Bytes pixels = pattern(2 * 3 * 3, 9);
        const Bytes labels = {3, 9};
        QVERIFY(write_gzip(path("looks-plain"), idx_images(2, 3, 3, pixels)));
        QVERIFY(write_plain(path("looks-gz.gz"), idx_labels(labels)));
        const Dataset d = read_idx(path("looks-plain"), path("looks-gz.gz"));
        QVERIFY(d.images == pixels);
        QVERIFY(d.labels == labels);
    }

    void largeGzipFileSpanningManyReads() {
        // More than one 1 MiB read chunk, to exercise the read loop.
        const Bytes pixels = pattern(100 * 100 * 150, 10);
        const Bytes labels = pattern(150, 11, 10);
        QVERIFY(write_gzip(path("big-img.gz"), idx_images(150, 100, 100, pixels)));
        QVERIFY(write_gzip(path("big-lbl.gz"), idx_labels(labels)));
        const Dataset d = read_idx(path("big-img.gz"), path("big-lbl.gz"));
        QVERIFY(d.images == pixels);
        QVERIFY(d.labels == labels);
    }

    void loadFolderMixedForms() {
        const std::string dir = path("mixed");
        write_folder(dir, true, false);
        const TrainTest tt = load_idx_folder(dir, "mnist");
        QCOMPARE(tt.train.count(), std::size_t(7));
        QCOMPARE(tt.test.count(), std::size_t(3));
        QCOMPARE(tt.train.height, 4);
        QCOMPARE(tt.train.width, 5);
        QVERIFY(tt.train.images == pattern(7 * 20, 1));
        QVERIFY(tt.test.images == pattern(3 * 20, 3));
        QVERIFY(tt.test.labels == pattern(3, 4, 10));
    }

    void corruptImages_data() {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<bool>("gzip");
        QTest::addColumn<QString>("expect");  // a phrase the message must contain
        auto qb = [](const Bytes& b) {
            return QByteArray(reinterpret_cast<const char*>(b.data()), qsizetype(b.size()));
        };
        const Bytes good = idx_images(4, 3, 3, pattern(36, 5));
        Bytes truncated = good;
        truncated.resize(good.size() - 5);
        Bytes trailing = good;
        trailing.push_back(0);
        trailing.push_back(7);
        Bytes header_cut = good;
        header_cut.resize(10);

        QTest::newRow("wrong magic")
            << qb(idx_images(4, 3, 3, pattern(36, 5), 0x12345678)) << false << "not an IDX file";
        QTest::newRow("wrong type")
            << qb(idx_images(4, 3, 3, pattern(36, 5), 0x00000d03)) << false << "unsigned bytes";
        QTest::newRow("wrong dims")
            << qb(idx_images(4, 3, 3, pattern(36, 5), 0x00000802)) << false << "2 dimensions";
        QTest::newRow("label file as images")
            << qb(idx_labels(pattern(4, 1, 10))) << false << "label file";
        QTest::newRow("truncated") << qb(truncated) << false << "truncated";
        QTest::newRow("truncated gz content") << qb(truncated) << true << "truncated";
        QTest::newRow("header cut") << qb(header_cut) << false << "truncated";
        QTest::newRow("tiny") << qb(Bytes{0, 0}) << false << "too short";
        QTest::newRow("empty") << qb(Bytes{}) << false << "too short";
        QTest::newRow("trailing") << qb(trailing) << false << "holds more than";
        QTest::newRow("zero rows") << qb(idx_images(4, 0, 3, {})) << false << "not a usable";
    }
    void corruptImages() {
        QFETCH(QByteArray, content);
        QFETCH(bool, gzip);
        QFETCH(QString, expect);
        const std::string img = path("bad-img-" + std::to_string(++files_));
        const std::string lbl = path("bad-ok-labels");
        const Bytes b(content.begin(), content.end());
        QVERIFY(gzip ? write_gzip(img, b) : write_plain(img, b));
        QVERIFY(write_plain(lbl, idx_labels(pattern(4, 1, 10))));
        const std::string msg =
            expect_error([&] { read_idx(img, lbl); }, ErrorKind::DatasetCorrupt);
        QVERIFY2(contains(msg, img), msg.c_str());
        QVERIFY2(contains(msg, expect.toStdString()), msg.c_str());
        QVERIFY2(contains(msg, "download it again"), msg.c_str());
    }

    void corruptLabels_data() {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("expect");
        auto qb = [](const Bytes& b) {
            return QByteArray(reinterpret_cast<const char*>(b.data()), qsizetype(b.size()));
        };
        Bytes truncated = idx_labels({1, 2, 3, 4});
        truncated.pop_back();
        Bytes trailing = idx_labels({1, 2, 3, 4});
        trailing.push_back(1);
        QTest::newRow("label 10") << qb(idx_labels({1, 2, 10, 4})) << "label 10 at position 2";
        QTest::newRow("label 255") << qb(idx_labels({255, 2, 3, 4})) << "label 255";
        QTest::newRow("wrong magic") << qb(idx_labels({1, 2, 3, 4}, 0x00000803)) << "image file";
        QTest::newRow("truncated") << qb(truncated) << "truncated";
        QTest::newRow("trailing") << qb(trailing) << "holds more than";
    }
    void corruptLabels() {
        QFETCH(QByteArray, content);
        QFETCH(QString, expect);
        const std::string img = path("lbl-ok-images");
        const std::string lbl = path("bad-lbl-" + std::to_string(++files_));
        QVERIFY(write_plain(img, idx_images(4, 2, 2, pattern(16, 1))));
        QVERIFY(write_plain(lbl, Bytes(content.begin(), content.end())));
        const std::string msg =
            expect_error([&] { read_idx(img, lbl); }, ErrorKind::DatasetCorrupt);
        QVERIFY2(contains(msg, lbl), msg.c_str());
        QVERIFY2(contains(msg, expect.toStdString()), msg.c_str());
    }

    void countMismatch() {
        const std::string img = path("cm-img"), lbl = path("cm-lbl");
        QVERIFY(write_plain(img, idx_images(5, 2, 2, pattern(20, 1))));
        QVERIFY(write_plain(lbl, idx_labels({1, 2, 3, 4})));
        const std::string msg =
            expect_error([&] { read_idx(img, lbl); }, ErrorKind::DatasetCorrupt);
        QVERIFY2(contains(msg, img) && contains(msg, lbl), msg.c_str());
        QVERIFY2(contains(msg, "5 images") && contains(msg, "4 labels"), msg.c_str());
    }

    // A gzip file cut in the middle of its compressed stream.
    void truncatedGzipStream() {
        const std::string full = path("cut-full.gz"), cut = path("cut.gz");
        QVERIFY(write_gzip(full, idx_images(50, 20, 20, pattern(20000, 3))));
        Bytes raw = read_all(full);
        QVERIFY(raw.size() > 100);
        raw.resize(raw.size() / 2);
        QVERIFY(write_plain(cut, raw));
        QVERIFY(write_plain(path("cut-lbl"), idx_labels(pattern(50, 1, 10))));
        const std::string msg =
            expect_error([&] { read_idx(cut, path("cut-lbl")); }, ErrorKind::DatasetCorrupt);
        QVERIFY2(contains(msg, cut), msg.c_str());
    }

    void missingFile() {
        QVERIFY(write_plain(path("mf-lbl"), idx_labels({1})));
        const std::string img = path("no-such-images");
        const std::string msg =
            expect_error([&] { read_idx(img, path("mf-lbl")); }, ErrorKind::DatasetMissing);
        QVERIFY2(contains(msg, img) && contains(msg, "does not exist"), msg.c_str());
    }

    void missingFolder() {
        const std::string dir = path("no-such-folder");
        const std::string msg =
            expect_error([&] { load_idx_folder(dir, "mnist"); }, ErrorKind::DatasetMissing);
        QVERIFY2(contains(msg, dir) && contains(msg, "--data"), msg.c_str());
        QVERIFY2(!contains(msg, "apt-get"), msg.c_str());

        const std::string fashion =
            expect_error([&] { load_idx_folder(dir, "fashion-mnist"); }, ErrorKind::DatasetMissing);
        QVERIFY2(contains(fashion, dir), fashion.c_str());
        QVERIFY2(contains(fashion, "apt-get install dataset-fashion-mnist"), fashion.c_str());
        QVERIFY2(contains(fashion, "/usr/share/datasets/fashion-mnist"), fashion.c_str());
        QVERIFY2(contains(fashion, "--data"), fashion.c_str());

        QVERIFY(write_plain(path("a-file"), {1, 2, 3}));
        const std::string not_dir = expect_error([&] { load_idx_folder(path("a-file"), "mnist"); },
                                                 ErrorKind::DatasetMissing);
        QVERIFY2(contains(not_dir, "not a folder"), not_dir.c_str());
    }

    void noFolderGiven() {
        const std::string msg =
            expect_error([&] { find_idx_files("", "mnist"); }, ErrorKind::DatasetMissing);
        QCOMPARE(
            QString::fromStdString(msg),
            QString("no folder given for mnist; name the folder with the four IDX files (--data "
                    "on the command line, Folder in the window): train-images-idx3-ubyte, "
                    "train-labels-idx1-ubyte, t10k-images-idx3-ubyte, "
                    "t10k-labels-idx1-ubyte, each optionally .gz"));
    }

    void unreadableFilesAreNamed() {
        const std::string folder = path("a-folder-for-images");
        QVERIFY(QDir().mkpath(QString::fromStdString(folder)));
        QVERIFY(write_plain(path("ur-lbl"), idx_labels({1})));
        const std::string not_a_file =
            expect_error([&] { read_idx(folder, path("ur-lbl")); }, ErrorKind::DatasetMissing);
        QCOMPARE(QString::fromStdString(not_a_file),
                 QString::fromStdString("dataset file '" + folder +
                                        "' is a folder, not a regular file; check the path"));

        if (geteuid() == 0)
            QSKIP("root may read a file without read permission");
        const std::string locked = path("ur-locked");
        QVERIFY(write_plain(locked, idx_images(1, 2, 2, pattern(4, 1))));
        QCOMPARE(::chmod(locked.c_str(), 0), 0);
        const std::string msg =
            expect_error([&] { read_idx(locked, path("ur-lbl")); }, ErrorKind::DatasetMissing);
        QCOMPARE(QString::fromStdString(msg),
                 QString::fromStdString("cannot open '" + locked +
                                        "'; check that it exists and is readable"));
    }

    // A folder or a FIFO where a file belongs was reported as missing from the folder, with the
    // advice to install the package. A FIFO must never be opened: that waits for a writer.
    void somethingElseWhereAFileBelongsIsNamed() {
        const std::string dir = path("not-files");
        write_folder(dir, false, false);
        const std::string images = dir + "/train-images-idx3-ubyte";
        QVERIFY(QFile::remove(QString::fromStdString(images)));
        QVERIFY(QDir().mkdir(QString::fromStdString(images)));
        QCOMPARE(error_text([&] { load_idx_folder(dir, "mnist"); }, ErrorKind::DatasetMissing),
                 QString::fromStdString("dataset file '" + images +
                                        "' is a folder, not a regular file; check the path"));

        QVERIFY(QDir().rmdir(QString::fromStdString(images)));
        QVERIFY(write_plain(images, idx_images(7, 4, 5, pattern(7 * 20, 1))));
        const std::string labels = dir + "/t10k-labels-idx1-ubyte";
        QVERIFY(QFile::remove(QString::fromStdString(labels)));
        QCOMPARE(::mkfifo(labels.c_str(), 0600), 0);
        const QString fifo =
            QString::fromStdString("dataset file '" + labels +
                                   "' is a FIFO (named pipe), not a regular file; check the path");
        QCOMPARE(error_text([&] { load_idx_folder(dir, "mnist"); }, ErrorKind::DatasetMissing),
                 fifo);
        QCOMPARE(error_text([&] { read_idx(images, labels); }, ErrorKind::DatasetMissing), fifo);
    }

    // A folder that cannot be read was reported as lacking all four files.
    void unreadableFolderIsNamed() {
        const std::string loop = path("link-to-itself");
        QCOMPARE(::symlink(loop.c_str(), loop.c_str()), 0);
        QCOMPARE(error_text([&] { load_idx_folder(loop, "mnist"); }, ErrorKind::DatasetMissing),
                 QString::fromStdString("the mnist folder '" + loop +
                                        "' cannot be read (Too many levels of symbolic links); "
                                        "check its permissions and the path"));

        if (geteuid() == 0)
            QSKIP("root searches a folder whatever its permissions, so chmod 0 cannot lock one");
        const std::string locked = path("locked-folder");
        write_folder(locked, false, false);
        QCOMPARE(::chmod(locked.c_str(), 0), 0);
        const QString msg =
            error_text([&] { load_idx_folder(locked, "mnist"); }, ErrorKind::DatasetMissing);
        QCOMPARE(::chmod(locked.c_str(), 0700), 0);
        QCOMPARE(msg, QString::fromStdString("the mnist folder '" + locked +
                                             "' cannot be read (Permission denied); check its "
                                             "permissions and the path"));
    }

    // A gzip file that expands far beyond what its header declares is read only one byte past
    // the declared size. Its stream is cut after about half of its 16 MiB of zeros: a reader that
    // inflated it to the end would report the cut, not the extra data.
    void gzipBombIsReadOnlyToTheDeclaredSize() {
        const std::string whole = path("bomb-whole.gz"), bomb = path("bomb.gz");
        QVERIFY(write_gzip_with_zeros(whole, idx_images(2, 4, 5, pattern(40, 1)), 16u << 20));
        Bytes compressed = read_all(whole);
        compressed.resize(compressed.size() / 2);
        QVERIFY(write_plain(bomb, compressed));
        QVERIFY(write_plain(path("bomb-lbl"), idx_labels({1, 2})));
        QCOMPARE(error_text([&] { read_idx(bomb, path("bomb-lbl")); }, ErrorKind::DatasetCorrupt),
                 QString::fromStdString(
                     "dataset file '" + bomb +
                     "' holds more than the 2 images of 4x5 pixels its header promises (56 bytes "
                     "in all); the file is damaged or incomplete: download it again (or "
                     "reinstall the package it came from)"));
    }

    // A header promising more than its file can hold is refused before anything is allocated
    // or inflated: deflate expands at most 1032 times.
    void impossibleDeclaredSizeIsRefusedBeforeReading() {
        const std::string img = path("promises-too-much.gz");
        QVERIFY(write_gzip(img, idx_images(60000, 28, 28, pattern(100, 1))));
        const std::string size = std::to_string(read_all(img).size());
        const std::string limit = std::to_string(read_all(img).size() * 1032);
        QVERIFY(write_plain(path("ptm-lbl"), idx_labels({1})));
        QCOMPARE(error_text([&] { read_idx(img, path("ptm-lbl")); }, ErrorKind::DatasetCorrupt),
                 QString::fromStdString(
                     "dataset file '" + img +
                     "' is truncated: its header promises 60000 images of 28x28 pixels (47040016 "
                     "bytes in all) but its " +
                     size + " compressed bytes hold at most " + limit +
                     "; the file is damaged or incomplete: download it again (or reinstall the "
                     "package it came from)"));
    }

    void folderMissingOneFile() {
        const std::string dir = path("one-missing");
        write_folder(dir, false, true);
        QVERIFY(QFile::remove(QString::fromStdString(dir + "/t10k-labels-idx1-ubyte.gz")));
        const std::string msg =
            expect_error([&] { load_idx_folder(dir, "mnist"); }, ErrorKind::DatasetMissing);
        QVERIFY2(contains(msg, dir), msg.c_str());
        QVERIFY2(contains(msg, "lacks t10k-labels-idx1-ubyte"), msg.c_str());
        QVERIFY2(!contains(msg, "lacks train"), msg.c_str());
    }

    void folderWithCorruptFile() {
        const std::string dir = path("one-corrupt");
        write_folder(dir, false, false);
        QVERIFY(write_plain(dir + "/t10k-labels-idx1-ubyte", idx_labels({1, 2, 11})));
        const std::string msg =
            expect_error([&] { load_idx_folder(dir, "mnist"); }, ErrorKind::DatasetCorrupt);
        QVERIFY2(contains(msg, dir + "/t10k-labels-idx1-ubyte"), msg.c_str());
        QVERIFY2(contains(msg, "label 11"), msg.c_str());
    }

    void trainTestGeometryMismatch() {
        const std::string dir = path("geometry");
        write_folder(dir, false, false);
        QVERIFY(write_plain(dir + "/t10k-images-idx3-ubyte", idx_images(3, 5, 4, pattern(60, 1))));
        const std::string msg =
            expect_error([&] { load_idx_folder(dir, "mnist"); }, ErrorKind::DatasetCorrupt);
        QVERIFY2(contains(msg, "4x5") && contains(msg, "5x4"), msg.c_str());
    }
};

QTEST_APPLESS_MAIN(TestIdxReader)
#include "test_idx_reader.moc"
