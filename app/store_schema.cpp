#include "store_schema.h"

#include <QSqlQuery>

#include <map>
#include <stdexcept>

namespace scalelab::store_schema {

const std::vector<SchemaStep>& schema_steps() {
    static const std::vector<SchemaStep> steps{
        {1,
         {
             // Times are ISO 8601 in UTC; info_json is NULL until the run starts. The summary
             // columns (steps to targets_json) let the run list show a run without its metrics.
             "CREATE TABLE runs ("
             " id INTEGER PRIMARY KEY,"
             " name TEXT NOT NULL,"
             " config_json TEXT NOT NULL,"
             " state TEXT NOT NULL,"
             " message TEXT NOT NULL DEFAULT '',"
             " info_json TEXT,"
             " machine TEXT NOT NULL DEFAULT '',"
             " created TEXT NOT NULL,"
             " started_at TEXT,"
             " ended_at TEXT,"
             " steps INTEGER NOT NULL DEFAULT 0,"
             " epochs INTEGER NOT NULL DEFAULT 0,"
             " train_seconds REAL NOT NULL DEFAULT 0,"
             " best_val_accuracy REAL,"
             " mean_images_per_s REAL,"
             " targets_json TEXT NOT NULL DEFAULT '[]')",
             // One row per value of a curve, clustered by (run, curve, step): loading one run's
             // curves is one range scan. value is NULL for NaN, which SQLite cannot store.
             "CREATE TABLE metrics ("
             " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
             " name TEXT NOT NULL,"
             " step INTEGER NOT NULL,"
             " epoch INTEGER NOT NULL,"
             " wall_time REAL NOT NULL,"
             " value REAL,"
             " PRIMARY KEY (run_id, name, step)) WITHOUT ROWID",
             QStringLiteral("PRAGMA application_id = %1").arg(application_id),
         }},
        {2,
         {
             // The process that records a run, so that a run it left "running" when it died is
             // found interrupted; heartbeat is its last commit (ms since 1970, UTC).
             "ALTER TABLE runs ADD COLUMN tags_json TEXT NOT NULL DEFAULT '[]'",
             "ALTER TABLE runs ADD COLUMN pid INTEGER",
             "ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT ''",
             "ALTER TABLE runs ADD COLUMN heartbeat INTEGER",
         }},
        {3,
         {
             // The share of the cores other programs used while the run trained (NULL: not
             // measured), so that a run whose throughput they disturbed is flagged in the list.
             "ALTER TABLE runs ADD COLUMN other_programs_share REAL",
         }},
        {4,
         {
             // The repeats a run is one of (RunRecord::group): '' for a run that stands alone.
             "ALTER TABLE runs ADD COLUMN group_id TEXT NOT NULL DEFAULT ''",
         }},
    };
    return steps;
}

QSqlError migrate(QSqlDatabase& db, int from_version, int to_version) {
    QSqlQuery query(db);
    for (const SchemaStep& step : schema_steps()) {
        if (step.to_version <= from_version || step.to_version > to_version)
            continue;
        for (const QString& statement : step.statements)
            if (!query.exec(statement))
                return query.lastError();
    }
    if (!query.exec(QStringLiteral("PRAGMA user_version = %1").arg(to_version)))
        return query.lastError();
    return {};
}

QString Column::declared() const {
    QString text = name + QLatin1Char(' ') + type;
    if (not_null)
        text += QStringLiteral(" NOT NULL");
    if (default_sql)
        text += QStringLiteral(" DEFAULT ") + *default_sql;
    if (key != 0)
        text += QStringLiteral(" (key %1)").arg(key);
    return text;
}

std::vector<Column> table_columns(QSqlDatabase& db, const QString& table) {
    QSqlQuery query(db);
    query.setForwardOnly(true);
    std::vector<Column> columns;
    if (!query.exec(QStringLiteral("SELECT name, type, \"notnull\", dflt_value, pk FROM "
                                   "pragma_table_info('%1')")
                        .arg(table)))
        return columns;
    while (query.next())
        columns.push_back(Column{.name = query.value(0).toString(),
                                 .type = query.value(1).toString(),
                                 .not_null = query.value(2).toInt() != 0,
                                 .default_sql = query.value(3).isNull()
                                                    ? std::nullopt
                                                    : std::optional(query.value(3).toString()),
                                 .key = query.value(4).toInt()});
    return columns;
}

namespace {

using ColumnsByTable = std::map<QString, std::vector<Column>>;

// The runs and metrics columns after each step, indexed by version, from an in-memory database
// that the steps build from empty.
std::vector<ColumnsByTable> columns_of_each_version() {
    std::vector<ColumnsByTable> versions(1);  // version 0: no tables
    const QString connection = QStringLiteral("scalelab-schema-reference");
    QSqlError error;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
        db.setDatabaseName(QStringLiteral(":memory:"));
        if (!db.open())
            error = db.lastError();
        for (const SchemaStep& step : schema_steps()) {
            if (error.type() == QSqlError::NoError)
                error = migrate(db, step.to_version - 1, step.to_version);
            versions.push_back({{QStringLiteral("runs"), table_columns(db, "runs")},
                                {QStringLiteral("metrics"), table_columns(db, "metrics")}});
        }
    }
    QSqlDatabase::removeDatabase(connection);
    // Only a mistake in the steps themselves gets here: every test that opens a store fails.
    if (error.type() != QSqlError::NoError)
        throw std::runtime_error("the store's schema steps fail on an empty database: " +
                                 error.text().toStdString());
    return versions;
}

}  // namespace

const std::vector<Column>& expected_columns(int version, const QString& table) {
    static const std::vector<ColumnsByTable> versions = columns_of_each_version();
    return versions.at(std::size_t(version)).at(table);
}

}  // namespace scalelab::store_schema
