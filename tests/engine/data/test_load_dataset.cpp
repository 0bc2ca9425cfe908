// load_dataset: dispatch by name, default folders, the errors for unknown names and missing
// folders, and (where Debian's dataset-fashion-mnist is installed) the real Fashion-MNIST.
// dataset_folder_problem: the same missing-folder messages, found without reading the files.

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>

#include "data/dataset.h"
#include "data/load.h"
#include "data_test_files.h"
#include "error.h"

using namespace scalelab;
using namespace scalelab::data;
using namespace scalelab::data::testing;

namespace {

std::pair<int, std::string> error_of(const DatasetRequest& r) {
    try {
        load_dataset(r);
    } catch (const Error& e) {
        return {int(e.kind()), e.what()};
    }
    return {-1, ""};
}

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

const char* const kIdxFiles[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                  "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
const char* const kCifarFiles[6] = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                    "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"};

// A one-byte file: there, but no valid dataset file, so only a check that reads it can fail.
bool write_stub(const std::string& path) {
    return write_plain(path, Bytes{1});
}

}  // namespace

class TestLoadDataset : public QObject {
    Q_OBJECT

  private slots:
    void defaultDirs() {
        QCOMPARE(default_data_dir("fashion-mnist"),
                 std::string("/usr/share/datasets/fashion-mnist"));
        QCOMPARE(default_data_dir("mnist"), std::string());
        QCOMPARE(default_data_dir("cifar10"), std::string());
        QCOMPARE(default_data_dir("synthetic"), std::string());
    }

    void unknownName() {
        const auto [kind, msg] = error_of(DatasetRequest{"imagenet", "", {}});
        QCOMPARE(kind, int(ErrorKind::InvalidSpec));
        QVERIFY2(contains(msg, "imagenet"), msg.c_str());
        for (const char* name : {"fashion-mnist", "mnist", "cifar10", "synthetic"}) {
            QVERIFY2(contains(msg, name), msg.c_str());
        }
    }

    void noFolderGiven() {
        const auto [mnist_kind, mnist] = error_of(DatasetRequest{"mnist", "", {}});
        QCOMPARE(mnist_kind, int(ErrorKind::DatasetMissing));
        QVERIFY2(contains(mnist, "--data DIR") && contains(mnist, "train-images-idx3-ubyte"),
                 mnist.c_str());
        const auto [cifar_kind, cifar] = error_of(DatasetRequest{"cifar10", "", {}});
        QCOMPARE(cifar_kind, int(ErrorKind::DatasetMissing));
        QVERIFY2(contains(cifar, "--data DIR") && contains(cifar, "data_batch_1.bin") &&
                     contains(cifar, "test_batch.bin"),
                 cifar.c_str());
    }

    void fashionMissingFolderSaysHowToInstall() {
        const auto [kind, msg] = error_of(DatasetRequest{"fashion-mnist", "/nonexistent/fm", {}});
        QCOMPARE(kind, int(ErrorKind::DatasetMissing));
        QVERIFY2(contains(msg, "/nonexistent/fm"), msg.c_str());
        QVERIFY2(contains(msg, "apt-get install dataset-fashion-mnist"), msg.c_str());
        QVERIFY2(contains(msg, "--data"), msg.c_str());
    }

    void synthetic() {
        DatasetRequest r{"synthetic", "", {}};
        r.synthetic.train = 50;
        r.synthetic.test = 20;
        r.synthetic.size = 12;
        r.synthetic.seed = 3;
        const TrainTest tt = load_dataset(r);
        const TrainTest direct = make_synthetic(r.synthetic);
        QCOMPARE(tt.train.count(), std::size_t(50));
        QCOMPARE(tt.test.count(), std::size_t(20));
        QCOMPARE(tt.train.height, 12);
        QVERIFY(tt.train.images == direct.train.images);
    }

    void subsetKeepsTheFirstImages() {
        DatasetRequest r{"synthetic", "", {}};
        r.synthetic.train = 50;
        r.synthetic.test = 20;
        r.synthetic.size = 12;
        const TrainTest whole = load_dataset(r);
        r.train_subset = 7;
        r.test_subset = 20;  // the whole set is allowed
        const TrainTest part = load_dataset(r);
        QCOMPARE(part.train.count(), std::size_t(7));
        QCOMPARE(part.test.count(), std::size_t(20));
        QVERIFY(std::equal(part.train.images.begin(), part.train.images.end(),
                           whole.train.images.begin()));
        QCOMPARE(part.train.images.size(), 7 * whole.train.image_size());

        r.test_subset = 21;  // larger than the set: an error naming the field, not a clamp
        const auto [kind, message] = error_of(r);
        QCOMPARE(kind, int(ErrorKind::InvalidSpec));
        QVERIFY2(contains(message, "test_subset is 21") && contains(message, "only 20"),
                 message.c_str());
    }

    void mnistFromFolder() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::string dir = tmp.path().toStdString();
        QVERIFY(write_gzip(dir + "/train-images-idx3-ubyte.gz",
                           idx_images(6, 28, 28, pattern(6 * 784, 1))));
        QVERIFY(write_gzip(dir + "/train-labels-idx1-ubyte.gz", idx_labels(pattern(6, 2, 10))));
        QVERIFY(write_plain(dir + "/t10k-images-idx3-ubyte",
                            idx_images(2, 28, 28, pattern(2 * 784, 3))));
        QVERIFY(write_plain(dir + "/t10k-labels-idx1-ubyte", idx_labels(pattern(2, 4, 10))));
        const TrainTest tt = load_dataset(DatasetRequest{"mnist", dir, {}});
        QCOMPARE(tt.train.count(), std::size_t(6));
        QCOMPARE(tt.test.count(), std::size_t(2));
        QVERIFY(tt.train.images == pattern(6 * 784, 1));
        // The same folder under the fashion-mnist name: an explicit folder wins over the default.
        const TrainTest fm = load_dataset(DatasetRequest{"fashion-mnist", dir, {}});
        QVERIFY(fm.test.labels == pattern(2, 4, 10));
    }

    void folderProblemIsEmptyWithoutFolder() {
        QCOMPARE(dataset_folder_problem(DatasetRequest{"synthetic", "", {}}), std::string());
        QCOMPARE(dataset_folder_problem(DatasetRequest{"synthetic", "/nonexistent/syn", {}}),
                 std::string());
        // An unknown name is not a folder's problem, though load_dataset rejects it.
        QCOMPARE(dataset_folder_problem(DatasetRequest{"imagenet", "/nonexistent/in", {}}),
                 std::string());
        QCOMPARE(error_of(DatasetRequest{"imagenet", "/nonexistent/in", {}}).first,
                 int(ErrorKind::InvalidSpec));
    }

    void folderProblemNamesMissingFolder() {
        for (const char* name : {"mnist", "fashion-mnist", "cifar10"}) {
            const std::string msg =
                dataset_folder_problem(DatasetRequest{name, "/nonexistent/scalelab-data", {}});
            QVERIFY2(contains(msg, "'/nonexistent/scalelab-data' does not exist"), msg.c_str());
        }
        const std::string mnist = dataset_folder_problem(DatasetRequest{"mnist", "", {}});
        QVERIFY2(contains(mnist, "no default folder"), mnist.c_str());
    }

    void folderProblemNamesMissingIdxFile() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::string dir = tmp.path().toStdString();
        QVERIFY(write_stub(dir + "/" + kIdxFiles[0] + ".gz"));
        QVERIFY(write_stub(dir + "/" + kIdxFiles[1]));
        QVERIFY(write_stub(dir + "/" + kIdxFiles[2]));
        const std::string msg = dataset_folder_problem(DatasetRequest{"mnist", dir, {}});
        // Only the missing file is listed as lacking (the advice after ';' names all four).
        QVERIFY2(contains(msg, "lacks t10k-labels-idx1-ubyte[.gz];"), msg.c_str());
        QVERIFY2(contains(msg, dir), msg.c_str());
    }

    void folderProblemAcceptsGzipAndReadsNothing() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::string dir = tmp.path().toStdString();
        for (const char* file : kIdxFiles) {
            QVERIFY(write_stub(dir + "/" + file + ".gz"));
        }
        QCOMPARE(dataset_folder_problem(DatasetRequest{"mnist", dir, {}}), std::string());
        QCOMPARE(dataset_folder_problem(DatasetRequest{"fashion-mnist", dir, {}}), std::string());
        // The files are there but broken: only reading them, which the check does not, fails.
        QCOMPARE(error_of(DatasetRequest{"mnist", dir, {}}).first, int(ErrorKind::DatasetCorrupt));
    }

    void folderProblemFindsCifarSubfolder() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::string dir = tmp.path().toStdString();
        const std::string before = dataset_folder_problem(DatasetRequest{"cifar10", dir, {}});
        QVERIFY2(contains(before, "lacks data_batch_1.bin") && contains(before, "test_batch.bin"),
                 before.c_str());
        QVERIFY(QDir(tmp.path()).mkdir("cifar-10-batches-bin"));
        for (const char* file : kCifarFiles) {
            QVERIFY(write_stub(dir + "/cifar-10-batches-bin/" + file));
        }
        QCOMPARE(dataset_folder_problem(DatasetRequest{"cifar10", dir, {}}), std::string());
        QCOMPARE(error_of(DatasetRequest{"cifar10", dir, {}}).first,
                 int(ErrorKind::DatasetCorrupt));
    }

    // The form and the command line ask before a run: a folder where a file belongs was "lacks".
    void folderProblemNamesWhatIsInAFilesPlace() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::string dir = tmp.path().toStdString();
        for (const char* file : kIdxFiles) {
            QVERIFY(write_stub(dir + "/" + file));
        }
        const std::string labels = dir + "/" + kIdxFiles[3];
        QVERIFY(QFile::remove(QString::fromStdString(labels)));
        QVERIFY(QDir().mkdir(QString::fromStdString(labels)));
        const DatasetRequest request{"mnist", dir, {}};
        QCOMPARE(QString::fromStdString(dataset_folder_problem(request)),
                 QString::fromStdString("dataset file '" + labels +
                                        "' is a folder, not a regular file; check the path"));
        QCOMPARE(dataset_folder_problem(request), error_of(request).second);
    }

    void folderProblemIsWhatLoadDatasetThrows() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::string dir = tmp.path().toStdString();
        QVERIFY(write_stub(dir + "/" + kIdxFiles[0]));
        QVERIFY(write_stub(dir + "/" + kCifarFiles[5]));
        QVERIFY(write_stub(dir + "/a-file"));
        const DatasetRequest requests[] = {
            {"mnist", "", {}},
            {"cifar10", "", {}},
            {"mnist", "/nonexistent/scalelab-mnist", {}},
            {"fashion-mnist", "/nonexistent/scalelab-fm", {}},
            {"cifar10", "/nonexistent/scalelab-cifar", {}},
            {"mnist", dir + "/a-file", {}},
            {"cifar10", dir + "/a-file", {}},
            {"mnist", dir, {}},
            {"fashion-mnist", dir, {}},
            {"cifar10", dir, {}},
        };
        for (const DatasetRequest& r : requests) {
            const auto [kind, thrown] = error_of(r);
            const std::string problem = dataset_folder_problem(r);
            QCOMPARE(kind, int(ErrorKind::DatasetMissing));
            QVERIFY2(!problem.empty(), (r.name + " " + r.dir).c_str());
            QCOMPARE(problem, thrown);
        }
    }

    void realFashionMnist() {
        const std::string dir = default_data_dir("fashion-mnist");
        if (!QDir(QString::fromStdString(dir)).exists()) {
            QSKIP("Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)");
        }
        const TrainTest tt = load_dataset(DatasetRequest{"fashion-mnist", "", {}});
        QCOMPARE(tt.train.count(), std::size_t(60000));
        QCOMPARE(tt.test.count(), std::size_t(10000));
        for (const Dataset* d : {&tt.train, &tt.test}) {
            QCOMPARE(d->channels, 1);
            QCOMPARE(d->height, 28);
            QCOMPARE(d->width, 28);
            QCOMPARE(d->images.size(), d->count() * 784);
        }
        // Fashion-MNIST is exactly balanced: 6000 and 1000 images per class.
        std::vector<int> train_per_class(10, 0), test_per_class(10, 0);
        for (std::uint8_t l : tt.train.labels) {
            ++train_per_class[l];
        }
        for (std::uint8_t l : tt.test.labels) {
            ++test_per_class[l];
        }
        QCOMPARE(train_per_class, std::vector<int>(10, 6000));
        QCOMPARE(test_per_class, std::vector<int>(10, 1000));
        // The statistics everybody normalises Fashion-MNIST with: mean 0.2860, std 0.3530.
        const Normalization n = channel_statistics(tt.train);
        qInfo("Fashion-MNIST train mean %.4f std %.4f", n.mean[0], n.stddev[0]);
        QVERIFY(std::abs(n.mean[0] - 0.2860f) < 5e-4f);
        QVERIFY(std::abs(n.stddev[0] - 0.3530f) < 5e-4f);
    }
};

QTEST_APPLESS_MAIN(TestLoadDataset)
#include "test_load_dataset.moc"
