#pragma once

#include <QString>

namespace scalelab {

// Whether `a` and `b` name the same file, whatever their spelling: where both exist, the same
// device and inode (a symbolic link, a hard link, a relative path and "./" all count); where one
// does not exist yet (an output about to be created), the same folder, compared by its own
// identity, and the same name. A symbolic link is followed, a dangling one to where it points.
bool same_file(const QString& a, const QString& b);

}  // namespace scalelab
