#include "lesson_library.h"

#include <QDir>
#include <QFile>
#include <QStandardPaths>

namespace scalelab {

QString shipped_lessons_folder() {
    return QStringLiteral(":/lessons");
}

QString user_lessons_folder() {
    // The run store's base (see RunStore::default_path()), whatever the program's name.
    return QDir(QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation))
        .filePath(QStringLiteral("ScaleLab/lessons"));
}

LessonEntry load_lesson_file(const QString& path, const DeviceInventory& devices, LessonSize size) {
    LessonEntry entry;
    entry.file = path;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        entry.error = QStringLiteral(
                          "%1: cannot be read (%2): check that it exists and that "
                          "you may read it")
                          .arg(path, file.errorString());
        return entry;
    }
    try {
        entry.lesson = parse_lesson(file.readAll(), path, devices, size);
    } catch (const LessonError& error) {
        entry.error = QString::fromUtf8(error.what());
    }
    return entry;
}

std::vector<LessonEntry> list_lessons(const DeviceInventory& devices, LessonSize size,
                                      const QStringList& folders) {
    std::vector<LessonEntry> entries;
    for (const QString& folder : folders) {
        const QDir dir(folder);
        const QStringList names =
            dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
        for (const QString& name : names)
            entries.push_back(load_lesson_file(dir.filePath(name), devices, size));
    }
    return entries;
}

LessonEntry find_lesson(const QString& word, const DeviceInventory& devices, LessonSize size) {
    bool is_number = false;
    const int number = word.toInt(&is_number);
    if (!is_number)
        return load_lesson_file(word, devices, size);
    std::vector<LessonEntry> entries = list_lessons(devices, size);
    if (number < 1 || std::size_t(number) > entries.size()) {
        LessonEntry missing;
        missing.error = QStringLiteral(
                            "there is no lesson %1: the lessons are numbered from 1 to %2 "
                            "('scalelab-cli lesson list', or the Lessons menu)")
                            .arg(number)
                            .arg(entries.size());
        return missing;
    }
    return std::move(entries[std::size_t(number - 1)]);
}

}  // namespace scalelab
