#include "guarded_files.h"

#include <QDir>

#include <algorithm>

#include "same_file.h"

namespace scalelab {

std::vector<GuardedFile> run_store_files(const QString& store_path) {
    return {
        {store_path, QStringLiteral("the run store")},
        {store_path + QStringLiteral("-wal"), QStringLiteral("the run store's write-ahead log")},
        {store_path + QStringLiteral("-shm"),
         QStringLiteral("the run store's shared-memory index")},
        {store_path + QStringLiteral("-journal"), QStringLiteral("the run store's journal")}};
}

std::optional<GuardedFile> guarded_file_at(const QString& output,
                                           const std::vector<GuardedFile>& guarded) {
    for (const GuardedFile& file : guarded)
        if (same_file(output, file.path))
            return file;
    return std::nullopt;
}

QString guarded_output_message(const QString& output, const GuardedFile& guarded) {
    const QString shown = QDir::toNativeSeparators(output);
    const QString target = QDir::toNativeSeparators(guarded.path);
    return (shown == target ? QStringLiteral("%1 is %2").arg(shown, guarded.what)
                            : QStringLiteral("%1 is %2 (%3)").arg(shown, guarded.what, target)) +
           QStringLiteral(": writing it would replace it; write to another file");
}

std::mutex OpenStoreFiles::mutex_;
std::vector<QString> OpenStoreFiles::stores_;

OpenStoreFiles::Registration::Registration(const QString& store_path) : store_path_(store_path) {
    const std::lock_guard lock(mutex_);
    stores_.push_back(store_path_);
}

OpenStoreFiles::Registration::~Registration() {
    const std::lock_guard lock(mutex_);
    stores_.erase(std::find(stores_.begin(), stores_.end(), store_path_));
}

std::optional<GuardedFile> OpenStoreFiles::at(const QString& output) {
    const std::lock_guard lock(mutex_);
    for (const QString& store : stores_)
        if (std::optional<GuardedFile> file = guarded_file_at(output, run_store_files(store)))
            return file;
    return std::nullopt;
}

}  // namespace scalelab
