#include "same_file.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <sys/stat.h>

namespace scalelab {

namespace {

// Where `path` leads: a symbolic link's target, followed for as long as it is a link (up to
// the kernel's own limit of 40), as an absolute path.
QString followed(const QString& path) {
    QString at = QFileInfo(path).absoluteFilePath();
    for (int hops = 0; hops < 40 && QFileInfo(at).isSymLink(); ++hops)
        at = QFileInfo(at).symLinkTarget();
    return QDir::cleanPath(at);
}

bool identity(const QString& path, struct stat& out) {
    return ::stat(QFile::encodeName(path).constData(), &out) == 0;
}

}  // namespace

bool same_file(const QString& a, const QString& b) {
    const QString to_a = followed(a), to_b = followed(b);
    struct stat file_a {
    }, file_b{};
    const bool a_exists = identity(to_a, file_a), b_exists = identity(to_b, file_b);
    if (a_exists && b_exists)
        return file_a.st_dev == file_b.st_dev && file_a.st_ino == file_b.st_ino;
    if (a_exists != b_exists)
        return false;
    const QFileInfo info_a(to_a), info_b(to_b);
    return info_a.fileName() == info_b.fileName() &&
           same_file(info_a.absolutePath(), info_b.absolutePath());
}

}  // namespace scalelab
