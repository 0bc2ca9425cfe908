// Finding lessons: the shipped ones from the resources, the user's from their folder; a broken
// file is listed with its problem and keeps no other lesson from the list.

#include <QtTest>

#include <QFileInfo>
#include <QTemporaryDir>

#include "lesson_library.h"
#include "run_store.h"

using namespace scalelab;

namespace {

DeviceInventory no_gpus() {
    DeviceInventory devices;
    devices.no_gpu_reason = "no CUDA backend in this build";
    return devices;
}

QByteArray lesson_titled(const char* title) {
    return QByteArray(R"({"title": ")") + title +
           R"(", "explanation": "e", "charts": ["train_loss"],
  "runs": [{"name": "r", "dataset": "synthetic", "model": "mlp"}]})";
}

void write(const QString& path, const QByteArray& content) {
    QFile file(path);
    QVERIFY2(file.open(QIODevice::WriteOnly), qPrintable(path));
    file.write(content);
}

}  // namespace

class TestLessonLibrary : public QObject {
    Q_OBJECT

  private slots:
    void aBrokenFileIsListedWithItsProblemBesideTheGoodOnes() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        write(dir.filePath("a.json"), lesson_titled("First"));
        write(dir.filePath("b.json"),
              "{\"title\": \"Broken\",\n\"explanation\": \"e\",\n"
              "\"colour\": \"red\",\n\"charts\": [\"train_loss\"],\n"
              "\"runs\": [{\"name\": \"r\"}]}");
        write(dir.filePath("c.json"), lesson_titled("Third"));
        write(dir.filePath("notes.txt"), "not a lesson");

        const std::vector<LessonEntry> entries =
            list_lessons(no_gpus(), LessonSize::Full, {dir.path()});
        QCOMPARE(entries.size(), std::size_t{3});
        QCOMPARE(QFileInfo(entries[0].file).fileName(), QStringLiteral("a.json"));
        QVERIFY2(entries[0].lesson, qPrintable(entries[0].error));
        QCOMPARE(entries[0].lesson->title, QStringLiteral("First"));
        QVERIFY(!entries[1].lesson);
        QVERIFY2(entries[1].error.startsWith(dir.filePath("b.json") + ":3: field 'colour': "
                                                                      "unknown key"),
                 qPrintable(entries[1].error));
        QVERIFY2(entries[2].lesson, qPrintable(entries[2].error));
        QCOMPARE(entries[2].lesson->title, QStringLiteral("Third"));
        QVERIFY(entries[2].error.isEmpty());
    }

    void shippedLessonsComeFirstInFileOrder() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        write(dir.filePath("00-mine.json"), lesson_titled("Mine"));
        const std::vector<LessonEntry> entries =
            list_lessons(no_gpus(), LessonSize::Full, {shipped_lessons_folder(), dir.path()});
        QCOMPARE(entries.size(), std::size_t{9});
        QVERIFY(entries.front().file.startsWith(":/lessons/01-"));
        QVERIFY(entries[7].file.startsWith(":/lessons/08-"));
        QCOMPARE(entries.back().lesson->title, QStringLiteral("Mine"));
    }

    void aLessonIsFoundByItsNumberOrItsFile() {
        QTemporaryDir data_home;  // no lessons of the user's: the shipped ones only
        qputenv("XDG_DATA_HOME", data_home.path().toUtf8());
        const LessonEntry third = find_lesson(QStringLiteral("3"), no_gpus());
        QVERIFY2(third.lesson, qPrintable(third.error));
        QVERIFY(third.file.startsWith(":/lessons/03-"));

        const LessonEntry none = find_lesson(QStringLiteral("9"), no_gpus());
        QVERIFY(!none.lesson);
        QVERIFY2(none.error.contains("there is no lesson 9") && none.error.contains("from 1 to 8"),
                 qPrintable(none.error));
        QVERIFY(!find_lesson(QStringLiteral("0"), no_gpus()).lesson);

        write(data_home.filePath("mine.json"), lesson_titled("Mine"));
        const LessonEntry file = find_lesson(data_home.filePath("mine.json"), no_gpus());
        QVERIFY2(file.lesson, qPrintable(file.error));
        QCOMPARE(file.lesson->title, QStringLiteral("Mine"));
    }

    void aMissingFolderListsNothing() {
        QTemporaryDir dir;
        QVERIFY(list_lessons(no_gpus(), LessonSize::Full, {dir.filePath("absent")}).empty());
    }

    void aFileThatCannotBeReadSaysSo() {
        QTemporaryDir dir;
        const LessonEntry entry = load_lesson_file(dir.filePath("gone.json"), no_gpus());
        QVERIFY(!entry.lesson);
        QVERIFY2(entry.error.contains("gone.json: cannot be read"), qPrintable(entry.error));
    }

    void userLessonsLiveBesideTheRunStore() {
        QTemporaryDir data_home;
        qputenv("XDG_DATA_HOME", data_home.path().toUtf8());
        QCOMPARE(user_lessons_folder(), data_home.filePath("ScaleLab/lessons"));
        QCOMPARE(QFileInfo(user_lessons_folder()).path(),
                 QFileInfo(RunStore::default_path()).path());
    }
};

QTEST_GUILESS_MAIN(TestLessonLibrary)
#include "test_lesson_library.moc"
