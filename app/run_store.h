#pragma once

#include <QDateTime>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "guarded_files.h"
#include "run_record.h"

class QSqlDatabase;

namespace scalelab {

// Why a store could not be opened or written. The message says what happened and what to do.
class StoreError : public std::runtime_error {
  public:
    enum class Kind {
        Unreadable,   // no permission, not a file, the folder does not exist
        Missing,      // no store at the path, opened with StoreAccess::MustExist
        Corrupt,      // not an SQLite database, or one that fails its integrity check
        Locked,       // another process holds a write lock past the busy timeout
        NewerSchema,  // written by a newer ScaleLab: open it with that version
        DiskFull,     // SQLITE_FULL while writing
        WriteFailed,  // any other failed write
        NotFound,     // a run id that is not in the store
    };
    StoreError(Kind kind, const QString& message)
        : std::runtime_error(message.toStdString()), kind_(kind) {}
    Kind kind() const { return kind_; }

  private:
    Kind kind_;
};

// What a caller of RunStore::open does with the store. Only recording and importing create a
// store, so that a mistyped path is an error, not a new empty store.
enum class StoreAccess {
    CreateIfMissing,  // recording and importing: creates the file (and its folder)
    MustExist,        // changing stored runs (deleting): never creates
    Read,             // listing, showing, exporting: never creates, and also opens a store that
                      // is read-only (its file or its folder) or damaged (RunStore::damage())
};

// What SQLite's quick_check found wrong with a store, and which runs can still be read in full
// (their row and every metric row, read without an error).
struct StoreDamage {
    QString problem;  // quick_check's first finding, e.g. "Page 11: btreeInitPage() ..."
    std::vector<std::int64_t> readable_runs;
    std::vector<std::int64_t> unreadable_runs;
    bool run_list_readable = true;  // false: not even the list of runs could be read
};

// "runs 1 and 3 can still be read in full, run 2 cannot", for messages about a damaged store.
QString readable_runs_text(const StoreDamage& damage);

// One value of one curve of one stored run: the `metrics` table's row.
struct MetricRow {
    std::int64_t step = 0;
    int epoch = 0;
    double wall_time = 0;  // MetricPoint::seconds
    Metric metric = Metric::TrainLoss;
    double value = 0;
};

// What the run list shows without reading a run's metrics: the `runs` table's row.
struct StoredRun {
    std::int64_t id = 0;
    QString name;
    QStringList tags;
    RunSpec spec;
    RunState state = RunState::Queued;  // stored as "created" while queued
    QString message;
    RunInfo info;  // valid when started
    bool started = false;
    QString machine;  // host name and CPU/GPU description
    QDateTime created;
    QDateTime started_at;
    QDateTime ended_at;
    // Summary figures, kept up to date by the recorder so that listing needs no metric rows.
    std::int64_t steps = 0;  // the last step recorded
    int epochs = 0;          // epochs completed
    double train_seconds = 0;
    std::optional<double> best_val_accuracy;
    std::optional<double> mean_images_per_s;
    std::optional<double> other_programs_share;  // EpochMetrics::other_programs_share, the last
    std::vector<TargetReached> targets;
    QString group;  // RunRecord::group: the repeats it is one of; empty when none
};

// A whole run to add to a store (an import): its row in the run list and every metric row.
struct RunWithMetrics {
    StoredRun run;
    std::vector<MetricRow> rows;
};

// The SQLite database that keeps every run, shared by the app and the CLI (Qt SQL, WAL mode, so
// that one process can read while another writes).
//
// One RunStore is one connection, to be used from the thread that opened it (Qt SQL's rule);
// other threads open their own RunStore on the same file. Every method that writes runs in one
// transaction. Errors are thrown as StoreError; nothing is ever deleted or overwritten to
// "repair" a file that cannot be opened.
class RunStore {
    struct Connection;

  public:
    // The schema this build writes; files with a higher user_version are refused (NewerSchema).
    static constexpr int schema_version = 4;

    // Opens the store at `path`, creating the file (and its folder) when absent (unless `access`
    // says it must exist: then StoreError::Kind::Missing, and nothing is created) and migrating
    // an older schema in one transaction. Marks as Interrupted every run left "running" (or
    // queued) by a process that no longer runs (same host: its pid is gone, or a running run has
    // been silent for ten minutes, its pid reused; another host: no heartbeat for a minute).
    // Checks the file before it writes anything: what is not a store, or is newer, is left
    // exactly as it was. Runs SQLite's quick_check on a store of up to 64 MiB (it reads every
    // page: about 2 s per GB): a damaged store is refused (Corrupt, naming the runs still
    // readable) unless `access` is Read; then it is opened without writing anything and
    // damage() says what is wrong. A store found damaged is never written. A store that cannot
    // be written (a read-only file or folder) opens only for Read.
    static std::unique_ptr<RunStore> open(const QString& path,
                                          StoreAccess access = StoreAccess::CreateIfMissing);
    // The user's default store: QStandardPaths::AppDataLocation/runs.sqlite of the GUI
    // (GenericDataLocation/ScaleLab/runs.sqlite, whatever the program's name).
    static QString default_path();

    ~RunStore();
    RunStore(const RunStore&) = delete;
    RunStore& operator=(const RunStore&) = delete;

    QString path() const;
    // What quick_check last found; nothing for a sound store, or one not checked yet.
    const std::optional<StoreDamage>& damage() const;
    // Runs quick_check now, whatever the store's size (before an export), and returns damage().
    const std::optional<StoreDamage>& check_integrity();
    // Before recording into the store: checks it unless done, and throws Corrupt (naming the
    // runs still readable) when it is damaged.
    void require_sound();
    // Waits for the write lock (the busy timeout) and lets it go: Locked when another program
    // holds it, so that a command can say so before it asks a question or reads a file.
    void check_writable() const;

    // Writing a run's life: created (queued) -> started -> metrics (many batches) -> ended.
    // An empty name becomes "run <id>". Records this process and host (crash detection).
    // `group` (RunRecord::group) puts it in a group of repeats.
    std::int64_t create_run(const RunSpec& spec, const QString& name, const QStringList& tags = {},
                            const QString& group = {});
    void mark_started(std::int64_t id, const RunInfo& info);
    // Appends rows and updates the run's summary and heartbeat, in one transaction.
    void append_metrics(std::int64_t id, const std::vector<MetricRow>& rows,
                        const std::vector<EpochMetrics>& epochs = {});
    void mark_ended(std::int64_t id, RunState state, const QString& message);

    // Reading.
    std::vector<StoredRun> list_runs() const;      // every run in the order added, no metrics
    StoredRun run(std::int64_t id) const;          // NotFound when absent
    RunRecord load_record(std::int64_t id) const;  // summary and every curve
    // The rows with step > after_step, ordered by step, then by Metric.
    std::vector<MetricRow> metrics(std::int64_t id, std::int64_t after_step = 0) const;
    // Each row of one curve of run `id`, in step order, without holding the curve in memory
    // (exports of runs of any length).
    void for_each_row(std::int64_t id, Metric metric,
                      const std::function<void(const MetricRow&)>& visit) const;
    // Changes whenever any connection (this process or another) commits: cheap polling for
    // "has anything changed" (PRAGMA data_version plus this connection's own writes).
    std::int64_t change_counter() const;
    // Marks as Interrupted the runs whose recording process has died since open() looked (the
    // same rule as open()); a watcher calls it while runs of other processes are active, since
    // a killed process commits nothing more that change_counter() could show.
    void mark_interrupted_runs();

    // Editing. A blank name, and a name or tags that run_labels.h refuses, are refused
    // (WriteFailed, saying why). delete_runs deletes the runs
    // with their metrics, or none of them when one id is not there (NotFound).
    void rename(std::int64_t id, const QString& name);
    void set_tags(std::int64_t id, const QStringList& tags);
    void delete_runs(const std::vector<std::int64_t>& ids);
    // Adds a whole run (an import): all rows in one transaction, a new id; every field of `run`
    // but its id kept as given (state, summary, dates, tags).
    std::int64_t insert_run(const StoredRun& run, const std::vector<MetricRow>& rows);
    // Adds several runs in one transaction: all or none. The new ids, in the order given.
    std::vector<std::int64_t> insert_runs(const std::vector<RunWithMetrics>& runs);

    // Adds runs whose rows arrive in pieces (an import streamed from a file of any size), in one
    // transaction: `fill` calls begin_run() for each run, add_rows() as its rows come and
    // finish_run() with its fields once they are known. All or none: when `fill` throws, the
    // transaction is rolled back and the exception passed on.
    class Insertion {
      public:
        std::int64_t begin_run();
        void add_rows(std::int64_t id, const std::vector<MetricRow>& rows);
        void finish_run(std::int64_t id, const StoredRun& run);

      private:
        friend class RunStore;
        explicit Insertion(Connection& connection) : connection_(connection) {}
        Connection& connection_;
    };
    void insert_streamed(const std::function<void(Insertion&)>& fill);

  private:
    explicit RunStore(std::unique_ptr<Connection> connection);
    std::unique_ptr<Connection> connection_;
    // While open, no file writer of this process writes over the store's files.
    OpenStoreFiles::Registration open_files_;
};

namespace fault_injection {

// For tests only: called before each write transaction of every RunStore, on the thread that
// writes, with its connection: a test sets SQLite's PRAGMA max_page_count there (SQLite then
// answers as a full disk, SQLITE_FULL, when the transaction needs a new page) or holds the
// write up, as a slow or stuck disk would. Null, the default: one atomic load per transaction.
using StoreWriteHook = void (*)(QSqlDatabase& connection);
void set_store_write_hook(StoreWriteHook hook);

}  // namespace fault_injection

}  // namespace scalelab
