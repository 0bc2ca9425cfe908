#include "run_store.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QStandardPaths>
#include <QSysInfo>
#include <QUrl>
#include <QtEndian>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <limits>
#include <map>

#include "backend/device_inventory.h"
#include "error.h"
#include "printable_text.h"
#include "run_labels.h"
#include "run_spec_json.h"
#include "store_json.h"
#include "store_schema.h"

namespace scalelab {

namespace {

// SQLite's primary result codes that call for their own message.
constexpr int sqlite_busy = 5;
constexpr int sqlite_locked = 6;
constexpr int sqlite_readonly = 8;
constexpr int sqlite_corrupt = 11;
constexpr int sqlite_full = 13;
constexpr int sqlite_cantopen = 14;
constexpr int sqlite_notadb = 26;

// quick_check reads every page, about 2 s per GB: open() runs it for stores up to this size
// (0.15 s), and recording and exporting for any size (RunStore::require_sound, check_integrity).
constexpr qint64 largest_store_checked_at_open = qint64(64) << 20;

// A run left active by a process that still exists on this host, but that has not committed
// for this long, belongs to a process that reused a dead recorder's pid. The recorder commits
// its heartbeat every few seconds, even through a long evaluation.
constexpr qint64 stale_heartbeat_same_host_ms = 10 * 60 * 1000;
// On another host the pid cannot be checked: a minute without a heartbeat is a dead run.
constexpr qint64 stale_heartbeat_other_host_ms = 60 * 1000;

const QString queued_state_name = QStringLiteral("created");

int sqlite_code(const QSqlError& error) {
    bool ok = false;
    const int code = error.nativeErrorCode().toInt(&ok);
    return ok ? code & 0xff : -1;
}

// SQLite's own words ("database or disk is full"), else Qt's.
QString error_text(const QSqlError& error) {
    if (!error.databaseText().isEmpty())
        return error.databaseText();
    return error.driverText().isEmpty() ? QStringLiteral("unknown SQLite error")
                                        : error.driverText();
}

// What SQLite said, as the user's problem and what to do about it.
StoreError store_error(const QString& path, const QSqlError& error) {
    using Kind = StoreError::Kind;
    switch (sqlite_code(error)) {
        case sqlite_busy:
        case sqlite_locked:
            return StoreError(Kind::Locked,
                              QStringLiteral("%1 is locked by another program: close it or wait, "
                                             "then try again")
                                  .arg(path));
        case sqlite_full:
            return StoreError(Kind::DiskFull,
                              QStringLiteral("the disk holding %1 is full: free space and try "
                                             "again; what was recorded before is kept")
                                  .arg(path));
        case sqlite_corrupt:
        case sqlite_notadb:
            return StoreError(Kind::Corrupt,
                              QStringLiteral("%1 is damaged (%2): open another file or start a "
                                             "new store; ScaleLab leaves this one as it is")
                                  .arg(path, error_text(error)));
        case sqlite_cantopen:
            return StoreError(Kind::Unreadable,
                              QStringLiteral("cannot open %1 (%2): check that its folder exists "
                                             "and that you may read and write it")
                                  .arg(path, error_text(error)));
        case sqlite_readonly:
            return StoreError(Kind::WriteFailed,
                              QStringLiteral("cannot write to %1 (%2): make it writable or open "
                                             "another file")
                                  .arg(path, error_text(error)));
        default:
            return StoreError(Kind::WriteFailed,
                              QStringLiteral("the run store %1 failed (%2): check the disk and "
                                             "try again")
                                  .arg(path, error_text(error)));
    }
}

StoreError not_found(const QString& path, std::int64_t id) {
    return StoreError(StoreError::Kind::NotFound,
                      QStringLiteral("there is no run %1 in %2 (deleted?): pick one of the runs "
                                     "it lists")
                          .arg(id)
                          .arg(path));
}

StoreError not_a_store(const QString& path) {
    return StoreError(StoreError::Kind::Corrupt,
                      QStringLiteral("%1 is not a ScaleLab run store (not an SQLite database): "
                                     "open another file or start a new store")
                          .arg(path));
}

QString state_name(RunState state) {
    return state == RunState::Queued
               ? queued_state_name
               : QString::fromLatin1(to_string(state).data(), qsizetype(to_string(state).size()));
}

std::optional<RunState> state_from_name(const QString& name) {
    if (name == queued_state_name)
        return RunState::Queued;
    return EnumNames<RunState>::table.parse(name.toStdString());
}

// The names the metrics table uses, made once: they are bound and compared for every row.
const std::array<QString, metric_count>& metric_names() {
    static const std::array<QString, metric_count> names = [] {
        std::array<QString, metric_count> out;
        for (const Metric metric : all_metrics)
            out[std::size_t(metric)] = QString::fromLatin1(metric_name(metric).data(),
                                                           qsizetype(metric_name(metric).size()));
        return out;
    }();
    return names;
}

std::optional<Metric> metric_from_name(const QString& name) {
    const auto& names = metric_names();
    const auto found = std::find(names.begin(), names.end(), name);
    if (found == names.end())
        return std::nullopt;
    return all_metrics[std::size_t(found - names.begin())];
}

QVariant time_value(const QDateTime& time) {
    return time.isValid() ? QVariant(time.toUTC().toString(Qt::ISODateWithMs)) : QVariant();
}

QDateTime time_from(const QVariant& value) {
    return value.isNull() ? QDateTime()
                          : QDateTime::fromString(value.toString(), Qt::ISODateWithMs);
}

QVariant optional_value(const std::optional<double>& value) {
    return value ? QVariant(*value) : QVariant();
}

std::optional<double> optional_from(const QVariant& value) {
    return value.isNull() ? std::nullopt : std::optional<double>(value.toDouble());
}

// SQLite keeps no NaN (it stores NULL), so NULL reads back as NaN.
QVariant metric_value(double value) {
    return std::isnan(value) ? QVariant() : QVariant(value);
}

double metric_value_from(const QVariant& value) {
    return value.isNull() ? std::numeric_limits<double>::quiet_NaN() : value.toDouble();
}

QString compact_json(const QJsonObject& object) {
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

QString compact_json(const QJsonArray& array) {
    return QString::fromUtf8(QJsonDocument(array).toJson(QJsonDocument::Compact));
}

QJsonArray json_array(const QVariant& value) {
    return QJsonDocument::fromJson(value.toString().toUtf8()).array();
}

QString host_name() {
    static const QString name = QSysInfo::machineHostName();
    return name;
}

QString cpu_model() {
    QFile cpuinfo(QStringLiteral("/proc/cpuinfo"));
    if (cpuinfo.open(QIODevice::ReadOnly | QIODevice::Text))
        while (!cpuinfo.atEnd()) {
            const QString line = QString::fromUtf8(cpuinfo.readLine());
            if (line.startsWith(QLatin1String("model name")))
                return line.section(QLatin1Char(':'), 1).trimmed();
        }
    return QSysInfo::currentCpuArchitecture();
}

// "host: CPU model, N cores[, GPU ...]", worked out once per process.
QString machine_description() {
    static const QString description = [] {
        const DeviceInventory devices = discover_devices();
        QString text =
            QStringLiteral("%1: %2, %3 cores").arg(host_name(), cpu_model()).arg(devices.cpu_cores);
        for (const GpuDescription& gpu : devices.gpus)
            text += QStringLiteral(", %1").arg(QString::fromStdString(gpu.name));
        return text;
    }();
    return description;
}

bool process_exists(qint64 pid) {
    return pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno == EPERM);
}

// Refuses, from the bytes alone and before SQLite touches the file, what cannot be a store;
// for a store that does not exist yet, creates its folder, or refuses when it must exist.
void check_file(const QString& path, StoreAccess access) {
    using Kind = StoreError::Kind;
    if (path.isEmpty())
        throw StoreError(Kind::Unreadable,
                         QStringLiteral("no run store file was named: name one, or use the "
                                        "default %1")
                             .arg(RunStore::default_path()));
    const QFileInfo info(path);
    if (!info.exists() && access != StoreAccess::CreateIfMissing)
        throw StoreError(Kind::Missing,
                         QStringLiteral("there is no run store at %1: check the file name (runs "
                                        "are recorded in %2 unless told otherwise)")
                             .arg(QDir::toNativeSeparators(path),
                                  QDir::toNativeSeparators(RunStore::default_path())));
    if (!info.exists()) {
        if (!QDir().mkpath(info.absolutePath()))
            throw StoreError(Kind::Unreadable,
                             QStringLiteral("cannot create the folder %1 for the run store: "
                                            "choose a store in a folder you can write to")
                                 .arg(info.absolutePath()));
        return;
    }
    if (info.isDir())
        throw StoreError(Kind::Unreadable,
                         QStringLiteral("%1 is a folder, not a run store: name a file, e.g. "
                                        "%2")
                             .arg(path, QDir(path).filePath(QStringLiteral("runs.sqlite"))));
    QFile file(path);
    if (!info.isFile() || !file.open(QIODevice::ReadOnly))
        throw StoreError(Kind::Unreadable,
                         QStringLiteral("cannot read %1 (%2): check that it is a file you may "
                                        "read, or open another")
                             .arg(path, file.errorString()));
    if (info.size() == 0)
        return;  // SQLite takes an empty file for an empty database
    const QByteArray header = file.read(100);
    if (header.size() < 100 || !header.startsWith(QByteArray("SQLite format 3\0", 16)))
        throw not_a_store(path);
    // The size the header gives is valid when its two change counters agree; a file shorter
    // than that lost its end. A write-ahead log may still hold the pages of an unfinished
    // checkpoint, so the check waits for SQLite's recovery then.
    const auto* bytes = reinterpret_cast<const uchar*>(header.constData());
    const quint16 page_field = qFromBigEndian<quint16>(bytes + 16);
    const qint64 page_size = page_field == 1 ? 65536 : page_field;
    const qint64 pages = qFromBigEndian<quint32>(bytes + 28);
    const bool size_valid =
        qFromBigEndian<quint32>(bytes + 24) == qFromBigEndian<quint32>(bytes + 92);
    const QFileInfo wal(path + QStringLiteral("-wal"));
    if (size_valid && pages > 0 && (!wal.exists() || wal.size() == 0) &&
        pages * page_size > info.size())
        throw StoreError(Kind::Corrupt,
                         QStringLiteral("%1 is damaged (%2 of its %3 bytes are missing): open "
                                        "another file or start a new store; ScaleLab leaves "
                                        "this one as it is")
                             .arg(path)
                             .arg(pages * page_size - info.size())
                             .arg(pages * page_size));
}

// Why the existing store at `path` cannot be written, as advice; empty when it can. SQLite writes
// the file and keeps its -wal and -shm files beside it, so the folder must be writable too.
// access(2), not the permission bits: it also answers for root on a read-only mount.
QString read_only_advice(const QString& path) {
    if (::access(QFile::encodeName(path).constData(), W_OK) != 0)
        return QStringLiteral(
                   "%1 is read-only: make it writable, or copy it to a folder you can "
                   "write to and open the copy")
            .arg(path);
    const QString folder = QFileInfo(path).absolutePath();
    if (::access(QFile::encodeName(folder).constData(), W_OK) != 0)
        return QStringLiteral(
                   "the run store %1 cannot be written: its folder %2 is read-only "
                   "(SQLite keeps its journal files beside the store): make the "
                   "folder writable, or copy the store to a folder you can write to "
                   "and open the copy")
            .arg(path, folder);
    return {};
}

// The ids as people list them: "3", "1 and 3", "1, 2 and 5".
QString id_list(const std::vector<std::int64_t>& ids) {
    QString text;
    for (std::size_t i = 0; i < ids.size(); ++i)
        text += (i == 0                ? QString()
                 : i + 1 == ids.size() ? QStringLiteral(" and ")
                                       : QStringLiteral(", ")) +
                QString::number(ids[i]);
    return text;
}

QString runs_word(const std::vector<std::int64_t>& ids) {
    return ids.size() == 1 ? QStringLiteral("run") : QStringLiteral("runs");
}

StoreError damaged_store(const QString& path, const StoreDamage& damage) {
    return StoreError(StoreError::Kind::Corrupt,
                      QStringLiteral("%1 is damaged (%2): %3; ScaleLab neither records into nor "
                                     "changes a damaged store: export what can be read (runs "
                                     "export reads it) and import it into a new store; this one "
                                     "is left as it is")
                          .arg(path, damage.problem, readable_runs_text(damage)));
}

QString unique_connection_name() {
    static std::atomic<int> next{0};
    return QStringLiteral("scalelab-run-store-%1").arg(next.fetch_add(1));
}

// The SQL of every statement the store runs more than once, prepared on first use and kept.
enum class Statement {
    Begin,
    Commit,
    Rollback,
    DataVersion,
    CreateRun,
    BeginImport,
    FinishImport,
    MarkStarted,
    UpdateSummary,
    ReadEpochSummary,
    UpdateEpochSummary,
    InsertMetric,
    InsertMetricChunk,
    MarkEnded,
    MarkInterrupted,
    ListRuns,
    SelectRun,
    LoadCurve,
    MetricsAfter,
    Rename,
    SetTags,
    DeleteRun,
    Count
};

// Metric rows are inserted this many to a statement: Qt SQL's cost per executed statement is
// several times SQLite's per row. 300 variables, well within SQLite's limit (999 before 3.32).
constexpr int metric_rows_per_chunk = 50;

// The columns ListRuns and SelectRun read, in the order stored_run() takes them.
constexpr const char* run_column_names =
    "id, name, tags_json, config_json, state, message, info_json, machine, created, started_at, "
    "ended_at, steps, epochs, train_seconds, best_val_accuracy, mean_images_per_s, targets_json, "
    "other_programs_share, group_id";

// The select list of run_column_names for a store of schema `version`. A store is read as it is
// (damaged, read-only, or one that cannot be upgraded): a column added after its version reads
// as the default the newest schema gives it, as the upgrade would have filled it in.
QString run_columns_sql(int version) {
    const std::vector<store_schema::Column>& has = store_schema::expected_columns(version, "runs");
    const std::vector<store_schema::Column>& newest =
        store_schema::expected_columns(RunStore::schema_version, "runs");
    const auto named = [](const std::vector<store_schema::Column>& columns, const QString& name) {
        return std::find_if(columns.begin(), columns.end(),
                            [&](const store_schema::Column& c) { return c.name == name; });
    };
    QStringList selected;
    for (const QString& name : QString::fromLatin1(run_column_names).split(QStringLiteral(", ")))
        selected.append(named(has, name) != has.end()
                            ? name
                            : QStringLiteral("%1 AS %2")
                                  .arg(named(newest, name)->default_sql.value_or("NULL"), name));
    return selected.join(QStringLiteral(", "));
}

QString statement_sql(Statement statement, const QString& run_columns) {
    switch (statement) {
        case Statement::Begin:
            // Takes the write lock at once: a deferred transaction that reads first cannot wait
            // for a lock another writer holds (SQLITE_BUSY without the busy timeout).
            return QStringLiteral("BEGIN IMMEDIATE");
        case Statement::Commit:
            return QStringLiteral("COMMIT");
        case Statement::Rollback:
            return QStringLiteral("ROLLBACK");
        case Statement::DataVersion:
            return QStringLiteral("PRAGMA data_version");
        case Statement::CreateRun:
            return QStringLiteral(
                "INSERT INTO runs (name, tags_json, config_json, state, machine, created, pid, "
                "host, heartbeat, group_id) VALUES (?, ?, ?, 'created', ?, ?, ?, ?, ?, ?)");
        case Statement::BeginImport:
            return QStringLiteral(
                "INSERT INTO runs (name, config_json, state, created) VALUES ('', '{}', "
                "'interrupted', ?)");
        case Statement::FinishImport:
            return QStringLiteral(
                "UPDATE runs SET name = ?, tags_json = ?, config_json = ?, state = ?, message = "
                "?, info_json = ?, machine = ?, created = ?, started_at = ?, ended_at = ?, steps "
                "= ?, epochs = ?, train_seconds = ?, best_val_accuracy = ?, mean_images_per_s = "
                "?, targets_json = ?, other_programs_share = ?, group_id = ? WHERE id = ?");
        case Statement::MarkStarted:
            return QStringLiteral(
                "UPDATE runs SET state = 'running', info_json = ?, started_at = ?, pid = ?, "
                "host = ?, heartbeat = ? WHERE id = ?");
        case Statement::UpdateSummary:
            return QStringLiteral(
                "UPDATE runs SET steps = max(steps, ?), train_seconds = max(train_seconds, ?), "
                "heartbeat = ? WHERE id = ?");
        case Statement::ReadEpochSummary:
            return QStringLiteral("SELECT best_val_accuracy, targets_json FROM runs WHERE id = ?");
        case Statement::UpdateEpochSummary:
            return QStringLiteral(
                "UPDATE runs SET epochs = max(epochs, ?), best_val_accuracy = ?, "
                "mean_images_per_s = ?, targets_json = ?, other_programs_share = ? WHERE id = ?");
        case Statement::InsertMetric:
            return QStringLiteral(
                "INSERT OR REPLACE INTO metrics (run_id, name, step, epoch, wall_time, value) "
                "VALUES (?, ?, ?, ?, ?, ?)");
        case Statement::InsertMetricChunk: {
            QString sql = QStringLiteral(
                "INSERT OR REPLACE INTO metrics (run_id, name, step, epoch, wall_time, value) "
                "VALUES (?, ?, ?, ?, ?, ?)");
            for (int row = 1; row < metric_rows_per_chunk; ++row)
                sql += QStringLiteral(", (?, ?, ?, ?, ?, ?)");
            return sql;
        }
        case Statement::MarkEnded:
            return QStringLiteral(
                "UPDATE runs SET state = ?, message = ?, ended_at = ?, heartbeat = ? WHERE id = ?");
        case Statement::MarkInterrupted:
            return QStringLiteral(
                "UPDATE runs SET state = 'interrupted', message = ?, ended_at = coalesce(ended_at, "
                "?) WHERE id = ? AND state IN ('created', 'running')");
        case Statement::ListRuns:
            return QStringLiteral("SELECT %1 FROM runs ORDER BY id").arg(run_columns);
        case Statement::SelectRun:
            return QStringLiteral("SELECT %1 FROM runs WHERE id = ?").arg(run_columns);
        case Statement::LoadCurve:
            // The primary key's order: one range scan, no sort.
            return QStringLiteral(
                "SELECT step, epoch, wall_time, value FROM metrics WHERE run_id = ? AND name = ? "
                "ORDER BY step");
        case Statement::MetricsAfter:
            return QStringLiteral(
                "SELECT name, step, epoch, wall_time, value FROM metrics WHERE run_id = ? AND "
                "step > ? ORDER BY step");
        case Statement::Rename:
            return QStringLiteral("UPDATE runs SET name = ? WHERE id = ?");
        case Statement::SetTags:
            return QStringLiteral("UPDATE runs SET tags_json = ? WHERE id = ?");
        case Statement::DeleteRun:
            return QStringLiteral("DELETE FROM runs WHERE id = ?");
        case Statement::Count:
            break;
    }
    return {};
}

std::atomic<fault_injection::StoreWriteHook> store_write_hook{nullptr};

}  // namespace

struct RunStore::Connection {
    // Qt keeps a connection by its name until removeDatabase(), which must come after the last
    // QSqlDatabase and QSqlQuery of it are gone: as a member declared before them, this is
    // destroyed after them, also when the constructor throws.
    struct Name {
        QString text = unique_connection_name();
        ~Name() { QSqlDatabase::removeDatabase(text); }
    };

    // `read_only`: opened for reading alone. SQLite reads a WAL store read-only only where it
    // can make the -shm file beside it; in a read-only folder the store is read as immutable
    // (nothing else can write there either), which needs an empty -wal.
    Connection(const QString& store_path, bool read_only)
        : path(store_path), reading_only(read_only) {
        db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name.text);
        if (!db.isValid())
            throw StoreError(StoreError::Kind::Unreadable,
                             QStringLiteral("Qt's SQLite driver (QSQLITE) is missing: install "
                                            "it (Debian: libqt6sql6-sqlite)"));
        QString options = QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000");
        db.setDatabaseName(path);
        if (read_only) {
            options += QStringLiteral(";QSQLITE_OPEN_READONLY;QSQLITE_OPEN_URI");
            const QFileInfo wal(path + QStringLiteral("-wal"));
            const bool folder_writable =
                ::access(QFile::encodeName(QFileInfo(path).absolutePath()).constData(), W_OK) == 0;
            if (!folder_writable && wal.exists() && wal.size() > 0)
                throw StoreError(StoreError::Kind::Unreadable,
                                 QStringLiteral("%1 holds runs not yet moved out of its journal "
                                                "%2, and its folder is read-only: make the folder "
                                                "writable, then read it again")
                                     .arg(path, wal.filePath()));
            db.setDatabaseName(
                QUrl::fromLocalFile(QFileInfo(path).absoluteFilePath())
                    .toString(QUrl::FullyEncoded) +
                (folder_writable ? QStringLiteral("?mode=ro") : QStringLiteral("?immutable=1")));
        }
        db.setConnectOptions(options);
        if (!db.open())
            throw store_error(path, db.lastError());
    }

    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    QSqlQuery& statement(Statement which) {
        auto& slot = statements[std::size_t(which)];
        if (!slot) {
            slot.emplace(db);
            slot->setForwardOnly(true);
            if (!slot->prepare(statement_sql(which, run_columns))) {
                const QSqlError error = slot->lastError();
                slot.reset();
                throw store_error(path, error);
            }
        }
        return *slot;
    }

    // Runs a prepared statement with these values bound to its ? in order. An invalid QVariant
    // is NULL; a null QString is the empty text (Qt would bind it as NULL).
    QSqlQuery& run(Statement which, std::initializer_list<QVariant> values) {
        QSqlQuery& query = statement(which);
        int position = 0;
        for (const QVariant& value : values) {
            const bool null_text =
                value.typeId() == QMetaType::QString && value.toString().isNull();
            query.bindValue(position++, null_text ? QVariant(QLatin1String("")) : value);
        }
        if (!query.exec())
            throw store_error(path, query.lastError());
        return query;
    }

    // Inserts metric rows of run `id`, most of them a chunk to a statement.
    void insert_metrics(std::int64_t id, const std::vector<MetricRow>& rows) {
        const auto& names = metric_names();
        const auto bind_row = [&](QSqlQuery& query, int first, const MetricRow& row) {
            query.bindValue(first, qint64(id));
            query.bindValue(first + 1, names[std::size_t(row.metric)]);
            query.bindValue(first + 2, qint64(row.step));
            query.bindValue(first + 3, row.epoch);
            query.bindValue(first + 4, row.wall_time);
            query.bindValue(first + 5, metric_value(row.value));
        };
        const auto exec = [&](QSqlQuery& query) {
            if (!query.exec())
                throw store_error(path, query.lastError());
        };
        std::size_t next = 0;
        if (rows.size() >= std::size_t(metric_rows_per_chunk)) {
            QSqlQuery& chunk = statement(Statement::InsertMetricChunk);
            for (; next + metric_rows_per_chunk <= rows.size(); next += metric_rows_per_chunk) {
                for (int row = 0; row < metric_rows_per_chunk; ++row)
                    bind_row(chunk, row * 6, rows[next + std::size_t(row)]);
                exec(chunk);
            }
        }
        if (next < rows.size()) {
            QSqlQuery& single = statement(Statement::InsertMetric);
            for (; next < rows.size(); ++next) {
                bind_row(single, 0, rows[next]);
                exec(single);
            }
        }
    }

    // Ends a loop over `query`'s rows: a damaged page ends next() early, and only the error
    // tells that from the last row.
    void finish_reading(QSqlQuery& query) {
        const QSqlError error = query.lastError();
        query.finish();
        if (error.type() != QSqlError::NoError)
            throw store_error(path, error);
    }

    // Whether every value of run `id` (its row and each curve) reads without an error.
    bool run_reads_whole(std::int64_t id) {
        // The queries load_record and the exports run, each to its last row: a damaged page
        // may be met by one way down the b-tree and not by another.
        const auto reads = [&](Statement which, std::initializer_list<QVariant> values) {
            QSqlQuery& query = run(which, values);
            std::size_t rows = 0;
            for (; query.next(); ++rows)
                for (int column = 0; column < query.record().count(); ++column)
                    query.value(column);
            finish_reading(query);
            return rows;
        };
        try {
            // A listed run its id does not find (rows out of order) cannot be read either.
            if (reads(Statement::SelectRun, {qint64(id)}) == 0)
                return false;
            for (const Metric metric : all_metrics)
                reads(Statement::LoadCurve, {qint64(id), metric_names()[std::size_t(metric)]});
        } catch (const StoreError&) {
            return false;
        }
        return true;
    }

    // PRAGMA quick_check: the b-trees and the records' formats, every page read once (not the
    // indexes against the tables: integrity_check's extra, several times the cost). On a
    // finding, which runs still read whole.
    void check_integrity() {
        const QString problem = quick_check_problem();
        if (!problem.isEmpty())
            damage = damage_of(problem);
        else if (upgrade_problem)
            damage = damage_of(*upgrade_problem);
        else
            damage.reset();
        checked = true;
    }

    // quick_check's first finding; empty when it finds nothing.
    QString quick_check_problem() {
        QSqlQuery check(db);
        check.setForwardOnly(true);
        QString problem;
        if (!check.exec(QStringLiteral("PRAGMA quick_check(1)")))
            problem = error_text(check.lastError());
        else if (check.next() && check.value(0).toString() != QLatin1String("ok"))
            problem = check.value(0)
                          .toString()
                          .remove(QStringLiteral("*** in database main ***"))
                          .simplified();
        else if (check.lastError().type() != QSqlError::NoError)
            problem = error_text(check.lastError());
        check.finish();
        return problem;
    }

    // The damage `problem` names, and which runs still read whole.
    StoreDamage damage_of(const QString& problem) {
        StoreDamage found;
        found.problem = problem;
        QSqlQuery ids(db);
        ids.setForwardOnly(true);
        found.run_list_readable = ids.exec(QStringLiteral("SELECT id FROM runs ORDER BY id"));
        std::vector<std::int64_t> all;
        while (found.run_list_readable && ids.next())
            all.push_back(ids.value(0).toLongLong());
        found.run_list_readable =
            found.run_list_readable && ids.lastError().type() == QSqlError::NoError;
        ids.finish();
        for (const std::int64_t id : all)
            (run_reads_whole(id) ? found.readable_runs : found.unreadable_runs).push_back(id);
        return found;
    }

    // Runs an update of one run's row; NotFound when there is no such run.
    void update_run(Statement which, std::int64_t id, std::initializer_list<QVariant> values) {
        QSqlQuery& query = run(which, values);
        if (query.numRowsAffected() == 0)
            throw not_found(path, id);
    }

    // Runs SQL once (pragmas, checks at open).
    QSqlQuery exec(const QString& sql) {
        QSqlQuery query(db);
        query.setForwardOnly(true);
        if (!query.exec(sql))
            throw store_error(path, query.lastError());
        return query;
    }

    QVariant scalar(const QString& sql) {
        QSqlQuery query = exec(sql);
        return query.next() ? query.value(0) : QVariant();
    }

    // Takes the write lock (waiting the busy timeout for another writer), or throws: Locked,
    // or Corrupt and WriteFailed for a store that is never written.
    void begin_writing() {
        if (damage)
            throw damaged_store(path, *damage);
        if (reading_only)
            throw StoreError(StoreError::Kind::WriteFailed,
                             QStringLiteral("%1 was opened for reading only: nothing was "
                                            "changed")
                                 .arg(path));
        if (const auto hook = store_write_hook.load(std::memory_order_acquire))
            hook(db);
        run(Statement::Begin, {});
    }

    // Runs `body` in one write transaction: all of it is committed, or none.
    template <typename Body>
    void write(Body&& body) {
        begin_writing();
        try {
            body();
            run(Statement::Commit, {});
        } catch (...) {
            statement(Statement::Rollback).exec();
            throw;
        }
        ++own_commits;
    }

    // Refuses a file that is not a run store, or one from a newer schema, without writing.
    void check_is_store() {
        const int stated = scalar(QStringLiteral("PRAGMA user_version")).toInt();
        if (stated < 0)
            throw StoreError(StoreError::Kind::Corrupt,
                             QStringLiteral("%1 gives schema %2, which no ScaleLab writes: it was "
                                            "damaged or edited; open a backup or start a new "
                                            "store")
                                 .arg(path)
                                 .arg(stated));
        if (stated > schema_version)
            throw StoreError(StoreError::Kind::NewerSchema,
                             QStringLiteral("%1 was written by a newer ScaleLab (schema %2, this "
                                            "build reads up to %3): open it with that version")
                                 .arg(path)
                                 .arg(stated)
                                 .arg(schema_version));
        QStringList tables;
        QSqlQuery query =
            exec(QStringLiteral("SELECT name FROM sqlite_master WHERE type = 'table'"));
        while (query.next())
            tables.append(query.value(0).toString());
        const bool is_store = stated == 0
                                  ? tables.isEmpty()
                                  : scalar(QStringLiteral("PRAGMA application_id")).toInt() ==
                                            store_schema::application_id &&
                                        tables.contains(QLatin1String("runs")) &&
                                        tables.contains(QLatin1String("metrics"));
        if (!is_store)
            throw StoreError(StoreError::Kind::Corrupt,
                             QStringLiteral("%1 is an SQLite database but not a ScaleLab run "
                                            "store: open another file or start a new store")
                                 .arg(path));
        // Reads name the columns the stated schema has, and migrating adds the ones after it: a
        // file whose tables are not the stated schema's would be upgraded and then fail to list
        // (a renamed column), or list runs that no query finds (an edited key).
        if (stated > 0)
            for (const QString& table : {QStringLiteral("runs"), QStringLiteral("metrics")})
                require_columns_of(stated, table);
        set_version(stated);
    }

    // Refuses a store whose `table` is not the one schema `stated` makes, naming the first
    // column that differs.
    void require_columns_of(int stated, const QString& table) {
        const std::vector<store_schema::Column> has = store_schema::table_columns(db, table);
        const std::vector<store_schema::Column>& expected =
            store_schema::expected_columns(stated, table);
        if (has == expected)
            return;
        const auto differs =
            std::mismatch(has.begin(), has.end(), expected.begin(), expected.end());
        const auto declared = [](auto column, auto end) {
            return column != end ? QStringLiteral("'%1'").arg(printable(column->declared()))
                                 : QStringLiteral("none");
        };
        throw StoreError(
            StoreError::Kind::Corrupt,
            QStringLiteral("%1 says it has schema %2, but its table %3 does not "
                           "match it (column %4: %5, where that schema has %6): it "
                           "was damaged or edited; open a backup or start a new "
                           "store")
                .arg(path)
                .arg(stated)
                .arg(table)
                .arg(differs.first - has.begin() + 1)
                .arg(declared(differs.first, has.end()), declared(differs.second, expected.end())));
    }

    void configure() {
        exec(QStringLiteral("PRAGMA foreign_keys = ON"));
        exec(QStringLiteral("PRAGMA journal_mode = WAL"));
        exec(QStringLiteral("PRAGMA synchronous = NORMAL"));
    }

    // Upgrades a sound store to the newest schema, in one transaction. Upgrading gives every
    // row its new columns, which shows damage quick_check could not see before: a record with
    // more fields than its table had lends its extra field to the new column (NULL where the
    // column may not be). Checked before the commit: such a store is rolled back, left as it
    // was, and read as it is, damaged.
    void migrate() {
        if (version == schema_version)
            return;
        QString revealed;
        try {
            write([&] {
                // Another process may have migrated it since the check, before this lock.
                const int now = scalar(QStringLiteral("PRAGMA user_version")).toInt();
                if (now >= schema_version)
                    return;
                apply_schema_steps(now);
                revealed = quick_check_problem();
                if (!revealed.isEmpty())
                    throw UpgradeFindsDamage{};
            });
        } catch (const UpgradeFindsDamage&) {
            upgrade_problem = QStringLiteral("upgrading it to schema %1 finds: %2")
                                  .arg(schema_version)
                                  .arg(revealed);
            // The check inside the upgrade read every page: no second one for the file as it was.
            damage = damage_of(*upgrade_problem);
            checked = true;
            return;
        }
        set_version(schema_version);
    }

    struct UpgradeFindsDamage {};

    // The steps after `from_version`, inside the caller's transaction.
    void apply_schema_steps(int from_version) {
        const QSqlError error = store_schema::migrate(db, from_version, schema_version);
        // A step that does not apply (a table already there) means the version the file states
        // is not the one it has: damaged or edited, not a disk problem. The caller's transaction
        // is rolled back: the file stays as it was.
        if (error.type() != QSqlError::NoError && error.nativeErrorCode() == QLatin1String("1"))
            throw StoreError(StoreError::Kind::Corrupt,
                             QStringLiteral("%1 says it has schema %2, but its tables do not "
                                            "match (%3): it was damaged or edited; open a "
                                            "backup or start a new store")
                                 .arg(path)
                                 .arg(from_version)
                                 .arg(error.databaseText()));
        if (error.type() != QSqlError::NoError)
            throw store_error(path, error);
    }

    // The schema the file has; the run columns are read as that schema has them.
    void set_version(int file_version) {
        version = file_version;
        run_columns = version > 0 ? run_columns_sql(version) : QString();
        for (std::optional<QSqlQuery>& slot : statements)
            slot.reset();
    }

    void mark_interrupted_runs();

    const QString path;
    const bool reading_only;
    bool checked = false;  // check_integrity() ran
    std::optional<StoreDamage> damage;
    // What upgrading the store found (migrate): it stays damaged, though quick_check finds
    // nothing in the file as it was left.
    std::optional<QString> upgrade_problem;
    int version = 0;      // the schema the file has (PRAGMA user_version)
    QString run_columns;  // run_columns_sql(version)
    const Name name;
    QSqlDatabase db;
    std::array<std::optional<QSqlQuery>, std::size_t(Statement::Count)> statements;
    std::int64_t own_commits = 0;
};

void RunStore::Connection::mark_interrupted_runs() {
    struct Dead {
        std::int64_t id = 0;
        QString message;
        QDateTime ended;
    };
    std::vector<Dead> dead;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    QSqlQuery query = exec(QStringLiteral(
        "SELECT id, state, pid, host, heartbeat FROM runs WHERE state IN ('created', 'running')"));
    while (query.next()) {
        const bool running = query.value(1).toString() == QLatin1String("running");
        const QVariant pid = query.value(2);
        const QString host = query.value(3).toString();
        const QVariant heartbeat = query.value(4);
        const qint64 silent_ms = heartbeat.isNull() ? now : now - heartbeat.toLongLong();
        bool gone = false;
        if (pid.isNull())
            gone = true;  // imported, or recorded before schema 2: no process records it
        else if (host == host_name())
            gone = !process_exists(pid.toLongLong()) ||
                   (running && silent_ms > stale_heartbeat_same_host_ms);
        else
            gone = running && silent_ms > stale_heartbeat_other_host_ms;
        if (!gone)
            continue;
        const QString process = pid.isNull() ? QStringLiteral("the process that recorded it")
                                             : QStringLiteral(
                                                   "the process that recorded it "
                                                   "(pid %1 on %2)")
                                                   .arg(pid.toLongLong())
                                                   .arg(host);
        dead.push_back(Dead{
            .id = query.value(0).toLongLong(),
            .message = running ? QStringLiteral("%1 ended while it ran: its metrics stop at the "
                                                "last second recorded")
                                     .arg(process)
                               : QStringLiteral("%1 ended before it started").arg(process),
            .ended = heartbeat.isNull()
                         ? QDateTime::currentDateTimeUtc()
                         : QDateTime::fromMSecsSinceEpoch(heartbeat.toLongLong(), Qt::UTC)});
    }
    finish_reading(query);
    if (dead.empty())
        return;
    write([&] {
        for (const Dead& dead_run : dead)
            run(Statement::MarkInterrupted,
                {dead_run.message, time_value(dead_run.ended), qint64(dead_run.id)});
    });
}

void RunStore::mark_interrupted_runs() {
    connection_->mark_interrupted_runs();
}

namespace {

StoredRun read_run(const QSqlQuery& query, const QString& path) {
    StoredRun run;
    run.id = query.value(0).toLongLong();
    run.name = query.value(1).toString();
    run.tags = tags_from_json(json_array(query.value(2)));
    run.message = query.value(5).toString();
    try {
        run.spec = run_spec_from_json(query.value(3).toString().toUtf8());
    } catch (const Error& error) {
        // A config from another version keeps the run listed; the message says what is off.
        run.message += QStringLiteral("%1its configuration could not be read in full: %2")
                           .arg(run.message.isEmpty() ? QString() : QStringLiteral("; "),
                                QString::fromStdString(error.what()));
    }
    const QString state = query.value(4).toString();
    if (const std::optional<RunState> parsed = state_from_name(state)) {
        run.state = *parsed;
    } else {
        run.state = RunState::Failed;
        run.message = QStringLiteral("unknown state \"%1\" in %2 (written by another version)")
                          .arg(state, path);
    }
    run.started = !query.value(6).isNull();
    if (run.started)
        run.info = run_info_from_json(
            QJsonDocument::fromJson(query.value(6).toString().toUtf8()).object());
    run.machine = query.value(7).toString();
    run.created = time_from(query.value(8));
    run.started_at = time_from(query.value(9));
    run.ended_at = time_from(query.value(10));
    run.steps = query.value(11).toLongLong();
    run.epochs = query.value(12).toInt();
    run.train_seconds = query.value(13).toDouble();
    run.best_val_accuracy = optional_from(query.value(14));
    run.mean_images_per_s = optional_from(query.value(15));
    run.targets = targets_from_json(json_array(query.value(16)));
    run.other_programs_share = optional_from(query.value(17));
    run.group = query.value(18).toString();
    return run;
}

MetricRow read_metric_row(const QSqlQuery& query, Metric metric) {
    return MetricRow{.step = query.value(1).toLongLong(),
                     .epoch = query.value(2).toInt(),
                     .wall_time = query.value(3).toDouble(),
                     .metric = metric,
                     .value = metric_value_from(query.value(4))};
}

// The per-epoch figures, as far as the stored curves and summary tell them: validation loss and
// accuracy exactly, training loss and accuracy as the mean of the epoch's batches, time and
// images/s from the step rows; the steady images/s the engine reported for the last epoch (the
// summary's; 0, no figure, where the run ended within its warm-up steps), for earlier ones the
// mean since the start.
std::vector<EpochMetrics> rebuild_epochs(const RunRecord& record,
                                         std::optional<double> last_steady_images_per_s) {
    std::map<int, EpochMetrics> by_epoch;
    for (const MetricPoint& point : record.curve(Metric::ValLoss))
        by_epoch[point.epoch].val_loss = point.value;
    for (const MetricPoint& point : record.curve(Metric::ValAccuracy)) {
        EpochMetrics& epoch = by_epoch[point.epoch];
        epoch.val_accuracy = point.value;
        epoch.step = point.step;
        epoch.epoch_seconds = point.seconds;  // made relative below
    }
    // Sum and count of a per-step curve's values in each epoch, in one pass.
    const auto epoch_sums = [&](Metric metric) {
        std::map<int, std::pair<double, int>> sums;
        for (const MetricPoint& point : record.curve(metric)) {
            auto& [sum, count] = sums[point.epoch];
            sum += point.value;
            ++count;
        }
        return sums;
    };
    const auto mean = [](const std::map<int, std::pair<double, int>>& sums, int epoch) {
        const auto found = sums.find(epoch);
        return found == sums.end() ? 0.0 : found->second.first / found->second.second;
    };
    const auto loss_sums = epoch_sums(Metric::TrainLoss);
    const auto accuracy_sums = epoch_sums(Metric::TrainAccuracy);
    std::vector<EpochMetrics> epochs;
    std::int64_t previous_step = 0;
    double previous_seconds = 0;
    const double batch = record.info.global_batch;
    for (auto& [number, epoch] : by_epoch) {
        epoch.epoch = number;
        epoch.train_loss = mean(loss_sums, number);
        epoch.train_accuracy = mean(accuracy_sums, number);
        const double seconds_so_far = epoch.epoch_seconds;
        epoch.epoch_seconds = seconds_so_far - previous_seconds;
        if (epoch.epoch_seconds > 0)
            epoch.images_per_s = double(epoch.step - previous_step) * batch / epoch.epoch_seconds;
        if (seconds_so_far > 0)
            epoch.steady_images_per_s = double(epoch.step) * batch / seconds_so_far;
        for (const TargetReached& reached : record.targets)
            if (reached.epoch == number)
                epoch.reached.push_back(reached);
        previous_step = epoch.step;
        previous_seconds = seconds_so_far;
        epochs.push_back(std::move(epoch));
    }
    if (!epochs.empty())
        epochs.back().steady_images_per_s = last_steady_images_per_s.value_or(0);
    return epochs;
}

}  // namespace

RunStore::RunStore(std::unique_ptr<Connection> connection)
    : connection_(std::move(connection)), open_files_(connection_->path) {}

RunStore::~RunStore() = default;

std::unique_ptr<RunStore> RunStore::open(const QString& path, StoreAccess access) {
    check_file(path, access);
    const QString read_only = QFileInfo::exists(path) ? read_only_advice(path) : QString();
    if (!read_only.isEmpty() && access != StoreAccess::Read)
        throw StoreError(StoreError::Kind::Unreadable, read_only);
    auto connection = std::make_unique<Connection>(path, !read_only.isEmpty());
    connection->check_is_store();
    if (QFileInfo(path).size() <= largest_store_checked_at_open) {
        connection->check_integrity();
        if (connection->damage && access != StoreAccess::Read)
            throw damaged_store(path, *connection->damage);
    }
    if (!read_only.isEmpty() && connection->version == 0)
        throw StoreError(StoreError::Kind::Unreadable,
                         QStringLiteral("%1 is an empty SQLite file, which ScaleLab sets up as a "
                                        "store before it reads it: %2")
                             .arg(path, read_only));
    if (!connection->damage && read_only.isEmpty()) {
        // Before WAL is switched on: a store the upgrade finds damaged stays byte for byte.
        connection->migrate();
        if (connection->damage && access != StoreAccess::Read)
            throw damaged_store(path, *connection->damage);
    }
    // Read as it is, at its own schema: nothing is written to a damaged or read-only store.
    if (connection->damage || !read_only.isEmpty())
        return std::unique_ptr<RunStore>(new RunStore(std::move(connection)));
    connection->configure();
    connection->mark_interrupted_runs();
    return std::unique_ptr<RunStore>(new RunStore(std::move(connection)));
}

QString RunStore::default_path() {
    // GenericDataLocation/ScaleLab is the GUI's AppDataLocation, and the same for the CLI,
    // whatever application name it runs under.
    return QDir(QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation))
        .filePath(QStringLiteral("ScaleLab/runs.sqlite"));
}

QString RunStore::path() const {
    return connection_->path;
}

const std::optional<StoreDamage>& RunStore::damage() const {
    return connection_->damage;
}

const std::optional<StoreDamage>& RunStore::check_integrity() {
    connection_->check_integrity();
    return connection_->damage;
}

void RunStore::require_sound() {
    if (!connection_->checked)
        connection_->check_integrity();
    if (connection_->damage)
        throw damaged_store(connection_->path, *connection_->damage);
}

void RunStore::check_writable() const {
    Connection& c = *connection_;
    c.begin_writing();
    c.statement(Statement::Rollback).exec();
}

QString readable_runs_text(const StoreDamage& damage) {
    if (!damage.run_list_readable && damage.readable_runs.empty())
        return QStringLiteral("not even its list of runs can be read");
    if (damage.readable_runs.empty())
        return QStringLiteral("no run can be read in full (%1 %2 cannot)")
            .arg(runs_word(damage.unreadable_runs), id_list(damage.unreadable_runs));
    QString text = QStringLiteral("%1 %2 can still be read in full")
                       .arg(runs_word(damage.readable_runs), id_list(damage.readable_runs));
    if (!damage.unreadable_runs.empty())
        text += QStringLiteral(", %1 %2 cannot")
                    .arg(runs_word(damage.unreadable_runs), id_list(damage.unreadable_runs));
    if (!damage.run_list_readable)
        text +=
            QStringLiteral(", and the list of runs breaks off after run %1")
                .arg(std::max(damage.readable_runs.back(),
                              damage.unreadable_runs.empty() ? 0 : damage.unreadable_runs.back()));
    return text;
}

std::int64_t RunStore::create_run(const RunSpec& spec, const QString& name, const QStringList& tags,
                                  const QString& group) {
    Connection& c = *connection_;
    std::int64_t id = 0;
    c.write([&] {
        QSqlQuery& query =
            c.run(Statement::CreateRun,
                  {name, compact_json(tags_to_json(tags)), compact_json(run_spec_to_json(spec)),
                   machine_description(), time_value(QDateTime::currentDateTimeUtc()),
                   QCoreApplication::applicationPid(), host_name(),
                   QDateTime::currentMSecsSinceEpoch(), group});
        id = query.lastInsertId().toLongLong();
        if (name.isEmpty())
            c.run(Statement::Rename, {QStringLiteral("run %1").arg(id), qint64(id)});
    });
    return id;
}

void RunStore::mark_started(std::int64_t id, const RunInfo& info) {
    Connection& c = *connection_;
    c.write([&] {
        c.update_run(
            Statement::MarkStarted, id,
            {compact_json(run_info_to_json(info)), time_value(QDateTime::currentDateTimeUtc()),
             QCoreApplication::applicationPid(), host_name(), QDateTime::currentMSecsSinceEpoch(),
             qint64(id)});
    });
}

void RunStore::append_metrics(std::int64_t id, const std::vector<MetricRow>& rows,
                              const std::vector<EpochMetrics>& epochs) {
    Connection& c = *connection_;
    std::int64_t last_step = 0;
    double train_seconds = 0;
    for (const MetricRow& row : rows) {
        last_step = std::max(last_step, row.step);
        train_seconds = std::max(train_seconds, row.wall_time);
    }
    for (const EpochMetrics& epoch : epochs)
        last_step = std::max(last_step, epoch.step);
    c.write([&] {
        c.update_run(
            Statement::UpdateSummary, id,
            {qint64(last_step), train_seconds, QDateTime::currentMSecsSinceEpoch(), qint64(id)});
        c.insert_metrics(id, rows);
        if (epochs.empty())
            return;
        QSqlQuery& summary = c.run(Statement::ReadEpochSummary, {qint64(id)});
        summary.next();
        std::optional<double> best = optional_from(summary.value(0));
        std::vector<TargetReached> targets = targets_from_json(json_array(summary.value(1)));
        summary.finish();
        int last_epoch = 0;
        for (const EpochMetrics& epoch : epochs) {
            last_epoch = std::max(last_epoch, epoch.epoch);
            if (!std::isnan(epoch.val_accuracy))
                best = std::max(best.value_or(epoch.val_accuracy), epoch.val_accuracy);
            targets.insert(targets.end(), epoch.reached.begin(), epoch.reached.end());
        }
        c.run(Statement::UpdateEpochSummary,
              {last_epoch, optional_value(best), optional_value(steady_images_per_s(epochs.back())),
               compact_json(targets_to_json(targets)),
               metric_value(epochs.back().other_programs_share), qint64(id)});
    });
}

void RunStore::mark_ended(std::int64_t id, RunState state, const QString& message) {
    Connection& c = *connection_;
    c.write([&] {
        c.update_run(Statement::MarkEnded, id,
                     {state_name(state), message, time_value(QDateTime::currentDateTimeUtc()),
                      QDateTime::currentMSecsSinceEpoch(), qint64(id)});
    });
}

std::vector<StoredRun> RunStore::list_runs() const {
    Connection& c = *connection_;
    QSqlQuery& query = c.run(Statement::ListRuns, {});
    std::vector<StoredRun> runs;
    while (query.next())
        runs.push_back(read_run(query, c.path));
    c.finish_reading(query);
    return runs;
}

StoredRun RunStore::run(std::int64_t id) const {
    Connection& c = *connection_;
    QSqlQuery& query = c.run(Statement::SelectRun, {qint64(id)});
    if (!query.next()) {
        c.finish_reading(query);
        throw not_found(c.path, id);
    }
    StoredRun stored = read_run(query, c.path);
    query.finish();
    return stored;
}

RunRecord RunStore::load_record(std::int64_t id) const {
    const StoredRun stored = run(id);
    RunRecord record;
    record.id = int(stored.id);
    record.name = stored.name;
    record.spec = stored.spec;
    record.state = stored.state;
    record.message = stored.message;
    record.started = stored.started;
    record.info = stored.info;
    record.created = stored.created;
    record.ended = stored.ended_at;
    record.targets = stored.targets;
    record.step = stored.steps;
    record.epoch = stored.epochs;
    record.train_seconds = stored.train_seconds;

    // The summary's counts size the curves; bounded, since a store may say anything.
    constexpr std::int64_t largest_reserve = std::int64_t(1) << 22;
    for (const Metric metric : all_metrics) {
        const bool per_epoch = metric == Metric::ValLoss || metric == Metric::ValAccuracy;
        const std::int64_t expected = per_epoch ? stored.epochs : stored.steps;
        record.curve(metric).reserve(
            std::size_t(std::clamp<std::int64_t>(expected, 0, largest_reserve)));
    }
    const double batch = stored.info.global_batch;
    // One range scan per curve: no name to read back and compare on each row.
    for (const Metric metric : all_metrics) {
        std::vector<MetricPoint>& curve = record.curve(metric);
        for_each_row(id, metric, [&](const MetricRow& row) {
            curve.push_back(MetricPoint{.step = row.step,
                                        .epoch = row.epoch,
                                        .samples = double(row.step) * batch,
                                        .seconds = row.wall_time,
                                        .value = row.value});
        });
    }
    record.epochs = rebuild_epochs(record, stored.mean_images_per_s);
    if (!record.epochs.empty() && stored.other_programs_share)
        record.epochs.back().other_programs_share = *stored.other_programs_share;
    return record;
}

std::vector<MetricRow> RunStore::metrics(std::int64_t id, std::int64_t after_step) const {
    Connection& c = *connection_;
    QSqlQuery& query = c.run(Statement::MetricsAfter, {qint64(id), qint64(after_step)});
    std::vector<MetricRow> rows;
    while (query.next())
        if (const std::optional<Metric> metric = metric_from_name(query.value(0).toString()))
            rows.push_back(read_metric_row(query, *metric));
    c.finish_reading(query);

    // Rows of one step come in any order from SQLite; Metric order makes them predictable.
    std::stable_sort(rows.begin(), rows.end(), [](const MetricRow& a, const MetricRow& b) {
        return a.step != b.step ? a.step < b.step : a.metric < b.metric;
    });
    return rows;
}

void RunStore::for_each_row(std::int64_t id, Metric metric,
                            const std::function<void(const MetricRow&)>& visit) const {
    Connection& c = *connection_;
    QSqlQuery& query =
        c.run(Statement::LoadCurve, {qint64(id), metric_names()[std::size_t(metric)]});
    try {
        while (query.next())
            visit(MetricRow{.step = query.value(0).toLongLong(),
                            .epoch = query.value(1).toInt(),
                            .wall_time = query.value(2).toDouble(),
                            .metric = metric,
                            .value = metric_value_from(query.value(3))});
    } catch (...) {
        query.finish();
        throw;
    }
    c.finish_reading(query);
}

std::int64_t RunStore::change_counter() const {
    Connection& c = *connection_;
    QSqlQuery& query = c.run(Statement::DataVersion, {});
    const std::int64_t data_version = query.next() ? query.value(0).toLongLong() : 0;
    query.finish();
    return data_version + c.own_commits;
}

void RunStore::rename(std::int64_t id, const QString& name) {
    if (name.trimmed().isEmpty())
        throw StoreError(StoreError::Kind::WriteFailed,
                         QStringLiteral("a run needs a name: type at least one letter"));
    if (const QString problem = run_name_problem(name); !problem.isEmpty())
        throw StoreError(StoreError::Kind::WriteFailed, problem);
    Connection& c = *connection_;
    c.write([&] { c.update_run(Statement::Rename, id, {name, qint64(id)}); });
}

void RunStore::set_tags(std::int64_t id, const QStringList& tags) {
    if (const QString problem = tags_problem(tags); !problem.isEmpty())
        throw StoreError(StoreError::Kind::WriteFailed, problem);
    Connection& c = *connection_;
    c.write([&] {
        c.update_run(Statement::SetTags, id, {compact_json(tags_to_json(tags)), qint64(id)});
    });
}

void RunStore::delete_runs(const std::vector<std::int64_t>& ids) {
    Connection& c = *connection_;
    c.write([&] {
        for (const std::int64_t id : ids)
            c.update_run(Statement::DeleteRun, id, {qint64(id)});
    });
}

std::int64_t RunStore::insert_run(const StoredRun& run, const std::vector<MetricRow>& rows) {
    return insert_runs({RunWithMetrics{.run = run, .rows = rows}}).front();
}

std::vector<std::int64_t> RunStore::insert_runs(const std::vector<RunWithMetrics>& runs) {
    std::vector<std::int64_t> ids;
    insert_streamed([&](Insertion& insertion) {
        for (const auto& [stored, rows] : runs) {
            const std::int64_t id = insertion.begin_run();
            insertion.add_rows(id, rows);
            insertion.finish_run(id, stored);
            ids.push_back(id);
        }
    });
    return ids;
}

void RunStore::insert_streamed(const std::function<void(Insertion&)>& fill) {
    Connection& c = *connection_;
    c.write([&] {
        Insertion insertion(c);
        fill(insertion);
    });
}

std::int64_t RunStore::Insertion::begin_run() {
    // A placeholder until finish_run: nothing outside the transaction ever sees it.
    return connection_.run(Statement::BeginImport, {time_value(QDateTime::currentDateTimeUtc())})
        .lastInsertId()
        .toLongLong();
}

void RunStore::Insertion::add_rows(std::int64_t id, const std::vector<MetricRow>& rows) {
    connection_.insert_metrics(id, rows);
}

void RunStore::Insertion::finish_run(std::int64_t id, const StoredRun& stored) {
    connection_.update_run(
        Statement::FinishImport, id,
        {stored.name, compact_json(tags_to_json(stored.tags)),
         compact_json(run_spec_to_json(stored.spec)), state_name(stored.state), stored.message,
         stored.started ? QVariant(compact_json(run_info_to_json(stored.info))) : QVariant(),
         stored.machine,
         time_value(stored.created.isValid() ? stored.created : QDateTime::currentDateTimeUtc()),
         time_value(stored.started_at), time_value(stored.ended_at), qint64(stored.steps),
         stored.epochs, stored.train_seconds, optional_value(stored.best_val_accuracy),
         optional_value(stored.mean_images_per_s), compact_json(targets_to_json(stored.targets)),
         optional_value(stored.other_programs_share), stored.group, qint64(id)});
}

void fault_injection::set_store_write_hook(StoreWriteHook hook) {
    store_write_hook.store(hook, std::memory_order_release);
}

}  // namespace scalelab
