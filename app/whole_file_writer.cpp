#include "whole_file_writer.h"

#include <QDir>
#include <QFileInfo>
#include <QSaveFile>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "guarded_files.h"

namespace scalelab {

namespace {

// Why `path`, which exists, cannot be replaced by a file; empty for a regular file.
QString not_a_regular_file(const QFileInfo& info) {
    if (info.isFile())
        return {};
    if (info.isDir())
        return QStringLiteral("it is a folder");
    return QStringLiteral(
        "it is not a regular file (a device, a pipe or a socket), and writing "
        "would replace it");
}

}  // namespace

QString unwritable_reason(const QString& path) {
    if (path.isEmpty())
        return QStringLiteral("no file name was given");
    if (const std::optional<GuardedFile> store = OpenStoreFiles::at(path))
        return QStringLiteral("it is %1 (%2), which would be replaced")
            .arg(store->what, QDir::toNativeSeparators(store->path));
    const QFileInfo target(path);
    if (target.exists() || target.isSymLink())
        if (const QString why = not_a_regular_file(target); !why.isEmpty())
            return why;
    const QFileInfo folder(target.absolutePath());
    if (!folder.isDir())
        return QStringLiteral("the folder %1 does not exist")
            .arg(QDir::toNativeSeparators(folder.filePath()));
    return {};
}

QString write_whole_file(const QString& path, const std::function<bool(QIODevice&)>& write) {
    if (const QString why = unwritable_reason(path); !why.isEmpty())
        return why;

    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return file.errorString();
    // The device's own error, read before cancelWriting() replaces it with "canceled".
    const auto cancel = [&](const QString& reason) {
        file.cancelWriting();
        return reason;
    };
    // A write the system cut short (a full disk, a file size limit) may leave QSaveFile without
    // an error of its own: errno then holds the system's reason.
    errno = 0;
    const bool written = write(file);
    const int write_errno = errno;
    if (!written || file.error() != QFileDevice::NoError)
        return cancel(file.error() != QFileDevice::NoError ? file.errorString()
                      : write_errno != 0 ? QString::fromLocal8Bit(std::strerror(write_errno))
                                         : QStringLiteral("the write failed"));
    if (!file.flush())
        return cancel(file.errorString());
    if (::fsync(file.handle()) != 0)
        return cancel(QString::fromLocal8Bit(std::strerror(errno)));
    if (!file.commit())
        return file.errorString();
    return {};
}

QString cannot_write_message(const QString& path, const QString& reason) {
    return QObject::tr("Cannot write %1: %2. Choose another folder or file name.")
        .arg(QDir::toNativeSeparators(path), reason);
}

}  // namespace scalelab
