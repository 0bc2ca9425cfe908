#pragma once

#include <QIODevice>
#include <QString>

#include <functional>

namespace scalelab {

// Writes a file whole or not at all, the one way every export and saved file is written:
//  - a file of a run store this process has open (the store, its -wal, -shm or -journal) is
//    refused, whatever the spelling (OpenStoreFiles);
//  - a target that exists but is not a regular file (a device such as /dev/full, a folder, a
//    pipe) is refused: renaming over it would replace it;
//  - the contents go to a temporary file in the same folder (QSaveFile), which is flushed and
//    fsynced, and only then renamed over the target, so that a full disk, a write error or a
//    crash leaves what was there before.
// `write` writes the contents to the device it is given and returns false when it could not
// (its stream reported an error). Returns an empty string when the file was written, else the
// reason, for a message that names the file: "it is a folder", "No space left on device".
// Follows a symbolic link to a regular file and writes that file.
QString write_whole_file(const QString& path, const std::function<bool(QIODevice&)>& write);

// What write_whole_file checks before it writes, found without touching the file: the reason
// `path` cannot be written (a file of an open run store, not a regular file, no such folder),
// empty when it can be tried.
QString unwritable_reason(const QString& path);

// What a dialog or the CLI says when write_whole_file gave `reason` for `path`.
QString cannot_write_message(const QString& path, const QString& reason);

}  // namespace scalelab
