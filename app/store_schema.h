#pragma once

#include <QSqlDatabase>
#include <QSqlError>
#include <QString>

#include <optional>
#include <vector>

namespace scalelab::store_schema {

// The tag every run store carries in its header (PRAGMA application_id, "SCLB"), so that another
// program's SQLite file is never taken for a store and migrated.
inline constexpr int application_id = 0x53434C42;

// One migration: the statements that take a store from version `to_version - 1` to
// `to_version`. Version 1 is the first design (runs and their metric rows); version 2 adds what
// crash detection and organising runs need (tags, the recording process, its heartbeat);
// version 3 the share of the cores other programs used during a run; version 4 the group of
// repeats a run belongs to.
struct SchemaStep {
    int to_version = 0;
    std::vector<QString> statements;
};

// Every step from an empty file (version 0) to RunStore::schema_version, in order.
const std::vector<SchemaStep>& schema_steps();

// Applies the steps after `from_version` up to `to_version` and sets PRAGMA user_version, inside
// the caller's transaction. Returns the first error, or an error of type NoError.
QSqlError migrate(QSqlDatabase& db, int from_version, int to_version);

// One column of a table, as PRAGMA table_info states it.
struct Column {
    QString name;
    QString type;
    bool not_null = false;
    std::optional<QString> default_sql;  // the DEFAULT clause's expression, e.g. "'[]'"
    int key = 0;                         // its place in the primary key; 0: not in it

    // As SQL declares it, e.g. "state TEXT NOT NULL" (for messages).
    QString declared() const;
    bool operator==(const Column&) const = default;
};

// The columns of `table` in `db`, in table order; empty for no such table.
std::vector<Column> table_columns(QSqlDatabase& db, const QString& table);

// table_columns of the runs or metrics table of a store of schema `version` (1 to
// RunStore::schema_version), as the steps make it in an empty database: what a file that states
// that version has.
const std::vector<Column>& expected_columns(int version, const QString& table);

}  // namespace scalelab::store_schema
