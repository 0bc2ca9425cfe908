#pragma once

// What the run store tests need besides the store: a plain SQLite connection of their own to
// look at (or damage) a store file the way another program would, and a file's bytes.

#include <QFile>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QString>
#include <QVariant>

#include <atomic>
#include <stdexcept>

namespace scalelab::testing {

inline QByteArray file_bytes(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// One named Qt SQL connection to `path`, removed again when it goes.
class SqliteFile {
  public:
    explicit SqliteFile(const QString& path)
        : name_(QStringLiteral("test-sqlite-file-%1").arg(next_id().fetch_add(1))) {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name_);
        db.setDatabaseName(path);
        if (!db.open())
            throw std::runtime_error(db.lastError().text().toStdString());
    }
    ~SqliteFile() {
        database().close();
        QSqlDatabase::removeDatabase(name_);
    }
    SqliteFile(const SqliteFile&) = delete;
    SqliteFile& operator=(const SqliteFile&) = delete;

    QSqlDatabase database() const { return QSqlDatabase::database(name_, false); }

    // Runs `sql`; throws with SQLite's message when it fails.
    void exec(const QString& sql) const { run(sql); }

    // The first column of the first row of `sql`'s result.
    QVariant scalar(const QString& sql) const {
        QSqlQuery query = run(sql);
        return query.next() ? query.value(0) : QVariant();
    }

  private:
    QSqlQuery run(const QString& sql) const {
        QSqlQuery query(database());
        if (!query.exec(sql))
            throw std::runtime_error((sql + ": " + query.lastError().text()).toStdString());
        return query;
    }

    static std::atomic<int>& next_id() {
        static std::atomic<int> id{0};
        return id;
    }

    QString name_;
};

}  // namespace scalelab::testing
