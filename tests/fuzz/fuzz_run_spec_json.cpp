// Fuzzes the run configuration JSON (`scalelab-cli train --config`, the store's specs, File >
// Open experiment). Input: the document; corpus/run_spec_json holds configurations as the app
// writes them and a few broken ones.

#include <QByteArray>
#include <QJsonDocument>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "error.h"
#include "fuzz_input.h"
#include "run_spec_json.h"

using namespace scalelab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const QByteArray document =
        QByteArray::fromRawData(reinterpret_cast<const char*>(data), qsizetype(size));
    try {
        const RunSpec spec = run_spec_from_json(document);
        if (spec.validate().empty())
            fuzz::require(std::isfinite(effective_lr(spec)) && effective_lr(spec) > 0,
                          "a valid spec has a positive, finite effective learning rate");
        // What the app saves of a spec it read must read back as the same spec.
        const QJsonObject written = run_spec_to_json(spec);
        const RunSpec reread = run_spec_from_json(QJsonDocument(written).toJson());
        fuzz::require(run_spec_to_json(reread) == written,
                      "a spec written as JSON reads back unchanged");
    } catch (const Error&) {
        // A document refused with the list of its problems: what the reader promises.
    }
    return 0;
}
