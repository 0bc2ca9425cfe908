#pragma once

#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

#include "lesson.h"

namespace scalelab {

// One lesson file as the lesson menu lists it: the lesson, or why it cannot be opened.
struct LessonEntry {
    QString file;
    std::optional<Lesson> lesson;  // empty when the file has a problem
    QString error;                 // every problem, one per line (LessonError's message)
};

// The shipped lessons, compiled in as Qt resources (resources/lessons/*.json).
QString shipped_lessons_folder();  // ":/lessons"
// Where users put lessons of their own, in the same format: GenericDataLocation/ScaleLab/lessons
// ($XDG_DATA_HOME/ScaleLab/lessons on Linux), beside the run store (RunStore::default_path()),
// the GUI's AppDataLocation/lessons. It need not exist.
QString user_lessons_folder();

// Reads one lesson file; a file that cannot be read or parsed comes back with its error.
LessonEntry load_lesson_file(const QString& path, const DeviceInventory& devices,
                             LessonSize size = LessonSize::Full);

// Every *.json file of each folder, folder by folder in the order given, each folder's files by
// name. A folder that does not exist lists nothing.
std::vector<LessonEntry> list_lessons(const DeviceInventory& devices,
                                      LessonSize size = LessonSize::Full,
                                      const QStringList& folders = {shipped_lessons_folder(),
                                                                    user_lessons_folder()});

// The lesson `word` names: its number in list_lessons(devices, size) (from 1, as `scalelab-cli
// lesson list` and the Lessons menu number them), or else a file's path. An entry with the
// error when there is no such number or the file has a problem.
LessonEntry find_lesson(const QString& word, const DeviceInventory& devices,
                        LessonSize size = LessonSize::Full);

}  // namespace scalelab
