// Fuzzes the run store's reader on a damaged file: `runs list`, `show` and `export` open a store
// as it is (StoreAccess::Read), whatever another program, a cut copy or a failing disk left.
// Input: the store file; corpus/run_store holds small stores as scalelab-cli records them: two of
// schema 3 (upgraded as they open) and a group of two runs of schema 4.
// Besides crashes, it checks the reader's promises: a store refused or found damaged is never
// changed, a damaged store names each run as readable or not, and a run named readable loads and
// exports.

#include <QBuffer>
#include <QCoreApplication>
#include <QFile>
#include <QString>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "fuzz_input.h"
#include "run_exchange.h"
#include "run_store.h"
#include "scratch_folder.h"

using namespace scalelab;

namespace {

const fuzz::ScratchFolder& folder() {
    static const fuzz::ScratchFolder scratch;
    return scratch;
}

QByteArray file_bytes(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

bool contains(const std::vector<std::int64_t>& ids, std::int64_t id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Everything the read commands do with a store, checked against what damage() says.
void read_everything(RunStore& store) {
    const std::optional<StoreDamage> damage = store.check_integrity();
    const std::vector<StoredRun> runs = store.list_runs();
    for (const StoredRun& run : runs) {
        if (damage)
            fuzz::require(contains(damage->readable_runs, run.id) ||
                              contains(damage->unreadable_runs, run.id),
                          "a damaged store names each listed run readable or not");
        const bool readable = !damage || contains(damage->readable_runs, run.id);
        try {
            store.load_record(run.id);
            export_runs(store, {run.id});
        } catch (const StoreError&) {
            fuzz::require(!readable, "a run said to read in full loads and exports");
        }
    }
}

}  // namespace

// Qt SQL loads its SQLite driver as a plugin, which needs an application object; never deleted
// (see fuzz_run_import.cpp).
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    [[maybe_unused]] static const auto* application = new QCoreApplication(*argc, *argv);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    folder().clear();
    const QString path = QString::fromStdString((folder().path() / "runs.sqlite").string());
    const QByteArray input(reinterpret_cast<const char*>(data), qsizetype(size));
    {
        QFile file(path);
        fuzz::require(file.open(QIODevice::WriteOnly) && file.write(input) == input.size(),
                      "the scratch folder takes the input");
    }
    // A sound store may be upgraded or have its dead runs marked as it opens; any other is
    // left exactly as it was.
    bool left_alone = true;
    try {
        std::unique_ptr<RunStore> store = RunStore::open(path, StoreAccess::Read);
        left_alone = store->damage().has_value();
        read_everything(*store);
        left_alone = left_alone || store->damage().has_value();
    } catch (const StoreError&) {
        // Not a store, or one too damaged to list: refused with a message, as the CLI says.
    }
    if (left_alone)
        fuzz::require(file_bytes(path) == input, "a store refused or damaged is never changed");
    return 0;
}
