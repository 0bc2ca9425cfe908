#pragma once

#include <QString>

#include <mutex>
#include <optional>
#include <vector>

namespace scalelab {

// A file no output may be written over, and what it is, for the message that refuses it:
// "the run store", "the run store's write-ahead log", "--config".
struct GuardedFile {
    QString path;
    QString what;
};

// A run store's files: the database and the journals SQLite keeps beside it (-wal, -shm,
// -journal), whether they exist now or not: an export written as S-wal would be read back by
// SQLite as the store's log.
std::vector<GuardedFile> run_store_files(const QString& store_path);

// The first of `guarded` that `output` is the same file as (same_file: links and relative paths
// count), or nothing.
std::optional<GuardedFile> guarded_file_at(const QString& output,
                                           const std::vector<GuardedFile>& guarded);

// "--metrics-out runs.sqlite is the run store: write it elsewhere": what refuses an output.
QString guarded_output_message(const QString& output, const GuardedFile& guarded);

// The run stores this process has open, whose files every writer of a file refuses to write
// over (write_whole_file, the metrics file): what keeps an export or a window's save from
// replacing the store it reads. RunStore adds its files while it is open. Thread-safe.
class OpenStoreFiles {
  public:
    // Guards a store's files until the returned registration is destroyed.
    class Registration {
      public:
        explicit Registration(const QString& store_path);
        ~Registration();
        Registration(const Registration&) = delete;
        Registration& operator=(const Registration&) = delete;

      private:
        QString store_path_;
    };

    // The open store file that `output` is, or nothing.
    static std::optional<GuardedFile> at(const QString& output);

  private:
    static std::mutex mutex_;
    static std::vector<QString> stores_;  // one entry per open RunStore
};

}  // namespace scalelab
