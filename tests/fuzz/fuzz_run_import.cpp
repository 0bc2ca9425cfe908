// Fuzzes the `.scalelab.json` import (File > Import runs, `scalelab-cli runs import`) into a run
// store. Input: the file; corpus/run_import holds files as `runs export` writes them and a few
// broken ones. Besides crashes, it checks the import's promises: a refused file leaves the store
// as it was, and what the store then exports of an imported run imports again unchanged.

#include <QByteArray>
#include <QCoreApplication>
#include <QString>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <vector>

#include "fuzz_input.h"
#include "run_exchange.h"
#include "run_store.h"
#include "scratch_folder.h"

using namespace scalelab;

namespace {

RunStore& store() {
    static const fuzz::ScratchFolder folder;
    static const std::unique_ptr<RunStore> runs =
        RunStore::open(QString::fromStdString((folder.path() / "runs.sqlite").string()));
    return *runs;
}

}  // namespace

// Qt SQL loads its SQLite driver as a plugin, which needs an application object. It is never
// deleted: libFuzzer ends with exit(), and destroying it then would run after Qt's own
// statics are gone.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    [[maybe_unused]] static const auto* application = new QCoreApplication(*argc, *argv);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const QByteArray document =
        QByteArray::fromRawData(reinterpret_cast<const char*>(data), qsizetype(size));
    std::vector<std::int64_t> ids;
    try {
        ids = import_runs(store(), document);
    } catch (const ExchangeError&) {
        // A file refused with a message naming the run and the field: what import promises.
    } catch (const StoreError&) {
        // A run SQLite would not take: refused as a whole.
    }
    if (ids.empty()) {
        fuzz::require(store().list_runs().empty(), "an import that adds nothing leaves the store");
        return 0;
    }

    const QByteArray exported = export_runs(store(), ids);
    std::vector<std::int64_t> again;
    try {
        again = import_runs(store(), exported);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "%s\n", error.what());
        fuzz::require(false, "what the store exports of imported runs imports again");
    }
    fuzz::require(export_runs(store(), again) == exported,
                  "runs exported, imported and exported again are written the same");
    ids.insert(ids.end(), again.begin(), again.end());
    store().delete_runs(ids);
    return 0;
}
